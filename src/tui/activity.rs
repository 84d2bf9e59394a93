//! What the agent is doing, as the interface follows it from its events: the spinner's words.

use std::time::Instant;

/// What the agent is doing, for the spinner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    Idle,
    /// The provider is being resolved.
    Connecting,
    /// A request is out, nothing has streamed yet.
    Thinking,
    Streaming,
    /// The model is writing a tool call's arguments.
    PreparingTool(String),
    Tool(String),
    Approval(String),
    Compacting {
        chunk: Option<(u32, u32)>,
    },
    Retrying {
        attempt: u32,
        max_attempts: u32,
        until: Instant,
    },
}
