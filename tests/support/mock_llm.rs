//! A scripted mock LLM server for integration tests and manual runs
//! (`cargo run --example mock_llm`). It speaks the Anthropic Messages wire on `POST /v1/messages`
//! and the OpenAI chat-completions wire on `POST /v1/chat/completions`, over real HTTP and SSE,
//! in several chunks with an optional delay between them; `GET /v1/models` lists `mock-model`.
//!
//! Every request is recorded and validated against what the real APIs would refuse (see
//! `mock_validate.rs`); tests assert [`MockLlm::problems`] is empty. Replies come from a
//! [`Script`]: a responder consulted first, then a queue of turns and faults, one per request.
//!
//! Self-contained: its helpers are included below by path, so the example can include this file
//! alone.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[path = "mock_cache.rs"]
mod cache;
#[path = "mock_validate.rs"]
mod validate;
#[path = "mock_wire.rs"]
mod wire;

/// What the mock answers once the script has run out (and the request is flagged).
pub const EXHAUSTED_TEXT: &str = "(mock: script exhausted)";
/// The text a stream fault sends before it breaks.
pub const PARTIAL_TEXT: &str = "This answer will be cut short before it ends properly.";

/// Which API a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Wire {
    Anthropic,
    OpenAi,
}

/// One request as the mock saw it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub wire: Wire,
    pub path: String,
    /// Lower-case names; `x-api-key` and `authorization` as sent, so tests can check them.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    /// What the real API would have refused or what the script could not answer; empty is good.
    pub problems: Vec<String>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// `body.messages`, or nothing.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every `cache_control` marker anywhere in the body.
    pub fn cache_markers(&self) -> usize {
        validate::count_key(&self.body, "cache_control")
    }
}

/// One answer: a turn, or a fault that consumes the request without a proper answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Turn(Turn),
    Fault(Fault),
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Reply {
        Reply::Turn(turn)
    }
}

impl From<Fault> for Reply {
    fn from(fault: Fault) -> Reply {
        Reply::Fault(fault)
    }
}

/// A complete assistant turn, streamed in pieces.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<MockCall>,
    /// Reported usage; `None` estimates it from the request (characters / 4).
    pub usage: Option<MockUsage>,
    /// Stop reason in Anthropic's words (`end_turn`, `tool_use`, `max_tokens`, `refusal`, …),
    /// translated for the OpenAI wire; `None` means `tool_use` with calls, else `end_turn`.
    pub stop: Option<String>,
    /// Sent first as a thinking block (Anthropic) or `reasoning_content` (OpenAI); clients drop it.
    pub thinking: Option<String>,
}

impl Turn {
    pub fn text(text: impl Into<String>) -> Turn {
        Turn { text: text.into(), ..Turn::default() }
    }

    pub fn tool(name: impl Into<String>, arguments: Value) -> Turn {
        Turn::tools(vec![MockCall::new(name, arguments)])
    }

    pub fn tools(calls: Vec<MockCall>) -> Turn {
        Turn { tool_calls: calls, ..Turn::default() }
    }

    /// Text before the tool calls.
    pub fn with_text(mut self, text: impl Into<String>) -> Turn {
        self.text = text.into();
        self
    }

    pub fn with_usage(mut self, usage: MockUsage) -> Turn {
        self.usage = Some(usage);
        self
    }

    pub fn with_stop(mut self, stop: impl Into<String>) -> Turn {
        self.stop = Some(stop.into());
        self
    }

    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Turn {
        self.thinking = Some(thinking.into());
        self
    }
}

/// A tool call of a turn. `arguments` is sent as its JSON text; a JSON *string* is sent verbatim
/// as the raw arguments, so `json!("{\"path\": ")` sends arguments that do not parse.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MockCall {
    /// Defaults to a unique `toolu_mock_N` / `call_mock_N`.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
}

impl MockCall {
    pub fn new(name: impl Into<String>, arguments: Value) -> MockCall {
        MockCall { id: None, name: name.into(), arguments }
    }

    pub fn with_id(mut self, id: impl Into<String>) -> MockCall {
        self.id = Some(id.into());
        self
    }

    /// The arguments as the model would stream them.
    pub fn raw_arguments(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            Value::Null => "{}".to_string(),
            other => other.to_string(),
        }
    }
}

/// Usage in Anthropic's normalised terms; the OpenAI wire reports
/// `prompt_tokens = input + cache_read + cache_creation` with `cached_tokens = cache_read`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MockUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

/// A way for one request to fail. Each consumes one request, so "fault, then turn" exercises a
/// retry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Any status; `retry_after` in seconds (fractional allowed); `body` defaults to the wire's
    /// error shape for that status.
    Status {
        code: u16,
        #[serde(default)]
        retry_after: Option<f64>,
        #[serde(default)]
        body: Option<Value>,
    },
    /// 429 without `retry-after`.
    RateLimited,
    /// Anthropic: 529 `overloaded_error`; OpenAI: 503.
    Overloaded,
    /// 500.
    ServerError,
    /// 400 with the wire's real context-length error body.
    ContextLength,
    /// Part of a turn, then the connection is aborted.
    DropMidStream,
    /// Part of a turn, then the body ends cleanly without the end event.
    EndEarly,
    /// Part of a turn, a `data:` line that is not JSON, then the rest of the turn.
    MalformedEvent,
    /// All of the given turn (tool calls complete) except its ending event, then the
    /// connection is aborted: a response that must never be acted on.
    Truncated(Turn),
    /// Part of a turn, then an in-stream error event (Anthropic `overloaded_error`, OpenAI
    /// `server_error`).
    ErrorEvent,
    /// Part of a turn, then silence for five minutes (for idle-timeout tests).
    Stall,
    /// Part of a turn, then keep-alives forever (Anthropic `ping` events, SSE comments on the
    /// OpenAI wire) and no content.
    EndlessPings,
    /// Part of a turn, then more text forever: a response that never ends.
    EndlessText,
    /// No response at all for five minutes, then a 500 (for clients' response timeouts).
    Unresponsive,
}

type Responder = Box<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// What the mock will answer.
#[derive(Default)]
pub struct Script {
    replies: VecDeque<Reply>,
    responder: Option<Responder>,
    chunk_delay_ms: u64,
    props_n_ctx: Option<u64>,
    ollama_window: Option<u64>,
    models: Option<Vec<String>>,
    context_window: Option<u64>,
    simulate_cache: bool,
    evict_before: Option<usize>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    pub fn from_replies(replies: impl IntoIterator<Item = Reply>) -> Script {
        Script { replies: replies.into_iter().collect(), ..Script::default() }
    }

    pub fn reply(mut self, reply: impl Into<Reply>) -> Script {
        self.replies.push_back(reply.into());
        self
    }

    pub fn turn(self, turn: Turn) -> Script {
        self.reply(turn)
    }

    pub fn fault(self, fault: Fault) -> Script {
        self.reply(fault)
    }

    /// Consulted first for every request; `None` falls through to the queue.
    pub fn responder(mut self, f: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static) -> Script {
        self.responder = Some(Box::new(f));
        self
    }

    /// Pause between SSE events, so streaming and cancellation are observable.
    pub fn chunk_delay_ms(mut self, ms: u64) -> Script {
        self.chunk_delay_ms = ms;
        self
    }

    /// Report usage as a provider's prompt cache would: Anthropic's explicit breakpoints, or
    /// OpenAI's automatic prefix caching (see `mock_cache.rs`).
    pub fn simulate_cache(mut self) -> Script {
        self.simulate_cache = true;
        self
    }

    /// With [`Script::simulate_cache`]: drop every cached prefix just before request `n`
    /// (1-based), as a provider evicting its cache would.
    pub fn evict_cache_before(mut self, n: usize) -> Script {
        self.evict_before = Some(n);
        self
    }

    /// Behave like a model with this window: a request whose input (about a token per four
    /// characters of its JSON) plus `max_tokens` exceeds it is refused with the wire's real
    /// context-length error, and recorded as a problem.
    pub fn context_window(mut self, tokens: u64) -> Script {
        self.context_window = Some(tokens);
        self
    }

    /// Also serve llama-server's `GET /props` with this `n_ctx`.
    pub fn props_n_ctx(mut self, n_ctx: u64) -> Script {
        self.props_n_ctx = Some(n_ctx);
        self
    }

    /// Also serve Ollama's `GET /api/ps`: no model loaded until the first chat request, then
    /// every listed model, loaded with this `context_length`.
    pub fn ollama_window(mut self, context_length: u64) -> Script {
        self.ollama_window = Some(context_length);
        self
    }

    /// What `GET /v1/models` lists (default: `mock-model`).
    pub fn models(mut self, ids: &[&str]) -> Script {
        self.models = Some(ids.iter().map(|id| id.to_string()).collect());
        self
    }
}

struct Shared {
    context_window: Option<u64>,
    evict_before: Option<usize>,
    cache: Option<Mutex<cache::PrefixCache>>,
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    responder: Option<Responder>,
    chunk_delay: Duration,
    props_n_ctx: Option<u64>,
    ollama_window: Option<u64>,
    models: Vec<String>,
    next_id: AtomicU64,
    /// When each request's headers arrived and when its answer was handed over, in order.
    timings: Mutex<Vec<(std::time::Instant, std::time::Instant)>>,
}

/// A running mock; the server stops when this is dropped.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl MockLlm {
    /// Serves `script` on a free loopback port.
    pub async fn start(script: Script) -> MockLlm {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        MockLlm::bind(addr, script).await.expect("the mock LLM could not bind a loopback port")
    }

    pub async fn bind(addr: SocketAddr, script: Script) -> std::io::Result<MockLlm> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        // Frames go out as they are written, as real providers send them: with Nagle's
        // algorithm a small frame waits for the client's delayed ACK, 40 ms on Linux.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let shared = Arc::new(Shared {
            context_window: script.context_window,
            evict_before: script.evict_before,
            cache: script.simulate_cache.then(|| Mutex::new(cache::PrefixCache::default())),
            replies: Mutex::new(script.replies),
            requests: Mutex::new(Vec::new()),
            responder: script.responder,
            chunk_delay: Duration::from_millis(script.chunk_delay_ms),
            props_n_ctx: script.props_n_ctx,
            ollama_window: script.ollama_window,
            models: script.models.unwrap_or_else(|| vec!["mock-model".to_string()]),
            next_id: AtomicU64::new(1),
            timings: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/messages", post(anthropic))
            .route("/v1/chat/completions", post(openai))
            .route("/v1/models", get(models))
            .route("/props", get(props))
            .route("/api/ps", get(ollama_ps))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("mock LLM server stopped: {e}");
            }
        });
        Ok(MockLlm { addr, shared, server })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, as `ANTHROPIC_BASE_URL` is spelled.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, as `OPENAI_BASE_URL` is spelled.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("mock lock poisoned").clone()
    }

    /// Every problem of every request, each prefixed with its request number (1-based).
    pub fn problems(&self) -> Vec<String> {
        self.requests()
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.problems.iter().map(move |p| format!("request {} ({}): {p}", i + 1, r.path)))
            .collect()
    }

    /// Appends to the script while running.
    /// Let `by` pass on the prompt cache's clock (entries expire after their TTL).
    pub fn advance_cache_clock(&self, by: Duration) {
        if let Some(cache) = &self.shared.cache {
            cache.lock().expect("mock lock poisoned").offset += by;
        }
    }

    /// Drop every cached prefix, as a provider evicting its cache.
    pub fn evict_cache(&self) {
        if let Some(cache) = &self.shared.cache {
            cache.lock().expect("mock lock poisoned").evict();
        }
    }

    /// For each request: when its headers had arrived (the body may still be on the way), and
    /// when its answer was handed to the server to send (the frames go out at once unless a
    /// chunk delay is set). The gap between one answer and the next request is the time the
    /// client spent between them, the upload of the request body aside.
    pub fn timings(&self) -> Vec<(std::time::Instant, std::time::Instant)> {
        self.shared.timings.lock().expect("mock lock poisoned").clone()
    }

    pub fn push(&self, reply: impl Into<Reply>) {
        self.shared.replies.lock().expect("mock lock poisoned").push_back(reply.into());
    }

    /// Queued replies not yet used.
    pub fn remaining(&self) -> usize {
        self.shared.replies.lock().expect("mock lock poisoned").len()
    }
}

async fn anthropic(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response {
    answer(&shared, Wire::Anthropic, "/v1/messages", request).await
}

async fn openai(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response {
    answer(&shared, Wire::OpenAi, "/v1/chat/completions", request).await
}

async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let data: Vec<Value> =
        shared.models.iter().map(|id| json!({"id": id, "object": "model", "owned_by": "cairn"})).collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

async fn props(State(shared): State<Arc<Shared>>) -> Response {
    match shared.props_n_ctx {
        Some(n_ctx) => axum::Json(json!({"default_generation_settings": {"n_ctx": n_ctx}})).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn ollama_ps(State(shared): State<Arc<Shared>>) -> Response {
    let Some(window) = shared.ollama_window else { return StatusCode::NOT_FOUND.into_response() };
    let loaded = !shared.requests.lock().expect("mock lock poisoned").is_empty();
    let models: Vec<Value> = if loaded {
        shared.models.iter().map(|m| json!({"name": m, "model": m, "size": 1, "context_length": window})).collect()
    } else {
        Vec::new()
    };
    axum::Json(json!({"models": models})).into_response()
}

async fn answer(shared: &Shared, wire: Wire, path: &str, request: axum::extract::Request) -> Response {
    // The request's headers are in; its body may still be on the way.
    let received = std::time::Instant::now();
    let (parts, body) = request.into_parts();
    let raw: Bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(raw) => raw,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("the body could not be read: {e}")).into_response(),
    };
    let response = answer_request(shared, wire, path, &parts.headers, &raw).await;
    shared.timings.lock().expect("mock lock poisoned").push((received, std::time::Instant::now()));
    response
}

async fn answer_request(shared: &Shared, wire: Wire, path: &str, headers: &HeaderMap, raw: &[u8]) -> Response {
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let mut problems = Vec::new();
    let body = serde_json::from_slice::<Value>(raw).unwrap_or_else(|e| {
        problems.push(format!("the body is not JSON: {e}"));
        Value::Null
    });
    problems.extend(validate::request(wire, &headers, &body));
    let mut record = RecordedRequest { wire, path: path.to_string(), headers, body, problems };
    if let Some(window) = shared.context_window {
        let input = estimate_input(wire, &record.body);
        let output = ["max_tokens", "max_completion_tokens"].iter().find_map(|k| record.body[*k].as_u64()).unwrap_or(0);
        if input + output > window {
            record
                .problems
                .push(format!("request over the {window}-token window: {input} input + {output} output tokens"));
            shared.requests.lock().expect("mock lock poisoned").push(record);
            return error_response(wire, 400, None, Some(wire::context_length_body(wire)));
        }
    }
    let reply = shared.responder.as_ref().and_then(|respond| respond(&record));
    let reply = reply.or_else(|| shared.replies.lock().expect("mock lock poisoned").pop_front());
    let reply = reply.unwrap_or_else(|| {
        record.problems.push("the script is exhausted: no reply was queued for this request".to_string());
        Reply::Turn(Turn::text(EXHAUSTED_TEXT))
    });
    let model = record.body["model"].as_str().unwrap_or("mock-model").to_string();
    let input_estimate = estimate_input(wire, &record.body);
    let this_request = shared.requests.lock().expect("mock lock poisoned").len() + 1;
    let cached = shared.cache.as_ref().map(|c| {
        let mut c = c.lock().expect("mock lock poisoned");
        if shared.evict_before == Some(this_request) {
            c.evict();
        }
        match wire {
            Wire::Anthropic => c.anthropic(&record.body),
            Wire::OpenAi => c.openai(&record.body),
        }
    });
    shared.requests.lock().expect("mock lock poisoned").push(record);
    let mut next_id = || shared.next_id.fetch_add(1, Ordering::Relaxed);
    let render = |turn: &Turn, next_id: &mut dyn FnMut() -> u64| {
        let usage = turn.usage.unwrap_or(match cached {
            Some(c) => MockUsage {
                input_tokens: c.uncached,
                output_tokens: estimate_output(turn),
                cache_read_input_tokens: c.read,
                cache_creation_input_tokens: c.written,
            },
            None => {
                MockUsage { input_tokens: input_estimate, output_tokens: estimate_output(turn), ..MockUsage::default() }
            }
        });
        wire::frames(wire, turn, &model, usage, next_id)
    };
    let partial = Turn::text(PARTIAL_TEXT);
    match reply {
        Reply::Turn(turn) => sse(render(&turn, &mut next_id), shared.chunk_delay, wire::Ending::Complete),
        Reply::Fault(fault) => match fault {
            Fault::Status { code, retry_after, body } => error_response(wire, code, retry_after, body),
            Fault::RateLimited => error_response(wire, 429, None, None),
            Fault::Overloaded => error_response(wire, if wire == Wire::Anthropic { 529 } else { 503 }, None, None),
            Fault::ServerError => error_response(wire, 500, None, None),
            Fault::ContextLength => error_response(wire, 400, None, Some(wire::context_length_body(wire))),
            Fault::DropMidStream => {
                sse(wire::first_half(render(&partial, &mut next_id)), shared.chunk_delay, wire::Ending::Abort)
            }
            Fault::Truncated(turn) => {
                sse(wire::without_ending(wire, render(&turn, &mut next_id)), shared.chunk_delay, wire::Ending::Abort)
            }
            Fault::EndEarly => {
                sse(wire::first_half(render(&partial, &mut next_id)), shared.chunk_delay, wire::Ending::Complete)
            }
            Fault::Unresponsive => {
                tokio::time::sleep(Duration::from_secs(300)).await;
                error_response(wire, 500, None, None)
            }
            Fault::Stall => {
                sse(wire::first_half(render(&partial, &mut next_id)), shared.chunk_delay, wire::Ending::Stall)
            }
            Fault::EndlessPings => {
                let ping = if wire == Wire::Anthropic { wire::ANTHROPIC_PING } else { wire::SSE_COMMENT };
                sse(
                    wire::first_half(render(&partial, &mut next_id)),
                    shared.chunk_delay,
                    wire::Ending::Repeat(ping, 20),
                )
            }
            Fault::EndlessText => {
                let more = if wire == Wire::Anthropic { wire::ANTHROPIC_MORE_TEXT } else { wire::OPENAI_MORE_TEXT };
                sse(wire::first_half(render(&partial, &mut next_id)), shared.chunk_delay, wire::Ending::Repeat(more, 5))
            }
            Fault::MalformedEvent => {
                let mut frames = render(&partial, &mut next_id);
                let at = frames.len() / 2;
                frames
                    .insert(at, "data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\n\n".to_string());
                sse(frames, shared.chunk_delay, wire::Ending::Complete)
            }
            Fault::ErrorEvent => {
                let mut frames = wire::first_half(render(&partial, &mut next_id));
                frames.push(wire::error_event(wire));
                sse(frames, shared.chunk_delay, wire::Ending::Complete)
            }
        },
    }
}

/// About a token per four characters of what the model reads.
fn estimate_input(wire: Wire, body: &Value) -> u64 {
    let keys: &[&str] = match wire {
        Wire::Anthropic => &["system", "messages", "tools"],
        Wire::OpenAi => &["messages", "tools"],
    };
    let chars: usize = keys.iter().filter(|k| !body[**k].is_null()).map(|k| body[*k].to_string().len()).sum();
    (chars as u64).div_ceil(4).max(1)
}

fn estimate_output(turn: &Turn) -> u64 {
    let chars = turn.text.len() + turn.tool_calls.iter().map(|c| c.name.len() + c.raw_arguments().len()).sum::<usize>();
    (chars as u64).div_ceil(4).max(1)
}

fn sse(frames: Vec<String>, delay: Duration, ending: wire::Ending) -> Response {
    let mut response = Body::from_stream(wire::body_stream(frames, delay, ending)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn error_response(wire: Wire, code: u16, retry_after: Option<f64>, body: Option<Value>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = body.unwrap_or_else(|| wire::error_body(wire, code));
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(seconds) = retry_after {
        let value = HeaderValue::from_str(&seconds.to_string()).expect("a number is a valid header value");
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
