//! What goes into the agent (`UserCommand`) and what comes out (`AgentEvent`). Front ends only
//! send the one and render the other.

mod commands;
mod context;
mod stats;

pub use commands::{ApprovalDecision, ApprovalKind, ApprovalRequest, BackgroundRequest, CommandInfo, UserCommand};
#[cfg(test)]
pub use context::SkippedFile;
pub use context::{
    CacheReport, ContextBreakdown, ContextPart, ContextReport, ContextStatus, CostReport, InstructionFilesReport,
    KeepAliveReport, SegmentInfo,
};
pub use stats::{CacheStats, TurnOutcome, TurnStats, TurnSummary};

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use super::library::{LibraryAnswer, LibraryError};
use super::mcp_desk::McpPanel;
use super::rewind::{RewindOutcome, RewindPreview};
use crate::conversation::{BackgroundJob, FinishedCall, Message, Mode, Usage};
use crate::store::{SessionInfo, ToolDisplay};

/// What the background commands are, or what became of one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", content = "jobs", rename_all = "snake_case")]
pub enum BackgroundAnswer {
    /// `/ps`: every one this agent started, oldest first.
    List(Vec<BackgroundJob>),
    /// `/stop N`: the job as it ended, or why it could not be.
    Stopped(Result<BackgroundJob, String>),
    /// A rewind took back the turns that started these, so they were ended.
    Rewound(Vec<BackgroundJob>),
}

/// Why a compaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The auto-compact threshold was crossed.
    Auto,
    /// `/compact`.
    Manual,
    /// The provider said the request was too long.
    Overflow,
}

/// Progress of a compaction, for the transcript and the spinner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum CompactionEvent {
    Started {
        trigger: CompactionTrigger,
        tokens_before: u64,
    },
    /// A chunk of a transcript too big for one summariser call is done.
    Progress {
        chunk: u32,
        chunks: u32,
    },
    Finished {
        trigger: CompactionTrigger,
        tokens_before: u64,
        tokens_after: u64,
        summary_tokens: u64,
    },
    Failed {
        trigger: CompactionTrigger,
        error: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// How a subagent's job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentOutcome {
    Reported,
    Failed,
    Interrupted,
}

/// What a subagent started by a `task` call is doing, for the front ends: the transcript's
/// subagent cell and headless stream-json.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum SubagentEvent {
    Started {
        agent_type: String,
        description: String,
        /// The subagent's own session, stored under the parent's.
        session_id: String,
        model: String,
        mode: Mode,
    },
    /// One of its tool calls began (`call_id` is the subagent's own call).
    ToolStarted {
        call_id: String,
        tool: String,
        summary: String,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        summary: String,
        is_error: bool,
        not_run: bool,
    },
    /// Text it wrote along the way (its final report comes with `Finished`).
    Text {
        text: String,
    },
    /// One of its model requests: the context it sent (prompt tokens) and what it cost.
    Usage {
        usage: Usage,
    },
    Finished {
        outcome: SubagentOutcome,
        /// The report as the parent gets it (capped), or why there is none.
        report: String,
        usage: Usage,
        requests: u32,
    },
}

/// A model to choose in the `/model` picker.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelChoice {
    pub name: String,
    pub window: u64,
    /// The window is cairn's guess (a model neither the catalog nor the config describes).
    pub window_assumed: bool,
    pub prices: Option<crate::config::Prices>,
    /// The provider lists it (else it comes from the catalog alone).
    pub listed: bool,
}

/// The answer to [`UserCommand::ListModels`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelList {
    pub current: String,
    pub models: Vec<ModelChoice>,
    /// Why the provider could not be asked, when it could not.
    pub provider_error: Option<String>,
    /// The llama-server cairn runs (`--local`): its model, window and slots.
    pub local_server: Option<crate::local::ServerInfo>,
}

/// What a transcript shows of a stored session beyond its messages, so a resumed session
/// reads like the live one: each call's summary as its tool gave it, and where turns ended
/// and compactions happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryRecap {
    /// Call id → the tool's one-line summary (`$ cargo test`, `fn total in src`).
    pub summaries: HashMap<String, String>,
    /// After the message at `after` (an index into the history), in order.
    pub marks: Vec<(usize, HistoryMark)>,
    /// A `task` call's id → its subagent's work as the live session reported it: started, each
    /// call it made and what it wrote, finished with its requests and tokens.
    pub subagents: HashMap<String, Vec<SubagentEvent>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HistoryMark {
    /// A turn ended: its figures, as the live turn summary showed them.
    TurnEnd {
        elapsed: Duration,
        stats: TurnStats,
    },
    Compaction {
        trigger: CompactionTrigger,
        tokens_before: u64,
        tokens_after: u64,
        summary_tokens: u64,
    },
}

/// A file or folder an `@path` in the prompt attached, as the transcript lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attachment {
    /// The path as the project shows it; a folder ends with `/`.
    pub path: String,
    /// `120 lines`, `14 entries`, `cut to 2,000 lines`, or why it was not attached.
    pub detail: String,
    pub attached: bool,
}

/// Everything the agent reports.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// A session is loaded (at start, after `/new` or `/resume`): render its history.
    SessionReady {
        session: SessionInfo,
        resumed: bool,
        /// Every stored message, shared with the agent's own copy.
        history: Vec<std::sync::Arc<Message>>,
        /// What the transcript shows of each call besides its result (diff, duration, not
        /// run), by call id.
        tool_display: HashMap<String, ToolDisplay>,
        mode: Mode,
        model: String,
        window: u64,
        recap: HistoryRecap,
    },
    /// The session was written to the store with its first message: from now on it can be
    /// resumed (a session nobody typed into is never stored).
    SessionStored(SessionInfo),
    /// A prompt was accepted while a turn runs; it starts when the turn ends.
    Queued {
        prompt: String,
    },
    TurnStarted {
        prompt: String,
    },
    /// What the prompt's `@path` mentions attached (right after `TurnStarted`).
    Attached(Vec<Attachment>),
    TextDelta(String),
    /// A piece of the model's visible thinking, streaming.
    ThinkingDelta(String),
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
    /// A call is over: the same record the store keeps of it.
    ToolFinished(FinishedCall),
    /// After every model request: its usage and the context figures.
    Usage {
        usage: Usage,
        context: ContextReport,
    },
    /// The context bar's figures changed.
    Context(ContextStatus),
    /// A stage of the context pipeline changed what is sent (truncation, dedup, pruning,
    /// trimming; compaction has its own events).
    ContextStage(crate::context::StageReport),
    Compaction(CompactionEvent),
    /// The answer to `DescribeContext`.
    ContextBreakdown(ContextBreakdown),
    /// The answer to `WriteReport`: the report's path, or why it could not be written.
    ReportWritten(Result<String, String>),
    /// The answer to `Export`: the file's path, or why it could not be written.
    Exported(Result<String, String>),
    /// How many background commands run now (the status line's count): sent whenever one
    /// starts or ends.
    BackgroundRunning(usize),
    /// The answer to `/ps` or `/stop N`, or what a rewind ended.
    Background(BackgroundAnswer),
    ModeChanged(Mode),
    ModelChanged {
        model: String,
        window: u64,
    },
    /// `/model NAME` named no model the catalog or the provider knows: nothing changed.
    ModelRefused {
        name: String,
        known: Vec<String>,
    },
    /// The answer to [`UserCommand::ListModels`].
    Models(ModelList),
    Notice {
        level: NoticeLevel,
        text: String,
    },
    TurnFinished(TurnSummary),
    /// The answer to [`UserCommand::Settle`]: the usage and context counters of the background
    /// work that landed since the last turn's summary.
    Settled(TurnStats),
    /// The answer to a [`UserCommand::Library`] request.
    Library(LibraryAnswer),
    /// The custom commands and user-invocable skills, for completion and `/help` (after
    /// every `SessionReady`).
    Commands(Vec<CommandInfo>),
    /// The answer to a [`UserCommand::Mcp`] request.
    Mcp(McpPanel),
    /// The answer to [`UserCommand::PlanRewind`].
    RewindPlanned(Result<RewindPreview, LibraryError>),
    /// What a [`UserCommand::Rewind`] or [`UserCommand::Undo`] did.
    Rewound(Result<RewindOutcome, LibraryError>),
    /// A subagent started by the `task` call `call_id` made progress.
    Subagent {
        call_id: String,
        event: SubagentEvent,
    },
    /// The session's task list changed (the `todo` tool, or a session loaded with one).
    TaskList(crate::conversation::TaskList),
}
