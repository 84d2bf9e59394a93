//! The context pipeline: what the next request carries, derived from the stored history.
//!
//! Pure: takes data in, returns data and decisions. No network, no database, no clock (callers
//! pass `now`). The LLM call of compaction is passed in as a trait object ([`Summarizer`]).

mod budget;
mod compact;
mod dedup;
mod estimate;
mod extractive;
mod facts;
mod invariant;
#[cfg(test)]
mod invariant_props;
mod ledger;
mod pairs;
mod pipeline;
mod prune;
mod redact;
mod replay;
mod segments;
mod state;
mod terms;
mod trajectory;
mod trim;
mod truncate;
mod view;

pub use budget::{BudgetLevel, ContextBudget};
pub use compact::{
    COMPACTION_PROMPT, CompactionPlan, Summarizer, SummaryError, summarize, summary_budget, transcript_piece,
};
pub use estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens, estimate_text_tokens};
pub use extractive::{ExtractiveSummarizer, extract};
pub use facts::{Effect, LineRange, ToolFacts, normalise_path};
pub use invariant::{Violation, check_request};
pub use ledger::{Entry, Ledger};
pub use pairs::sanitize_pairs;
pub use pipeline::{Pipeline, Preflight, PreflightInput, Stage, StageReport, Urgency, thousands};
pub use redact::redact_secrets;
pub use replay::{AuxReport, DumpedRequest, ReplayOptions, ReplayReport, ReplayTotals, RequestReport, replay};
pub use segments::{Cut as SegmentCut, ROLLUP as SEGMENT_ROLLUP, SegmentNode, outline, segment};
pub use state::{ContextState, PromptSnapshot, Replacement, ReplacementKind, StageCounters, SummaryState};
pub use terms::{fts_query, similarity, terms};
pub use trajectory::{Trajectory, parse_trajectory, trajectory_line};
pub use truncate::{Cut, Spill, TruncationLimits, plan_cut, render_cut, turn_overflow};
