//! The OpenAI-compatible chat completions wire (OpenAI, OpenRouter, Ollama, llama-server, vLLM,
//! LM Studio): the request body (built in `openai_body`), and the reader of the streamed chunks
//! into a [`ChatResponse`], normalising usage so cached tokens are not counted twice. The client
//! around it is the one every wire shares (`client`).
//!
//! One call is one HTTP request; retries belong to `retry`. Never logs headers or the key.

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::client::{Client, Wire};
use super::endpoint::{Endpoint, KeyHeader, StreamReader};
use super::http::{self, Api, ClientSetupError};
use super::openai_body::{self, BodyCache, Dialect};
use super::sse::SseEvent;
use super::timings::ServerTimings;
use super::{ChatRequest, ChatResponse, LlmError, ServedWindow, StopReason, StreamEvent};
use crate::config::{ProviderKind, RetryConfig, Secret};
use crate::conversation::{Block, Message, Role, ToolCall, Usage};

const KEY_VAR: &str = "OPENAI_API_KEY";
/// The official endpoint wants `max_completion_tokens`; compatible servers know `max_tokens`.
const OFFICIAL_HOST: &str = "api.openai.com";
/// OpenRouter forwards `cache_control` to the Anthropic models it serves.
const OPENROUTER_HOST: &str = "openrouter.ai";

/// Talks to `{base}/chat/completions`.
pub type OpenAiClient = Client<ChatCompletions>;

/// Chat completions on the wire, as the official endpoint or a compatible server speaks them.
pub struct ChatCompletions {
    /// `…/v1`, for the server's own endpoints beside it.
    base: String,
    /// The messages of recent requests as serialised, so each is written once.
    body_cache: Mutex<BodyCache>,
    api: Api,
    official: bool,
    openrouter: bool,
    /// `cache_control` in config.toml: whether this endpoint honours breakpoints (unset: only
    /// OpenRouter, for Anthropic models).
    cache_control: Option<bool>,
}

impl OpenAiClient {
    /// `base_url` like `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. Without a
    /// key no `Authorization` header is sent (local servers need none).
    pub fn new(base_url: &str, api_key: Option<Secret>, retry: &RetryConfig) -> Result<OpenAiClient, ClientSetupError> {
        let base = base_url.trim_end_matches('/');
        let host = http::parse_base_url(base)?.host_str().map(str::to_ascii_lowercase);
        let official = host.as_deref() == Some(OFFICIAL_HOST);
        let openrouter = host.as_deref() == Some(OPENROUTER_HOST);
        let provider = if official { "OpenAI" } else { "the OpenAI-compatible server" };
        let api = Api { provider, key_var: KEY_VAR };
        let endpoint = Endpoint::new(base, "/chat/completions", api, api_key.as_ref(), KeyHeader::Bearer, retry)?;
        let wire = ChatCompletions {
            base: base.to_string(),
            body_cache: Mutex::default(),
            api,
            official,
            openrouter,
            cache_control: None,
        };
        Ok(Client::speaking(endpoint, wire))
    }

    /// Says whether the endpoint honours `cache_control` breakpoints (`cache_control` in
    /// config.toml); unset, only OpenRouter's Anthropic models are given them.
    pub fn with_cache_control(mut self, honoured: Option<bool>) -> OpenAiClient {
        self.wire.cache_control = honoured;
        self
    }
}

impl Wire for ChatCompletions {
    const CLIENT: &'static str = "OpenAiClient";
    type Decoder = StreamState;

    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn encode(&self, request: &ChatRequest, buffer: Vec<u8>) -> (Vec<u8>, HeaderMap) {
        let mut cache = self.body_cache.lock().unwrap_or_else(|p| p.into_inner());
        let dialect = Dialect { official: self.official };
        (openai_body::encode(request, dialect, &mut cache, buffer), HeaderMap::new())
    }

    fn decoder(&self, request: &ChatRequest) -> StreamState {
        StreamState::new(&request.model, self.api)
    }

    fn finish(&self, state: StreamState, url: &str, _request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        state.finish(url)
    }

    fn honours_cache_control(&self, model: &str) -> bool {
        self.cache_control.unwrap_or(self.openrouter && model.to_ascii_lowercase().starts_with("anthropic/"))
    }

    fn served_window<'a>(&'a self, endpoint: &'a Endpoint, model: &'a str) -> BoxFuture<'a, ServedWindow> {
        Box::pin(async move {
            if self.official {
                return ServedWindow::Unknown;
            }
            super::discovery::served_window(endpoint.http(), &self.base, endpoint.key(), model).await
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Streamed response

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
    started: bool,
}

/// Everything received so far of one response.
pub struct StreamState {
    api: Api,
    model: String,
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    stop: Option<StopReason>,
    usage: Usage,
    /// llama-server's account of the request, when it gives one.
    timings: Option<ServerTimings>,
    done: bool,
    /// Chunks that carried content (text, tool calls, reasoning, the ending): empty
    /// keep-alive chunks do not count.
    progress: u64,
}

impl StreamReader for StreamState {
    /// Takes one event; `Ok(true)` at `[DONE]`.
    fn handle(&mut self, event: &SseEvent, events: &UnboundedSender<StreamEvent>) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if data == "[DONE]" {
            self.progress += 1;
            self.done = true;
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::transient(format!(
                "{} sent a chunk that is not valid JSON ({e}): {}",
                self.api.provider,
                http::quote(data)
            ))
        })?;
        if !chunk["error"].is_null() {
            return Err(chunk_error(self.api, &chunk["error"], data));
        }
        if let Some(model) = chunk["model"].as_str().filter(|m| !m.is_empty()) {
            self.model = model.to_string();
        }
        if let Some(choice) = chunk["choices"].get(0) {
            let delta = &choice["delta"];
            let carries = |key: &str| match &delta[key] {
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => false,
            };
            if ["content", "tool_calls", "reasoning_content", "reasoning"].into_iter().any(carries)
                || !choice["finish_reason"].is_null()
            {
                self.progress += 1;
            }
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                self.text.push_str(text);
                let _ = events.send(StreamEvent::TextDelta(text.to_string()));
            }
            // Reasoning text (DeepSeek's and vLLM's `reasoning_content`, OpenRouter's
            // `reasoning`) is shown while it streams; this wire has no way to send it back.
            for key in ["reasoning_content", "reasoning"] {
                if let Some(thought) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    let _ = events.send(StreamEvent::ThinkingDelta(thought.to_string()));
                }
            }
            if let Some(calls) = delta["tool_calls"].as_array() {
                for call in calls {
                    self.tool_call_delta(call, events);
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.stop = Some(stop_reason(reason));
            }
        }
        if chunk["usage"].is_object() {
            self.progress += 1;
            self.usage = normalised_usage(&chunk["usage"]);
        }
        if let Some(timings) = ServerTimings::of_chunk(&chunk) {
            self.timings = Some(timings);
        }
        Ok(false)
    }

    fn progress(&self) -> u64 {
        self.progress
    }
}

impl StreamState {
    fn new(requested_model: &str, api: Api) -> StreamState {
        StreamState {
            api,
            model: requested_model.to_string(),
            text: String::new(),
            calls: BTreeMap::new(),
            stop: None,
            usage: Usage::default(),
            timings: None,
            done: false,
            progress: 0,
        }
    }

    fn tool_call_delta(&mut self, delta: &Value, events: &UnboundedSender<StreamEvent>) {
        let index = delta["index"].as_u64().unwrap_or_else(|| {
            // `index` is required by the spec; without it, a name starts a new call and anything
            // else continues the latest one.
            let last = self.calls.keys().next_back().copied();
            let starts_call = delta["function"]["name"].as_str().is_some_and(|n| !n.is_empty());
            match last {
                Some(last) if starts_call => last + 1,
                Some(last) => last,
                None => 0,
            }
        });
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta["id"].as_str().filter(|id| !id.is_empty()) {
            call.id.get_or_insert_with(|| id.to_string());
        }
        if let Some(name) = delta["function"]["name"].as_str().filter(|_| call.name.is_empty()) {
            call.name = name.to_string();
        }
        if let Some(piece) = delta["function"]["arguments"].as_str() {
            call.arguments.push_str(piece);
        }
        if !call.started && !call.name.is_empty() {
            call.started = true;
            let id = call.id.get_or_insert_with(generated_call_id).clone();
            let _ = events.send(StreamEvent::ToolCallStarted { id, name: call.name.clone() });
        }
    }

    /// The response, if the stream ended properly (`[DONE]` or a finish reason); otherwise the
    /// partial is discarded.
    fn finish(self, url: &str) -> Result<ChatResponse, LlmError> {
        if !self.done && self.stop.is_none() {
            return Err(LlmError::transient(format!(
                "the stream from {url} ended before the response was complete; the partial answer was discarded"
            )));
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        for call in self.calls.into_values() {
            let id = call.id.unwrap_or_else(generated_call_id);
            content.push(Block::ToolCall(ToolCall { id, name: call.name, arguments: call.arguments }));
        }
        let message = Message { role: Role::Assistant, content };
        let stop =
            self.stop.unwrap_or(if message.has_tool_calls() { StopReason::ToolUse } else { StopReason::EndTurn });
        // A local server's cache figures are its own timings.
        let usage = self.timings.map_or(self.usage, |t| t.usage(&self.usage));
        Ok(ChatResponse { message, stop, usage, model: self.model, timings: self.timings })
    }
}

/// Some local servers send tool calls without ids; results must still name their call, and ids
/// must not repeat within a session, so they are random rather than counted.
fn generated_call_id() -> String {
    format!("call_{}", fastrand::u64(1_000_000_000..u64::MAX))
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// OpenAI counts cached tokens inside `prompt_tokens`; cairn's [`Usage`] keeps them apart.
/// Endpoints that cache by breakpoints report what they wrote too (OpenRouter's
/// `cache_write_tokens`, LiteLLM's `cache_creation_input_tokens`), also inside the prompt.
fn normalised_usage(usage: &Value) -> Usage {
    let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
    let details = &usage["prompt_tokens_details"];
    let cached = details["cached_tokens"]
        .as_u64()
        .or_else(|| usage["prompt_cache_hit_tokens"].as_u64()) // DeepSeek's spelling
        .unwrap_or(0)
        .min(prompt);
    let written = details["cache_write_tokens"]
        .as_u64()
        .or_else(|| usage["cache_creation_input_tokens"].as_u64())
        .unwrap_or(0)
        .min(prompt - cached);
    Usage {
        input_tokens: prompt - cached - written,
        output_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: written,
    }
}

/// An `error` object inside the stream, classified like the HTTP error it stands for.
fn chunk_error(api: Api, error: &Value, raw: &str) -> LlmError {
    let status = error["code"]
        .as_u64()
        .or_else(|| error["status"].as_u64())
        .filter(|s| (400..600).contains(s))
        .map(|s| s as u16)
        .unwrap_or_else(|| match error["type"].as_str().unwrap_or("") {
            "invalid_request_error" => 400,
            "authentication_error" => 401,
            "rate_limit_error" | "rate_limit_exceeded" | "tokens" | "requests" => 429,
            _ => 500,
        });
    http::status_error(api, status, None, raw)
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
