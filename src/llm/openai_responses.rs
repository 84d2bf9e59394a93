//! The OpenAI Responses API's wire (`POST {base}/responses`): the body built in
//! `responses_body`, and the reader of the streamed events into a [`ChatResponse`] — text,
//! function calls, and reasoning items (their summary shown, their encrypted content kept to
//! send back). The client around it is the one every wire shares (`client`).
//!
//! A response is complete only at `response.completed` (or `response.incomplete`, when it hit
//! the output cap); a stream that ends before is discarded and retried like any transient
//! failure. One call is one HTTP request; retries belong to `retry`. Never logs headers or the
//! key.

use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::client::{Client, Wire};
use super::endpoint::{Endpoint, KeyHeader, StreamReader};
use super::http::{self, Api, ClientSetupError};
use super::responses_body::{self, BodyCache};
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, LlmError, StopReason, StreamEvent};
use crate::config::{ProviderKind, RetryConfig, Secret};
use crate::conversation::{Block, Message, Role, Thinking, ThinkingSource, ToolCall, Usage};

const API: Api = Api { provider: "OpenAI", key_var: "OPENAI_API_KEY" };

/// Talks to `{base}/responses`.
pub type OpenAiResponsesClient = Client<Responses>;

/// The Responses API on the wire.
pub struct Responses {
    /// The messages of recent requests as serialised, so each is written once.
    body_cache: Mutex<BodyCache>,
}

impl OpenAiResponsesClient {
    /// `base_url` like `https://api.openai.com/v1`.
    pub fn new(
        base_url: &str,
        api_key: Option<Secret>,
        retry: &RetryConfig,
    ) -> Result<OpenAiResponsesClient, ClientSetupError> {
        let endpoint = Endpoint::new(base_url, "/responses", API, api_key.as_ref(), KeyHeader::Bearer, retry)?;
        Ok(Client::speaking(endpoint, Responses { body_cache: Mutex::default() }))
    }
}

impl Wire for Responses {
    const CLIENT: &'static str = "OpenAiResponsesClient";
    type Decoder = StreamState;

    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiResponses
    }

    fn encode(&self, request: &ChatRequest, buffer: Vec<u8>) -> (Vec<u8>, HeaderMap) {
        let mut cache = self.body_cache.lock().unwrap_or_else(|p| p.into_inner());
        (responses_body::encode(request, &mut cache, buffer), HeaderMap::new())
    }

    fn decoder(&self, request: &ChatRequest) -> StreamState {
        StreamState::new(&request.model)
    }

    fn finish(&self, state: StreamState, url: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        state.finish(url, &request.model)
    }
}

// ---------------------------------------------------------------------------------------------
// Streamed response

/// One output item, by its `output_index`.
#[derive(Debug)]
enum Item {
    Message(String),
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
    Reasoning {
        id: Option<String>,
        summary: Vec<String>,
        encrypted: String,
    },
    /// Built-in tools and item types added after this client was written.
    Other,
}

/// Everything received so far of one response.
pub struct StreamState {
    model: String,
    items: BTreeMap<u64, Item>,
    usage: Usage,
    stop: Option<StopReason>,
    finished: bool,
    /// Events that carried content or moved the response on.
    progress: u64,
}

impl StreamReader for StreamState {
    /// Takes one event; `Ok(true)` once the response is complete.
    fn handle(&mut self, event: &SseEvent, events: &UnboundedSender<StreamEvent>) -> Result<bool, LlmError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            LlmError::transient(format!(
                "OpenAI sent a `{}` event that is not valid JSON ({e}): {}",
                event.event,
                http::quote(&event.data)
            ))
        })?;
        let kind = data["type"].as_str().unwrap_or(&event.event).to_string();
        if kind.starts_with("response.") {
            self.progress += 1;
        }
        let index = data["output_index"].as_u64().unwrap_or(0);
        match kind.as_str() {
            "response.created" | "response.in_progress" => self.take_model(&data["response"]),
            "response.output_item.added" => {
                let item = &data["item"];
                if item["type"] == "function_call" {
                    let id = item["call_id"].as_str().unwrap_or("").to_string();
                    let name = item["name"].as_str().unwrap_or("").to_string();
                    let _ = events.send(StreamEvent::ToolCallStarted { id, name });
                }
                self.items.insert(index, parse_item(item));
            }
            "response.output_text.delta" => {
                let piece = data["delta"].as_str().unwrap_or("");
                if !piece.is_empty() {
                    let _ = events.send(StreamEvent::TextDelta(piece.to_string()));
                    match self.items.entry(index).or_insert_with(|| Item::Message(String::new())) {
                        Item::Message(text) => text.push_str(piece),
                        Item::Call { .. } | Item::Reasoning { .. } | Item::Other => {}
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Item::Call { arguments, .. }) = self.items.get_mut(&index) {
                    arguments.push_str(data["delta"].as_str().unwrap_or(""));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let piece = data["delta"].as_str().unwrap_or("");
                if !piece.is_empty() {
                    let _ = events.send(StreamEvent::ThinkingDelta(piece.to_string()));
                }
            }
            // A new summary paragraph: shown apart from the last one.
            "response.reasoning_summary_part.added" if data["summary_index"].as_u64().is_some_and(|i| i > 0) => {
                let _ = events.send(StreamEvent::ThinkingDelta("\n\n".to_string()));
            }
            // The complete item replaces what its deltas built.
            "response.output_item.done" => {
                self.items.insert(index, parse_item(&data["item"]));
            }
            "response.completed" => {
                self.take_model(&data["response"]);
                self.take_completed(&data["response"]);
                self.finished = true;
                return Ok(true);
            }
            "response.incomplete" => {
                self.take_model(&data["response"]);
                self.take_completed(&data["response"]);
                let reason = data["response"]["incomplete_details"]["reason"].as_str().unwrap_or("incomplete");
                self.stop = Some(match reason {
                    "max_output_tokens" => StopReason::MaxTokens,
                    "content_filter" => StopReason::Refusal,
                    other => StopReason::Other(other.to_string()),
                });
                self.finished = true;
                return Ok(true);
            }
            "response.failed" => return Err(failure(&data["response"]["error"])),
            "error" => return Err(failure(&data)),
            // Part and done events whose content arrives whole in `output_item.done`, and
            // event types added after this client was written.
            _ => {}
        }
        Ok(false)
    }

    fn progress(&self) -> u64 {
        self.progress
    }
}

impl StreamState {
    fn new(requested_model: &str) -> StreamState {
        StreamState {
            model: requested_model.to_string(),
            items: BTreeMap::new(),
            usage: Usage::default(),
            stop: None,
            finished: false,
            progress: 0,
        }
    }

    fn take_model(&mut self, response: &Value) {
        if let Some(model) = response["model"].as_str().filter(|m| !m.is_empty()) {
            self.model = model.to_string();
        }
    }

    /// Usage (input counts cached tokens; cairn keeps them apart), and any item of the final
    /// output that no `output_item.done` delivered.
    fn take_completed(&mut self, response: &Value) {
        let usage = &response["usage"];
        let input = usage["input_tokens"].as_u64().unwrap_or(0);
        let cached = usage["input_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0).min(input);
        self.usage = Usage {
            input_tokens: input - cached,
            output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
            cache_read_input_tokens: cached,
            cache_creation_input_tokens: 0,
        };
        if let Some(output) = response["output"].as_array() {
            for (i, item) in output.iter().enumerate() {
                self.items.entry(i as u64).or_insert_with(|| parse_item(item));
            }
        }
    }

    /// The response, if the stream reached its end; otherwise the partial is discarded.
    fn finish(self, url: &str, requested_model: &str) -> Result<ChatResponse, LlmError> {
        if !self.finished {
            return Err(LlmError::transient(format!(
                "the stream from {url} ended before the response was complete; the partial answer was discarded"
            )));
        }
        let mut content = Vec::new();
        for item in self.items.into_values() {
            match item {
                Item::Message(text) if text.is_empty() => {}
                Item::Message(text) => content.push(Block::Text { text }),
                Item::Call { call_id, name, arguments } => {
                    content.push(Block::ToolCall(ToolCall { id: call_id, name, arguments }))
                }
                Item::Reasoning { id, summary, encrypted } => content.push(Block::Thinking(Thinking {
                    source: ThinkingSource::OpenAiResponses,
                    model: requested_model.to_string(),
                    text: summary.join("\n\n"),
                    signature: encrypted,
                    redacted: false,
                    id,
                    summary,
                })),
                Item::Other => {}
            }
        }
        let message = Message { role: Role::Assistant, content };
        let stop =
            self.stop.unwrap_or(if message.has_tool_calls() { StopReason::ToolUse } else { StopReason::EndTurn });
        Ok(ChatResponse { message, stop, usage: self.usage, model: self.model, timings: None })
    }
}

fn parse_item(item: &Value) -> Item {
    match item["type"].as_str().unwrap_or("") {
        "message" => Item::Message(
            item["content"]
                .as_array()
                .map(|parts| {
                    parts.iter().filter(|p| p["type"] == "output_text").filter_map(|p| p["text"].as_str()).collect()
                })
                .unwrap_or_default(),
        ),
        "function_call" => Item::Call {
            call_id: item["call_id"].as_str().unwrap_or("").to_string(),
            name: item["name"].as_str().unwrap_or("").to_string(),
            arguments: item["arguments"].as_str().unwrap_or("").to_string(),
        },
        "reasoning" => Item::Reasoning {
            id: item["id"].as_str().map(str::to_string),
            summary: item["summary"]
                .as_array()
                .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).map(str::to_string).collect())
                .unwrap_or_default(),
            encrypted: item["encrypted_content"].as_str().unwrap_or("").to_string(),
        },
        _ => Item::Other,
    }
}

/// A failed response (`response.failed`) or an `error` event, classified by its code like the
/// HTTP error it stands for.
fn failure(error: &Value) -> LlmError {
    let code = error["code"].as_str().or(error["type"].as_str()).unwrap_or("");
    let status = match code {
        "context_length_exceeded" => {
            let message = error["message"].as_str().unwrap_or("the input is too long").to_string();
            return LlmError::ContextLength { message };
        }
        "rate_limit_exceeded" | "rate_limit_error" => 429,
        "invalid_prompt" | "invalid_request_error" | "invalid_image" | "invalid_image_format" => 400,
        // Payment required: another attempt will not help.
        "insufficient_quota" => 402,
        "server_is_overloaded" | "slow_down" => 503,
        // server_error, vector_store_timeout and anything new: a server-side failure.
        _ => 500,
    };
    let body = serde_json::json!({"error": error}).to_string();
    http::status_error(API, status, None, &body)
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
