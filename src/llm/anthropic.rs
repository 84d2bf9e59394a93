//! The Anthropic Messages API client: builds the request body (role alternation, tool results
//! grouped into user messages, cache breakpoints) and reads the streamed events back into a
//! [`ChatResponse`].
//!
//! One call is one HTTP request; retries belong to `retry`. Never logs headers or the key.

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::http::{self, Api, ClientSetupError};
use super::sse::{SseEvent, SseStream, StreamLimits};
use super::{ChatRequest, ChatResponse, LlmError, Provider, StopReason, StreamEvent, SystemBlock};
use crate::config::{CacheTtl, ProviderKind, Redactor, RetryConfig, Secret};
use crate::conversation::{Block, Message, Role, ToolCall, Usage};

const API: Api = Api { provider: "Anthropic", key_var: "ANTHROPIC_API_KEY" };
const API_VERSION: &str = "2023-06-01";
/// Anthropic refuses a request with more than four `cache_control` markers.
const MAX_BREAKPOINTS: usize = 4;
/// System breakpoints honoured: end of the static prompt and end of the frozen memory block.
const MAX_SYSTEM_BREAKPOINTS: usize = 2;
/// Stands in for a message that would otherwise be empty, which the API rejects.
const NO_CONTENT: &str = "(no content)";

/// Talks to `{base}/v1/messages`.
pub struct AnthropicClient {
    http: reqwest::Client,
    url: String,
    key: Option<HeaderValue>,
    /// The key, to keep out of error texts.
    redactor: Redactor,
    limits: StreamLimits,
}

impl std::fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicClient").field("url", &self.url).field("has_key", &self.key.is_some()).finish()
    }
}

impl AnthropicClient {
    /// `base_url` like `https://api.anthropic.com`. A missing key is sent as no header at all:
    /// the server's 401 then tells the user to set `ANTHROPIC_API_KEY`.
    pub fn new(
        base_url: &str,
        api_key: Option<Secret>,
        retry: &RetryConfig,
    ) -> Result<AnthropicClient, ClientSetupError> {
        let base = base_url.trim_end_matches('/');
        Ok(AnthropicClient {
            http: http::build_client(base)?,
            url: format!("{base}/v1/messages"),
            key: http::key_header(api_key.as_ref(), API.key_var, "")?,
            redactor: Redactor::for_key(API.key_var, api_key.as_ref()),
            limits: StreamLimits::from_config(retry),
        })
    }

    async fn run(
        &self,
        request: &ChatRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        let body = request_body(request);
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = &self.key {
            headers.insert("x-api-key", key.clone());
        }
        let response = http::post_stream(&self.http, API, &self.url, headers, &body, self.limits.idle, cancel).await?;
        let mut sse = SseStream::new(response, self.limits, &self.url);
        let mut state = StreamState::new(&request.model);
        while let Some(event) = sse.next(cancel).await? {
            let before = state.progress;
            let done = state.handle(&event, events)?;
            if state.progress != before {
                sse.progressed();
            }
            if done {
                break;
            }
        }
        state.finish(&self.url)
    }
}

impl Provider for AnthropicClient {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        events: &'a UnboundedSender<StreamEvent>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { self.run(request, events, cancel).await.map_err(|e| e.redacted(&self.redactor)) })
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }
}

// ---------------------------------------------------------------------------------------------
// Request body

/// The JSON body of a streamed Messages request.
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    let marker = request.cache.map(cache_control);
    let (system, system_marks) = system_blocks(&request.system, marker.as_ref());
    let mut messages = wire_messages(&request.messages);
    if let Some(marker) = &marker {
        // The rolling window: the newest messages get whatever the system prompt left over.
        let budget = MAX_BREAKPOINTS - system_marks;
        for message in messages.iter_mut().rev().take(budget) {
            if let Some(last) = message.content.last_mut() {
                last["cache_control"] = marker.clone();
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "stream": true,
        "messages": messages.into_iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The system prompt as text blocks, with at most [`MAX_SYSTEM_BREAKPOINTS`] markers (the
/// first ones: the most stable prefixes). Returns the blocks and the markers placed.
fn system_blocks(system: &[SystemBlock], marker: Option<&Value>) -> (Vec<Value>, usize) {
    let mut blocks: Vec<(String, bool)> = Vec::new();
    for block in system {
        if !block.text.is_empty() {
            blocks.push((block.text.clone(), block.cache_breakpoint));
        } else if let Some(previous) = blocks.last_mut() {
            // An empty block cannot be sent, but the prefix it ends still can be cached.
            previous.1 |= block.cache_breakpoint;
        }
    }
    let mut marks = 0;
    let out = blocks
        .into_iter()
        .map(|(text, breakpoint)| {
            let mut value = json!({"type": "text", "text": text});
            if let Some(marker) = marker.filter(|_| breakpoint && marks < MAX_SYSTEM_BREAKPOINTS) {
                value["cache_control"] = marker.clone();
                marks += 1;
            }
            value
        })
        .collect();
    (out, marks)
}

struct WireMessage {
    role: &'static str,
    content: Vec<Value>,
}

/// Messages on the wire: tool results travel in user messages, and neighbours of the same role
/// are merged so roles strictly alternate.
fn wire_messages(messages: &[Message]) -> Vec<WireMessage> {
    let mut out: Vec<WireMessage> = Vec::new();
    for message in messages {
        let role = match message.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
        };
        let blocks = message.content.iter().filter_map(wire_block);
        match out.last_mut() {
            Some(previous) if previous.role == role => previous.content.extend(blocks),
            _ => out.push(WireMessage { role, content: blocks.collect() }),
        }
    }
    for message in &mut out {
        // The API wants tool results first in a user message; a stable sort keeps both orders.
        message.content.sort_by_key(|b| b["type"] != "tool_result");
        if message.content.is_empty() {
            message.content.push(json!({"type": "text", "text": NO_CONTENT}));
        }
    }
    out
}

fn wire_block(block: &Block) -> Option<Value> {
    match block {
        Block::Text { text } if text.is_empty() => None,
        Block::Text { text } => Some(json!({"type": "text", "text": text})),
        Block::ToolCall(call) => {
            // Arguments that do not parse were already reported to the model as an error result;
            // the call itself must still be sent with an object so its result has a partner.
            let input = call.parsed_arguments().unwrap_or_else(|_| json!({}));
            Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
        }
        Block::ToolResult(result) => {
            let mut value = json!({"type": "tool_result", "tool_use_id": result.call_id});
            // `content` is optional; an empty string would be an empty text block.
            if !result.content.is_empty() {
                value["content"] = Value::String(result.content.clone());
            }
            if result.is_error {
                value["is_error"] = Value::Bool(true);
            }
            Some(value)
        }
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
    /// Thinking and server-side blocks: not part of the message we keep.
    Ignored,
}

/// Everything received so far of one response.
struct StreamState {
    model: String,
    usage: Usage,
    blocks: BTreeMap<u64, PartialBlock>,
    stop: Option<StopReason>,
    finished: bool,
    /// Events that carried content or moved the message on; `ping` does not count.
    progress: u64,
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
                    // thinking_delta, signature_delta, citations_delta, and deltas of ignored blocks.
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

    /// The response, if the stream reached `message_stop`; otherwise the partial is discarded.
    fn finish(self, url: &str) -> Result<ChatResponse, LlmError> {
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
                PartialBlock::Ignored => {}
            }
        }
        let message = Message { role: Role::Assistant, content };
        let stop =
            self.stop.unwrap_or(if message.has_tool_calls() { StopReason::ToolUse } else { StopReason::EndTurn });
        Ok(ChatResponse { message, stop, usage: self.usage, model: self.model })
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
