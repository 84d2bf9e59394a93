//! A scripted mock LLM server for integration tests and manual runs
//! (`cargo run --example mock_llm`). It speaks the Anthropic Messages wire on `POST /v1/messages`,
//! the OpenAI chat-completions wire on `POST /v1/chat/completions` and the OpenAI Responses API
//! on `POST /v1/responses`, over real HTTP and SSE, in several chunks with an optional delay
//! between them; `GET /v1/models` lists `mock-model`. Turns may think (signed thinking blocks,
//! reasoning items with encrypted content) and requests may carry images.
//!
//! Every request is recorded and validated against what the real APIs would refuse: what they
//! refuse with a 400 the mock refuses too (`mock_strict.rs`: thinking signatures, reasoning
//! items, images, breakpoints), the rest is recorded as a problem (`mock_validate.rs`); tests
//! assert [`MockLlm::problems`] is empty. Replies come from a [`Script`]: a responder
//! consulted first, then a queue of turns and faults, one per request.
//!
//! Self-contained: its helpers are included below by path, so the example can include this file
//! alone. `summariser` answers as cairn's scripted summariser does (for replays over HTTP).

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
#[path = "mock_issued.rs"]
mod issued;
#[path = "mock_responses.rs"]
mod responses;
#[path = "mock_script.rs"]
mod script;
#[path = "mock_strict.rs"]
mod strict;
#[path = "mock_summariser.rs"]
pub mod summariser;
#[path = "mock_validate.rs"]
mod validate;
#[path = "mock_wire.rs"]
mod wire;

use script::Responder;
#[allow(unused_imports)] // the mock's binary (examples/mock_llm.rs) reads script files
pub use script::ScriptFile;
pub use script::{Fault, MockCall, MockUsage, Reply, Route, Script, Turn};

/// What the mock answers once the script has run out (and the request is flagged).
pub const EXHAUSTED_TEXT: &str = "(mock: script exhausted)";
/// The text a stream fault sends before it breaks.
pub const PARTIAL_TEXT: &str = "This answer will be cut short before it ends properly.";

/// Which API a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Wire {
    Anthropic,
    OpenAi,
    OpenAiResponses,
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
    /// The system prompt, whatever the wire.
    pub fn system(&self) -> String {
        system_text(self.wire, &self.body)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// `body.messages` (`body.input` on the Responses API), or nothing.
    pub fn messages(&self) -> &[Value] {
        let key = if self.wire == Wire::OpenAiResponses { "input" } else { "messages" };
        self.body[key].as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every `cache_control` marker anywhere in the body.
    pub fn cache_markers(&self) -> usize {
        validate::count_key(&self.body, "cache_control")
    }
}

struct Shared {
    context_window: Option<u64>,
    evict_before: Option<usize>,
    cache: Option<Mutex<cache::PrefixCache>>,
    honours_cache_control: bool,
    issued: Mutex<issued::Issued>,
    replies: Mutex<VecDeque<Reply>>,
    routes: Mutex<Vec<Route>>,
    requests: Mutex<Vec<RecordedRequest>>,
    responder: Option<Responder>,
    chunk_delay: Duration,
    props_n_ctx: Option<u64>,
    ollama_window: Option<u64>,
    lm_studio_window: Option<(Option<u64>, u64)>,
    vllm_max_model_len: Option<u64>,
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
            honours_cache_control: script.honours_cache_control,
            issued: Mutex::new(issued::Issued::default()),
            replies: Mutex::new(script.replies),
            routes: Mutex::new(script.routes),
            requests: Mutex::new(Vec::new()),
            responder: script.responder,
            chunk_delay: Duration::from_millis(script.chunk_delay_ms),
            props_n_ctx: script.props_n_ctx,
            ollama_window: script.ollama_window,
            lm_studio_window: script.lm_studio_window,
            vllm_max_model_len: script.vllm_max_model_len,
            models: script.models.unwrap_or_else(|| vec!["mock-model".to_string()]),
            next_id: AtomicU64::new(1),
            timings: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/messages", post(anthropic))
            .route("/v1/chat/completions", post(openai))
            .route("/v1/responses", post(openai_responses))
            .route("/v1/models", get(models))
            .route("/props", get(props))
            .route("/api/ps", get(ollama_ps))
            .route("/api/v0/models/{model}", get(lm_studio_model))
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

    /// The requests from the `first`-th (0-based) on: what arrived since a caller last looked,
    /// without copying the ones before.
    pub fn requests_from(&self, first: usize) -> Vec<RecordedRequest> {
        let requests = self.shared.requests.lock().expect("mock lock poisoned");
        requests.get(first..).map(<[RecordedRequest]>::to_vec).unwrap_or_default()
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

async fn openai_responses(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response {
    answer(&shared, Wire::OpenAiResponses, "/v1/responses", request).await
}

async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let data: Vec<Value> = shared
        .models
        .iter()
        .map(|id| {
            let mut model = json!({"id": id, "object": "model", "owned_by": "cairn"});
            if let Some(len) = shared.vllm_max_model_len {
                model["max_model_len"] = json!(len);
            }
            model
        })
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

/// LM Studio's REST API: one model, loaded or not (an unknown one is a 404 with an error).
async fn lm_studio_model(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(model): axum::extract::Path<String>,
) -> Response {
    let Some((loaded, max)) = shared.lm_studio_window else { return StatusCode::NOT_FOUND.into_response() };
    if !shared.models.contains(&model) {
        return (StatusCode::NOT_FOUND, axum::Json(json!({"error": format!("Model {model} not found")})))
            .into_response();
    }
    let mut answer = json!({"id": model, "object": "model", "type": "llm", "state": "not-loaded",
        "max_context_length": max});
    if let Some(loaded) = loaded {
        answer["state"] = json!("loaded");
        answer["loaded_context_length"] = json!(loaded);
    }
    axum::Json(answer).into_response()
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
    problems.extend(validate::request(wire, &headers, &body, shared.honours_cache_control));
    let refused = {
        let issued = shared.issued.lock().expect("mock lock poisoned");
        strict::check(wire, &headers, &body, &issued, shared.honours_cache_control)
    };
    let mut record = RecordedRequest { wire, path: path.to_string(), headers, body, problems };
    if let Some(first) = refused.first() {
        // What the real API refuses, the mock refuses: the same status and error shape.
        let body = wire::refusal_body(wire, first);
        record.problems.extend(refused.iter().map(|e| format!("refused with 400: {e}")));
        shared.requests.lock().expect("mock lock poisoned").push(record);
        return error_response(wire, 400, None, Some(body));
    }
    if let Some(window) = shared.context_window {
        let input = estimate_input(wire, &record.body);
        let output = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
            .iter()
            .find_map(|k| record.body[*k].as_u64())
            .unwrap_or(0);
        if input + output > window {
            record
                .problems
                .push(format!("request over the {window}-token window: {input} input + {output} output tokens"));
            shared.requests.lock().expect("mock lock poisoned").push(record);
            return error_response(wire, 400, None, Some(wire::context_length_body(wire)));
        }
    }
    let routed = route_reply(shared, wire, &mut record);
    let reply = routed.or_else(|| shared.responder.as_ref().and_then(|respond| respond(&record)));
    let reply = reply.or_else(|| shared.replies.lock().expect("mock lock poisoned").pop_front());
    let reply = reply.unwrap_or_else(|| {
        record.problems.push("the script is exhausted: no reply was queued for this request".to_string());
        Reply::Turn(Turn::text(EXHAUSTED_TEXT))
    });
    if let Reply::Turn(turn) = &reply
        && turn.delay_ms > 0
    {
        tokio::time::sleep(Duration::from_millis(turn.delay_ms)).await;
    }
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
            Wire::OpenAi if shared.honours_cache_control => c.openai_marked(&record.body),
            Wire::OpenAi => c.openai(&record.body),
            Wire::OpenAiResponses => c.responses(&record.body),
        }
    });
    let request_body = record.body.clone();
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
        let mut issued = shared.issued.lock().expect("mock lock poisoned");
        wire::frames(wire, turn, &model, usage, next_id, &mut issued, &request_body)
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
                let more = match wire {
                    Wire::Anthropic => wire::ANTHROPIC_MORE_TEXT,
                    Wire::OpenAi => wire::OPENAI_MORE_TEXT,
                    Wire::OpenAiResponses => responses::MORE_TEXT,
                };
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

/// The system prompt of a request, whatever the wire.
pub fn system_text(wire: Wire, body: &Value) -> String {
    match wire {
        Wire::Anthropic => match &body["system"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
            _ => String::new(),
        },
        Wire::OpenAiResponses => body["instructions"].as_str().unwrap_or_default().to_string(),
        Wire::OpenAi => body["messages"]
            .as_array()
            .map(|m| m.iter().filter(|m| m["role"] == "system").filter_map(|m| m["content"].as_str()).collect())
            .unwrap_or_default(),
    }
}

/// The reply of the first route whose key the request's system prompt contains.
fn route_reply(shared: &Shared, wire: Wire, record: &mut RecordedRequest) -> Option<Reply> {
    let system = system_text(wire, &record.body);
    let mut routes = shared.routes.lock().expect("mock lock poisoned");
    let route = routes.iter_mut().find(|r| system.contains(&r.key))?;
    let reply = route.replies.pop_front();
    if reply.is_none() {
        record.problems.push(format!("the route {:?} is exhausted: no reply was queued for this request", route.key));
        return Some(Reply::Turn(Turn::text(EXHAUSTED_TEXT)));
    }
    reply
}

/// About a token per four characters of what the model reads.
fn estimate_input(wire: Wire, body: &Value) -> u64 {
    let keys: &[&str] = match wire {
        Wire::Anthropic => &["system", "messages", "tools"],
        Wire::OpenAi => &["messages", "tools"],
        Wire::OpenAiResponses => &["instructions", "input", "tools"],
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
