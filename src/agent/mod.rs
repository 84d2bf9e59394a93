//! The agent: the turn loop, tool dispatch (policy, approval, execution), cancellation, and
//! the session it works in. Commands come in as `UserCommand`s, everything that happens goes
//! out as `AgentEvent`s, so the TUI and headless mode drive the same core.
//!
//! A [`worker::Worker`] is made of parts, each owning one concern: `workplace` (project,
//! folders, config, store), `session_state` (the session, its pipeline and persistence),
//! `model_slot` (provider, model, window, retries, the auxiliary model), `cache_watch`,
//! `checkpoints` (the session's file checkpoints and capture around calls),
//! `background` (compaction, extraction, segmenting), `toolbox` (tools, files read, the
//! approval gate), `task_list` (the `todo` tool's list) and `link` (events, mode, turn
//! control). `worker/` holds the `Worker`, whose
//! fields only it sees, and its `impl` blocks that orchestrate the parts: `turn`, `dispatch`,
//! `compaction`, `memory`, `segments` and `context_view`. A tool call's path, from the model's
//! call to its finished record, is `calls/`: the worker lends it the parts it needs, and keeps
//! and tells what comes out.
//!
//! Draws and prints nothing. Public is only the event type the render benchmark feeds the
//! interface; the rest is the crate's.

mod approvals;
mod attachments;
mod auxiliary;
mod background;
mod cache_watch;
mod calls;
mod checkpoints;
mod events;
mod extensions;
mod hook_runs;
mod keep_warm;
mod library;
mod link;
mod local_site;
mod mcp_desk;
mod model_slot;
mod models;
mod recap;
mod request;
mod request_log;
mod rewind;
mod runner;
mod saved_outputs;
mod session_state;
mod setup;
mod slash;
mod spend;
mod task_list;
mod tool_section;
mod toolbox;
mod worker;
mod workplace;

pub(crate) use auxiliary::{AuxModel, SessionSummarizer};
pub use events::AgentEvent;
pub(crate) use events::CommandInfo;
pub(crate) use events::{
    ApprovalDecision, ApprovalKind, ApprovalRequest, Attachment, BackgroundAnswer, BackgroundRequest, CacheStats,
    CompactionEvent, CompactionTrigger, ContextBreakdown, ContextReport, ContextStatus, HistoryMark, HistoryRecap,
    InstructionFilesReport, ModelList, NoticeLevel, SubagentEvent, SubagentOutcome, TurnOutcome, TurnStats,
    TurnSummary, UserCommand,
};
#[cfg(test)]
pub(crate) use events::{CacheReport, ContextPart, CostReport, ModelChoice, SegmentInfo, SkippedFile};
#[cfg(test)]
pub(crate) use library::SessionDiff;
pub(crate) use library::{
    DiffTarget, Library, LibraryAnswer, LibraryError, LibraryRequest, memory_origin, provenance_suffix, usage_lines,
};
pub(crate) use mcp_desk::{McpPanel, McpRequest, McpServerInfo};
pub(crate) use models::ModelLister;
pub(crate) use recap::split_attachments;
#[cfg(test)]
pub(crate) use rewind::ConversationRewound;
pub(crate) use rewind::{RewindOutcome, RewindPreview, RewindScope, Rewinder};
pub(crate) use runner::{AgentHandle, spawn};
pub(crate) use setup::{AgentSetup, SessionChoice};
pub(crate) use slash::{COMMANDS, SHELL_PREFIXES, SlashCommand, parse_shell, parse_slash_with};
pub(crate) use worker::INTERRUPTED_MARK;
