//! The mock's script: the turns and faults it answers with, one per request, and a responder
//! consulted first.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RecordedRequest;

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
    /// Sent first: a signed thinking block (Anthropic), a reasoning item with its summary and
    /// encrypted content (Responses), `reasoning_content` (chat completions).
    pub thinking: Option<String>,
    /// Anthropic: a `redacted_thinking` block after the thinking.
    pub redacted_thinking: bool,
    /// Milliseconds before the response starts (a slow call, e.g. a summariser still working
    /// after the agent's answer came).
    pub delay_ms: u64,
    /// How many deltas the text is streamed in (0: three), each a frame of its own.
    pub pieces: usize,
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

    pub fn with_redacted_thinking(mut self) -> Turn {
        self.redacted_thinking = true;
        self
    }

    pub fn with_delay_ms(mut self, ms: u64) -> Turn {
        self.delay_ms = ms;
        self
    }

    /// Stream the text in `n` deltas (a long answer arriving token by token).
    pub fn with_pieces(mut self, n: usize) -> Turn {
        self.pieces = n;
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

pub(super) type Responder = Box<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// What the mock will answer.
#[derive(Default)]
pub struct Script {
    pub(super) replies: VecDeque<Reply>,
    pub(super) responder: Option<Responder>,
    pub(super) chunk_delay_ms: u64,
    pub(super) props_n_ctx: Option<u64>,
    pub(super) ollama_window: Option<u64>,
    pub(super) lm_studio_window: Option<(Option<u64>, u64)>,
    pub(super) vllm_max_model_len: Option<u64>,
    pub(super) models: Option<Vec<String>>,
    pub(super) context_window: Option<u64>,
    pub(super) simulate_cache: bool,
    pub(super) honours_cache_control: bool,
    pub(super) evict_before: Option<usize>,
    pub(super) routes: Vec<Route>,
}

/// Replies for the requests whose system prompt contains `key` — a subagent's, whose brief
/// names its job — so concurrent agents each get their own script whatever order their
/// requests arrive in.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Route {
    pub key: String,
    pub replies: VecDeque<Reply>,
}

/// A script as a JSON file holds it: the queue, and routes by system-prompt text.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptFile {
    pub replies: Vec<Reply>,
    pub routes: Vec<Route>,
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

    /// Requests whose system prompt contains `key` take their replies from `replies`, in
    /// order, before the responder and the queue (the first route whose key matches). A
    /// request matching a route that has run out is flagged, as an exhausted script is.
    pub fn route(mut self, key: impl Into<String>, replies: impl IntoIterator<Item = Reply>) -> Script {
        self.routes.push(Route { key: key.into(), replies: replies.into_iter().collect() });
        self
    }

    /// A script file's queue and routes.
    pub fn from_file(file: ScriptFile) -> Script {
        Script { replies: file.replies.into_iter().collect(), routes: file.routes, ..Script::default() }
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

    /// Behave like an OpenAI-compatible endpoint that forwards `cache_control` to an Anthropic
    /// model (OpenRouter): breakpoints in content parts are accepted (at most four) and, with
    /// [`Script::simulate_cache`], cached by them; usage reports `cached_tokens` and
    /// `cache_write_tokens`.
    pub fn honour_cache_control(mut self) -> Script {
        self.honours_cache_control = true;
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

    /// Also serve LM Studio's `GET /api/v0/models/NAME` for each listed model: loaded with
    /// `loaded` tokens when given, else not loaded; `max` the most the model takes.
    pub fn lm_studio_window(mut self, loaded: Option<u64>, max: u64) -> Script {
        self.lm_studio_window = Some((loaded, max));
        self
    }

    /// List each model in `GET /v1/models` with vLLM's `max_model_len`.
    pub fn vllm_max_model_len(mut self, tokens: u64) -> Script {
        self.vllm_max_model_len = Some(tokens);
        self
    }

    /// What `GET /v1/models` lists (default: `mock-model`).
    pub fn models(mut self, ids: &[&str]) -> Script {
        self.models = Some(ids.iter().map(|id| id.to_string()).collect());
        self
    }
}
