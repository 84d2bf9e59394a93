//! What goes into the agent (`UserCommand`) and what comes out (`AgentEvent`). Front ends only
//! send the one and render the other.

use std::time::Duration;

use serde::Serialize;

use crate::conversation::{Message, Mode, Usage};
use crate::store::SessionInfo;

/// A request from the user.
#[derive(Clone, Debug, PartialEq)]
pub enum UserCommand {
    /// A prompt. Queued when a turn is running.
    Submit(String),
    /// The answer to an [`AgentEvent::ApprovalRequested`].
    Approval {
        id: u64,
        decision: ApprovalDecision,
    },
    /// Stop the running turn; the partial answer is kept and marked.
    Interrupt,
    /// Takes effect at once, even mid-turn: the next tool call is judged by the new mode.
    SetMode(Mode),
    SetModel(String),
    /// Compact the conversation now (`/compact`).
    Compact,
    /// Start a fresh session in the same project (`/new`).
    NewSession,
    /// Switch to another session of the project (`/resume ID`).
    ResumeSession(String),
    Shutdown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    Approve,
    /// Approve this call and every later call of the same tool in this session.
    ApproveForSession,
    Deny {
        reason: Option<String>,
    },
}

/// A tool call waiting for the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApprovalRequest {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    /// One line: the path or the command.
    pub summary: String,
    /// Why approval is needed: "changes a file", "runs a command", "reads outside the project: …".
    pub reason: String,
    /// Unified diff of a write or edit.
    pub diff: Option<String>,
}

/// The context pipeline's counters and the budget figures, as headless JSON prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContextReport {
    pub window: u64,
    pub last_request_tokens: u64,
    pub truncations: u64,
    pub dedup_replacements: u64,
    pub pruned_results: u64,
    pub compactions: u64,
    pub trimmed_messages: u64,
    pub compaction_failures: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TurnOutcome {
    Completed { text: String },
    Interrupted { partial: String },
    MaxTurns { limit: u32 },
    Failed { error: String },
}

impl TurnOutcome {
    pub fn is_error(&self) -> bool {
        match self {
            TurnOutcome::Completed { .. } => false,
            TurnOutcome::Interrupted { .. } | TurnOutcome::MaxTurns { .. } | TurnOutcome::Failed { .. } => true,
        }
    }

    /// The text a headless run reports as its result.
    pub fn result_text(&self) -> String {
        match self {
            TurnOutcome::Completed { text } => text.clone(),
            TurnOutcome::Interrupted { partial } => format!("{partial}\n[interrupted]").trim_start().to_string(),
            TurnOutcome::MaxTurns { limit } => {
                format!("stopped after {limit} model requests (--max-turns {limit}); continue with --resume")
            }
            TurnOutcome::Failed { error } => error.clone(),
        }
    }
}

/// What one prompt (or command) cost and did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TurnStats {
    /// Model requests made by the agent (auxiliary calls not included).
    pub requests: u32,
    /// Usage of every request, auxiliary ones included.
    pub usage: Usage,
    pub all_requests: u32,
    pub denied_tool_calls: u32,
    pub context: ContextReport,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSummary {
    pub outcome: TurnOutcome,
    pub stats: TurnStats,
}

/// A finished tool call, as the transcript shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFinished {
    pub call_id: String,
    pub tool: String,
    pub summary: String,
    /// The result as sent to the model.
    pub content: String,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    pub diff: Option<String>,
    pub duration: Duration,
    /// The call never ran: refused by policy, denied, or its arguments did not parse.
    pub not_run: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// Everything the agent reports.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// A session is loaded (at start, after `/new` or `/resume`): render its history.
    SessionReady {
        session: SessionInfo,
        resumed: bool,
        history: Vec<Message>,
        mode: Mode,
        model: String,
        window: u64,
    },
    /// A prompt was accepted while a turn runs; it starts when the turn ends.
    Queued {
        prompt: String,
    },
    TurnStarted {
        prompt: String,
    },
    TextDelta(String),
    /// The model began a tool call (its arguments still streaming).
    ToolCallStreaming {
        call_id: String,
        tool: String,
    },
    /// A request failed and is retried; text streamed so far is void.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// A complete assistant message, as stored.
    AssistantMessage(Message),
    ToolStarted {
        call_id: String,
        tool: String,
        summary: String,
        arguments: String,
    },
    ApprovalRequested(ApprovalRequest),
    ToolFinished(ToolFinished),
    /// After every model request: its usage and the context figures.
    Usage {
        usage: Usage,
        context: ContextReport,
    },
    ModeChanged(Mode),
    ModelChanged {
        model: String,
        window: u64,
    },
    Notice {
        level: NoticeLevel,
        text: String,
    },
    TurnFinished(TurnSummary),
}
