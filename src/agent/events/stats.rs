//! How a turn ended and what it cost.

use serde::Serialize;

use super::context::ContextReport;
use crate::conversation::Usage;

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
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TurnStats {
    /// Model requests made by the agent (auxiliary calls not included).
    pub requests: u32,
    /// Usage of every request, auxiliary ones included.
    pub usage: Usage,
    pub all_requests: u32,
    pub denied_tool_calls: u32,
    pub context: ContextReport,
    pub cache: CacheStats,
    /// Dollars for every request counted in `usage`, at the catalog's prices; `None` when no
    /// request had a price.
    pub cost_usd: Option<f64>,
}

impl TurnStats {
    /// Add what background work did after this summary was made ([`AgentEvent::Settled`]):
    /// its calls, usage and cost, and the context stages it ran.
    pub fn absorb(&mut self, later: &TurnStats) {
        self.requests += later.requests;
        self.all_requests += later.all_requests;
        self.usage.add(&later.usage);
        self.denied_tool_calls += later.denied_tool_calls;
        self.cost_usd = crate::agent::spend::add_cost(self.cost_usd, later.cost_usd);
        let (c, l) = (&mut self.context, &later.context);
        c.truncations += l.truncations;
        c.dedup_replacements += l.dedup_replacements;
        c.pruned_results += l.pruned_results;
        c.compactions += l.compactions;
        c.trimmed_messages += l.trimmed_messages;
        c.compaction_failures += l.compaction_failures;
        self.cache.read_share = self.usage.cache_hit_rate();
    }
}

/// Prompt-cache figures of a run, for headless JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacheStats {
    /// Share of the run's prompt tokens read from cache.
    pub read_share: f64,
    pub expected_breaks: u64,
    pub ttl_breaks: u64,
    pub unexpected_breaks: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TurnSummary {
    pub outcome: TurnOutcome,
    pub stats: TurnStats,
}
