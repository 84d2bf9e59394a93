use std::sync::Arc;

use serde::Serialize;

use crate::config::CacheTtl;
use crate::conversation::{Message, SystemBlock, ToolSpec, Usage};

/// Everything one request carries, provider-neutral.
#[derive(Clone, Debug)]
pub struct ChatRequest {
    pub model: String,
    pub system: Vec<SystemBlock>,
    /// The sent view: must satisfy the request invariant (first message from the user, every
    /// tool call answered, no orphaned result). Shared with the pipeline, not copied: the
    /// clients remember each message's wire form by its `Arc` (see `wire_cache`).
    pub messages: Vec<Arc<Message>>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// Prompt caching with explicit breakpoints (Anthropic, and OpenAI-compatible endpoints
    /// that honour `cache_control`); `None` sends no `cache_control` at all.
    pub cache: Option<CacheTtl>,
    /// Text that changes between requests without changing the history (the task list): sent
    /// at the very end, after the last cache breakpoint, as the last block of the final user
    /// turn, so it never invalidates a cached prefix. Never stored.
    pub tail: Option<String>,
    /// How much the model should think (see [`super::reasoning_for`]); `None` for a model
    /// that does not think.
    pub reasoning: Option<Reasoning>,
    /// Whether the model takes images; when it does not, every image is sent as a short note.
    pub images: bool,
}

/// What a request asks of the model's thinking, in the wire-neutral terms the catalog allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reasoning {
    /// A thinking model left at its default: nothing is asked, what it thinks is kept.
    Default,
    /// Anthropic extended thinking with a token budget; `interleaved` asks for thinking between
    /// tool calls too (and lets the budget exceed `max_tokens`).
    Budget { tokens: u32, interleaved: bool },
    /// Anthropic adaptive thinking at this effort.
    Adaptive(Effort),
    /// OpenAI reasoning at this effort.
    Effort(Effort),
    /// Turn off the thinking a model does by default.
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    Other(String),
}

/// A finished response: the assistant message (text blocks and tool calls in the order the
/// model produced them), why it stopped, and its usage.
#[derive(Clone, Debug)]
pub struct ChatResponse {
    pub message: Message,
    pub stop: StopReason,
    pub usage: Usage,
    /// The model that answered, as the provider names it.
    pub model: String,
    /// llama-server's own figures for the request (its cache, prefill and generation).
    pub timings: Option<super::ServerTimings>,
}

/// What a front end may show while a response streams.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A piece of the model's visible thinking (or reasoning summary).
    ThinkingDelta(String),
    /// The model began a tool call; its arguments are still streaming.
    ToolCallStarted {
        id: String,
        name: String,
    },
    /// The attempt failed and everything streamed so far must be discarded; another attempt
    /// follows after `delay`.
    Retrying {
        /// The number of the attempt about to be made (2 to `max_attempts`), not of the one
        /// that failed.
        attempt: u32,
        max_attempts: u32,
        delay: std::time::Duration,
        reason: String,
    },
}
