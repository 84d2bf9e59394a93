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
    /// Anthropic prompt caching; `None` sends no `cache_control` at all.
    pub cache: Option<CacheTtl>,
    /// Text that changes between requests without changing the history (the task list): sent
    /// at the very end, after the last cache breakpoint, as the last block of the final user
    /// turn, so it never invalidates a cached prefix. Never stored.
    pub tail: Option<String>,
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
}

/// What a front end may show while a response streams.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
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
