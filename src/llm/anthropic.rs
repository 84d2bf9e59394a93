//! The Anthropic Messages API's wire: the request body (built in `anthropic_body`) with its
//! headers, and the reader of the streamed events into a [`ChatResponse`]. The client around it
//! is the one every wire shares (`client`).
//!
//! One call is one HTTP request; retries belong to `retry`. Never logs headers or the key.

use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::anthropic_body::{self, BodyCache};
use super::client::{Client, Wire};
use super::endpoint::{Endpoint, KeyHeader, StreamReader};
use super::http::{self, Api, ClientSetupError};
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, LlmError, StopReason, StreamEvent};
use crate::config::{ProviderKind, RetryConfig, Secret};
use crate::conversation::{Block, Message, Role, Thinking, ThinkingSource, ToolCall, Usage};

const API: Api = Api { provider: "Anthropic", key_var: "ANTHROPIC_API_KEY" };
const API_VERSION: &str = "2023-06-01";

/// Talks to `{base}/v1/messages`.
pub type AnthropicClient = Client<Anthropic>;

/// The Messages API on the wire.
pub struct Anthropic {
    /// The messages of recent requests as serialised, so each is written once.
    body_cache: Mutex<BodyCache>,
}

impl AnthropicClient {
    /// `base_url` like `https://api.anthropic.com`. A missing key is sent as no header at all:
    /// the server's 401 then tells the user to set `ANTHROPIC_API_KEY`.
    pub fn new(
        base_url: &str,
        api_key: Option<Secret>,
        retry: &RetryConfig,
    ) -> Result<AnthropicClient, ClientSetupError> {
        let endpoint = Endpoint::new(base_url, "/v1/messages", API, api_key.as_ref(), KeyHeader::XApiKey, retry)?;
        Ok(Client::speaking(endpoint, Anthropic { body_cache: Mutex::default() }))
    }
}

impl Wire for Anthropic {
    const CLIENT: &'static str = "AnthropicClient";
    type Decoder = StreamState;

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn encode(&self, request: &ChatRequest, buffer: Vec<u8>) -> (Vec<u8>, HeaderMap) {
        let mut cache = self.body_cache.lock().unwrap_or_else(|p| p.into_inner());
        let encoded = anthropic_body::encode(request, &mut cache, buffer);
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if encoded.interleaved {
            headers.insert("anthropic-beta", HeaderValue::from_static(anthropic_body::INTERLEAVED_THINKING_BETA));
        }
        (encoded.body, headers)
    }

    fn decoder(&self, request: &ChatRequest) -> StreamState {
        StreamState::new(&request.model)
    }

    fn finish(&self, state: StreamState, url: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        state.finish(url, &request.model)
    }

    fn honours_cache_control(&self, _model: &str) -> bool {
        true
    }
}

// ---------------------------------------------------------------------------------------------
// Streamed response

enum PartialBlock {
    Text(String),
    ToolCall {
        id: String,
        name: String,
        json: String,
        start_input: Option<Value>,
    },
    Thinking {
        text: String,
        signature: String,
    },
    /// `redacted_thinking`: its `data`, kept to send back.
    Redacted(String),
    /// Server-side blocks: not part of the message we keep.
    Ignored,
}

/// Everything received so far of one response.
pub struct StreamState {
    model: String,
    usage: Usage,
    blocks: BTreeMap<u64, PartialBlock>,
    stop: Option<StopReason>,
    finished: bool,
    /// Events that carried content or moved the message on; `ping` does not count.
    progress: u64,
}

impl StreamReader for StreamState {
    /// Takes one event; `Ok(true)` once the message is complete.
    fn handle(&mut self, event: &SseEvent, events: &UnboundedSender<StreamEvent>) -> Result<bool, LlmError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            LlmError::transient(format!(
                "Anthropic sent a `{}` event that is not valid JSON ({e}): {}",
                event.event,
                http::quote(&event.data)
            ))
        })?;
        let kind = data["type"].as_str().unwrap_or(&event.event);
        if matches!(
            kind,
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
        ) {
            self.progress += 1;
        }
        let index = data["index"].as_u64().unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(model) = data["message"]["model"].as_str().filter(|m| !m.is_empty()) {
                    self.model = model.to_string();
                }
                merge_usage(&mut self.usage, &data["message"]["usage"]);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                let partial = match block["type"].as_str().unwrap_or("") {
                    "text" => {
                        let text = block["text"].as_str().unwrap_or("").to_string();
                        emit_text(events, &text);
                        PartialBlock::Text(text)
                    }
                    "thinking" => {
                        let text = block["thinking"].as_str().unwrap_or("").to_string();
                        emit_thinking(events, &text);
                        let signature = block["signature"].as_str().unwrap_or("").to_string();
                        PartialBlock::Thinking { text, signature }
                    }
                    "redacted_thinking" => PartialBlock::Redacted(block["data"].as_str().unwrap_or("").to_string()),
                    "tool_use" => {
                        let id = block["id"].as_str().unwrap_or("").to_string();
                        let name = block["name"].as_str().unwrap_or("").to_string();
                        let _ = events.send(StreamEvent::ToolCallStarted { id: id.clone(), name: name.clone() });
                        let start_input = block.get("input").filter(|v| !v.is_null()).cloned();
                        PartialBlock::ToolCall { id, name, json: String::new(), start_input }
                    }
                    _ => PartialBlock::Ignored,
                };
                self.blocks.insert(index, partial);
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (delta["type"].as_str().unwrap_or(""), self.blocks.get_mut(&index)) {
                    ("text_delta", Some(PartialBlock::Text(text))) => {
                        let piece = delta["text"].as_str().unwrap_or("");
                        text.push_str(piece);
                        emit_text(events, piece);
                    }
                    ("text_delta", None) => {
                        // Lenient: a delta for a block that was never opened still carries text.
                        let piece = delta["text"].as_str().unwrap_or("").to_string();
                        emit_text(events, &piece);
                        self.blocks.insert(index, PartialBlock::Text(piece));
                    }
                    ("input_json_delta", Some(PartialBlock::ToolCall { json, .. })) => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or(""));
                    }
                    ("thinking_delta", Some(PartialBlock::Thinking { text, .. })) => {
                        let piece = delta["thinking"].as_str().unwrap_or("");
                        text.push_str(piece);
                        emit_thinking(events, piece);
                    }
                    ("signature_delta", Some(PartialBlock::Thinking { signature, .. })) => {
                        signature.push_str(delta["signature"].as_str().unwrap_or(""));
                    }
                    // citations_delta, and deltas of ignored blocks.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop_reason(reason));
                }
                merge_usage(&mut self.usage, &data["usage"]);
            }
            "message_stop" => {
                self.finished = true;
                return Ok(true);
            }
            "error" => return Err(stream_error(&data, &event.data)),
            // ping, content_block_stop, and event types added after this client was written.
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
            usage: Usage::default(),
            blocks: BTreeMap::new(),
            stop: None,
            finished: false,
            progress: 0,
        }
    }

    /// The response, if the stream reached `message_stop`; otherwise the partial is discarded.
    fn finish(self, url: &str, requested_model: &str) -> Result<ChatResponse, LlmError> {
        if !self.finished {
            return Err(LlmError::transient(format!(
                "the stream from {url} ended before the response was complete; the partial answer was discarded"
            )));
        }
        let mut content = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                PartialBlock::Text(text) if text.is_empty() => {}
                PartialBlock::Text(text) => content.push(Block::Text { text }),
                PartialBlock::ToolCall { id, name, json, start_input } => {
                    let arguments = if !json.trim().is_empty() {
                        json
                    } else {
                        start_input.map_or_else(|| "{}".to_string(), |v| v.to_string())
                    };
                    content.push(Block::ToolCall(ToolCall { id, name, arguments }));
                }
                PartialBlock::Thinking { text, signature } => content.push(Block::Thinking(Thinking {
                    source: ThinkingSource::Anthropic,
                    model: requested_model.to_string(),
                    text,
                    signature,
                    redacted: false,
                    id: None,
                    summary: Vec::new(),
                })),
                PartialBlock::Redacted(data) => content.push(Block::Thinking(Thinking {
                    source: ThinkingSource::Anthropic,
                    model: requested_model.to_string(),
                    text: String::new(),
                    signature: data,
                    redacted: true,
                    id: None,
                    summary: Vec::new(),
                })),
                PartialBlock::Ignored => {}
            }
        }
        let message = Message { role: Role::Assistant, content };
        let stop =
            self.stop.unwrap_or(if message.has_tool_calls() { StopReason::ToolUse } else { StopReason::EndTurn });
        Ok(ChatResponse { message, stop, usage: self.usage, model: self.model, timings: None })
    }
}

fn emit_thinking(events: &UnboundedSender<StreamEvent>, text: &str) {
    if !text.is_empty() {
        let _ = events.send(StreamEvent::ThinkingDelta(text.to_string()));
    }
}

fn emit_text(events: &UnboundedSender<StreamEvent>, text: &str) {
    if !text.is_empty() {
        // A closed receiver only means nobody is watching; the response is still wanted.
        let _ = events.send(StreamEvent::TextDelta(text.to_string()));
    }
}

/// Usage numbers arrive in `message_start` and again (cumulatively) in `message_delta`; the
/// latest non-zero value of each field wins.
fn merge_usage(usage: &mut Usage, json: &Value) {
    let fields: [(&str, &mut u64); 4] = [
        ("input_tokens", &mut usage.input_tokens),
        ("output_tokens", &mut usage.output_tokens),
        ("cache_read_input_tokens", &mut usage.cache_read_input_tokens),
        ("cache_creation_input_tokens", &mut usage.cache_creation_input_tokens),
    ];
    for (name, slot) in fields {
        if let Some(value) = json[name].as_u64().filter(|v| *v > 0) {
            *slot = value;
        }
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// An `error` event mid-stream, classified by the HTTP status Anthropic documents for its type.
fn stream_error(data: &Value, raw: &str) -> LlmError {
    let status = match data["error"]["type"].as_str().unwrap_or("") {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        "timeout_error" => 504,
        // api_error and anything new: a server-side failure, worth another attempt.
        _ => 500,
    };
    http::status_error(API, status, None, raw)
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
