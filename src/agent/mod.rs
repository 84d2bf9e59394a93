//! The agent: the turn loop, tool dispatch (policy, approval, execution), cancellation, and
//! the session it works in. Commands come in as `UserCommand`s, everything that happens goes
//! out as `AgentEvent`s, so the TUI and headless mode drive the same core.
//!
//! Draws and prints nothing.

mod auxiliary;
mod compaction;
mod context_view;
mod dispatch;
mod events;
mod memory;
mod runner;
mod segments;
mod slash;
mod spill;
mod turn;
mod worker;

pub use auxiliary::{AuxModel, UsageRecorder, UsageTally};
pub use events::{
    AgentEvent, ApprovalDecision, ApprovalRequest, CacheReport, CacheStats, CompactionEvent, CompactionTrigger,
    ContextBreakdown, ContextPart, ContextReport, ContextStatus, NoticeLevel, SegmentInfo, ToolFinished, TurnOutcome,
    TurnStats, TurnSummary, UserCommand,
};
pub use runner::{AgentHandle, AgentSetup, SessionChoice, spawn};
pub use slash::{COMMANDS, SlashCommand, parse_slash};
pub use spill::clean_truncations;
pub use turn::INTERRUPTED_MARK;
