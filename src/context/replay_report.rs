//! What a replay reports: every request and auxiliary call, priced, the totals, and the
//! requests as they would be sent, for dumps.

use serde::Serialize;

use super::budget::BudgetLevel;
use super::pipeline::StageReport;
use crate::conversation::Message;

/// Characters per token of the simulated provider: the common figure for English and code on
/// current tokenizers, and the one `../shared/bench/costsim.py` prices with.
pub const USAGE_CHARS_PER_TOKEN: f64 = 4.0;
/// Framing tokens per message in the simulated provider's count (costsim's figure).
pub(super) const USAGE_MESSAGE_OVERHEAD: u64 = 4;
/// Tool definitions of a coding agent, as costsim counts them.
pub const TOOL_SCHEMA_TOKENS: u64 = 1_500;

/// One request of the replay.
#[derive(Clone, Debug, Serialize)]
pub struct RequestReport {
    pub index: usize,
    pub messages: usize,
    /// Prompt tokens sent, as the simulated provider counts them.
    pub tokens: u64,
    /// The pipeline's calibrated estimate before sending.
    pub estimate: u64,
    pub level: BudgetLevel,
    pub stages: Vec<StageReport>,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost: Option<f64>,
    pub violations: Vec<String>,
    /// Of `tokens`: the system prompt and tools, the continuation (summary and carried
    /// words), and the messages — for the session report's context chart.
    pub parts: RequestParts,
}

/// What a replayed request carried, in the provider's tokens.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RequestParts {
    pub system_and_tools: u64,
    pub summary: u64,
    pub messages: u64,
}

/// An auxiliary (compaction) call made before request `before`.
#[derive(Clone, Debug, Serialize)]
pub struct AuxReport {
    pub before: usize,
    pub tokens: u64,
    /// Of `tokens`, read from the cache (a call reading the request before it in place).
    pub cache_read_tokens: u64,
    pub max_tokens: u32,
    pub output_tokens: u64,
    pub cost: Option<f64>,
    pub violations: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplayTotals {
    pub requests: usize,
    pub tokens_sent: u64,
    pub largest_request: u64,
    pub truncations: u64,
    pub dedup_replacements: u64,
    pub pruned_results: u64,
    pub compactions: u64,
    pub compaction_failures: u64,
    pub trimmed_messages: u64,
    pub aux_requests: usize,
    pub aux_input_tokens: u64,
    pub aux_output_tokens: u64,
    pub cache_read_share: f64,
    pub cost: Option<f64>,
    pub violations: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplayReport {
    pub window: u64,
    pub messages: usize,
    pub skipped_lines: usize,
    pub orphans: usize,
    pub requests: Vec<RequestReport>,
    pub aux: Vec<AuxReport>,
    pub totals: ReplayTotals,
    /// What the session report reads besides the requests (not part of the JSON report).
    #[serde(skip)]
    pub end: ReplayEnd,
}

/// The replay's state at its end, for the session report: the context state, the segments
/// with their lines, and the text first sent for each tool result that was truncated.
#[derive(Clone, Debug, Default)]
pub struct ReplayEnd {
    pub state: super::state::ContextState,
    pub segments: Vec<super::segments::SegmentNode>,
    pub truncated: std::collections::BTreeMap<String, usize>,
    /// Each compaction's summary, with the request it landed before.
    pub summaries: Vec<(usize, String)>,
}

/// A request as it would be sent, for dumping: `aux` numbers auxiliary calls before request
/// `index`; `reply` is the auxiliary call's answer.
pub struct DumpedRequest {
    pub index: usize,
    pub aux: Option<usize>,
    pub system: String,
    pub messages: Vec<Message>,
    pub reply: Option<String>,
}
