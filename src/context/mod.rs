//! The context pipeline: what the next request carries, derived from the stored history.
//!
//! Pure: takes data in, returns data and decisions. No network, no database, no clock (callers
//! pass `now`). The LLM call of compaction is passed in as a trait object ([`Summarizer`]).

mod breaker;
mod budget;
mod compact;
mod cost;
mod dedup;
mod estimate;
mod exact;
mod extractive;
mod facts;
mod fit;
mod in_place;
mod injection;
mod invariant;
#[cfg(test)]
mod invariant_props;
mod keep_alive;
mod landing;
mod ledger;
mod new_work;
mod pairs;
mod pipeline;
mod prune;
mod redact;
mod reduce;
mod replay;
mod replay_calls;
mod replay_report;
mod reply;
mod rewind;
mod salient;
mod segment_plan;
mod segments;
mod sent_form;
mod sent_view;
mod state;
mod summary;
mod terms;
mod trajectory;
mod transcript;
mod trim;
mod truncate;
mod view;

pub use breaker::{Breaker, BreakerSettings, BreakerState};
pub use budget::{BudgetLevel, ContextBudget};
pub use compact::{
    COMPACTION_PROMPT, CompactionPlan, Conversation, Summarizer, SummaryError, finished_budget, plan_budget,
    summary_budget,
};
pub use cost::{CostModel, Horizon};
pub use estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens, estimate_text_tokens};
pub use exact::{ExactCounts, text_of as exact_text_of};
pub use extractive::{ExtractiveSummarizer, ScriptedSummarizer, extract, requested_tokens};
pub use facts::{Effect, LineRange, ToolFacts, normalise_path};
pub use injection::scan as scan_injection;
pub use invariant::{Violation, check_request};
pub use keep_alive::{KeepAlive, KeepAliveInput, MIN_CACHED_PREFIX, decide as keep_alive, return_probability};
pub use ledger::{Entry, Ledger};
pub use new_work::NewWork;
pub use pairs::sanitize_pairs;
pub use pipeline::{Pipeline, Preflight, PreflightInput, Stage, StageReport, Urgency, thousands};
pub use redact::redact_secrets;
pub use replay::{ReplayOptions, replay};
pub use replay_report::{
    AuxReport, DumpedRequest, ReplayEnd, ReplayReport, ReplayTotals, RequestParts, RequestReport, TOOL_SCHEMA_TOKENS,
    USAGE_CHARS_PER_TOKEN,
};
pub use reply::{CompactionReply, split_reply};
pub use rewind::rewind_state;
pub use salient::{error_lines, excerpt};
pub use segment_plan::{render_outline, roll_up, rollups, stretches};
pub use segments::{Cut as SegmentCut, ROLLUP as SEGMENT_ROLLUP, SegmentNode, outline, segment};
pub use sent_view::SentView;
pub use state::{ContextState, PromptSnapshot, Replacement, ReplacementKind, StageCounters, SummaryState};
pub use summary::{summarize, summarize_reply};
pub use terms::{fts_query, similarity, terms};
pub use trajectory::{Trajectory, parse_trajectory, trajectory_line};
pub use transcript::{transcript_piece, transcript_piece_within};
pub use truncate::{Cut, Spill, TruncationLimits, TurnCut, plan_cut, plan_turn_cut, render_cut};
