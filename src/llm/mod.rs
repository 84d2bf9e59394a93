//! Talking to models: the `Provider` trait, the Anthropic Messages, OpenAI-compatible chat
//! completions and OpenAI Responses clients (all streamed over SSE), thinking and reasoning,
//! images, retries with backoff, cache breakpoints, and discovery of local servers.
//!
//! Knows nothing about what tools do or where conversations are stored.

mod anthropic;
mod anthropic_body;
mod cache_analytics;
mod client;
mod discovery;
mod endpoint;
mod error;
mod http;
mod model_list;
mod openai;
mod openai_body;
mod openai_responses;
mod reasoning;
mod request;
mod responses_body;
mod retry;
mod sse;
mod timings;
mod wire_cache;

pub use crate::net::ClientSetupError;
pub use anthropic::AnthropicClient;
pub use cache_analytics::{BreakKind, CacheBreak, CacheCounts, CacheTracker, Fingerprint, fingerprint};
pub use discovery::{
    ProbeResult, ServedWindow, Surveyed, context_from_props, discover_model, probe_local, survey_local,
};
pub use error::{LlmError, is_context_length_message};
pub use model_list::list_models;
pub use openai::OpenAiClient;
pub use openai_responses::OpenAiResponsesClient;
pub use reasoning::reasoning_for;
pub use request::{ChatRequest, ChatResponse, Effort, Reasoning, StopReason, StreamEvent};
pub use retry::{RetryPolicy, send_with_retries};
pub use timings::ServerTimings;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// One model endpoint. `stream` makes exactly one HTTP request (no retries: those are
/// [`send_with_retries`]'s job), forwards deltas to `events` as they arrive, and returns the
/// complete assistant message only when the stream ended properly. A partial response is an
/// error, never a result.
pub trait Provider: Send + Sync {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        events: &'a UnboundedSender<StreamEvent>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;

    /// `anthropic`, `openai` or `openai-responses`, for logs and `doctor`.
    fn kind(&self) -> crate::config::ProviderKind;

    /// Whether requests for `model` may carry `cache_control` breakpoints (see
    /// [`ChatRequest::cache`]): always on Anthropic, on OpenAI-compatible endpoints that honour
    /// them (OpenRouter with Anthropic models, or `cache_control = true`).
    fn honours_cache_control(&self, _model: &str) -> bool {
        false
    }

    /// The window the server runs `model` with, when it says: local OpenAI-compatible servers
    /// (llama-server, Ollama) do; hosted APIs publish theirs in the catalog instead.
    fn served_window<'a>(&'a self, _model: &'a str) -> BoxFuture<'a, ServedWindow> {
        Box::pin(async { ServedWindow::Unknown })
    }
}
