//! What the agent reports about the context: the status line's figures and the `/context` view.

use serde::Serialize;

use crate::context::{BudgetLevel, ContextBudget};
use crate::conversation::Usage;

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

/// The figures of the status line's context bar: one number, shared with `/context`, the
/// thresholds and headless JSON; and what the session has cost so far.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ContextStatus {
    /// Tokens the next request is estimated to carry (calibrated on the provider's usage).
    pub tokens: u64,
    pub window: u64,
    pub level: BudgetLevel,
    /// A compaction is running in the background.
    pub compacting: bool,
    /// Share of the last request's prompt read from cache, when the provider reported it.
    pub cache_hit_rate: Option<f64>,
    /// Dollars the session has cost at the catalog's prices; `None` when no request had a
    /// price (local models show tokens only).
    pub cost_usd: Option<f64>,
}

impl ContextStatus {
    pub fn percent(&self) -> u64 {
        crate::conversation::percent_of(self.tokens, self.window)
    }
}

/// One part of what the model sees, for the `/context` view; the parts add up to the total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextPart {
    /// "system prompt", "tools", "memories", "summary", "messages", …
    pub name: String,
    pub tokens: u64,
    /// Counted by the model's own tokenizer (a llama-server's); otherwise estimated.
    pub exact: bool,
}

/// Cache figures for the `/context` view.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CacheReport {
    /// Share of prompt tokens read from cache over the session's agent requests.
    pub session_hit_rate: Option<f64>,
    pub last_request: Option<Usage>,
    /// Cache breaks seen, newest last, each explained in one line.
    pub breaks: Vec<String>,
    /// The pings that kept the cache warm while the user was idle.
    pub keep_alive: KeepAliveReport,
}

/// Keep-alive pings since the session was opened, for `/context`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KeepAliveReport {
    pub pings: u64,
    /// Dollars they cost; `None` when none was priced.
    pub cost_usd: Option<f64>,
    /// The last decision, in words: why a ping was sent or not.
    pub last: Option<String>,
}

/// One segment of the session's history, for the `/context` tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentInfo {
    pub level: u32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub tokens: u64,
    pub summarized: bool,
    /// Still sent verbatim (not compacted or trimmed away).
    pub shown: bool,
}

/// The answer to [`UserCommand::DescribeContext`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContextBreakdown {
    pub parts: Vec<ContextPart>,
    pub total: u64,
    pub budget: ContextBudget,
    pub level: BudgetLevel,
    pub counters: ContextReport,
    pub cache: CacheReport,
    /// The segment tree, highest level first.
    pub segments: Vec<SegmentInfo>,
    pub cost: CostReport,
    /// The instruction files (AGENTS.md, CLAUDE.md) in the prompt, and those left out.
    pub instruction_files: InstructionFilesReport,
}

/// Which instruction files the prompt holds, and which exist but were skipped, with why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InstructionFilesReport {
    /// Paths relative to the project root.
    pub read: Vec<String>,
    pub skipped: Vec<SkippedFile>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    pub path: String,
    /// Says why, in words: "links outside the project (to …); only files inside it are read".
    pub reason: String,
}

impl InstructionFilesReport {
    pub fn of(scan: &crate::prompt::InstructionScan) -> InstructionFilesReport {
        InstructionFilesReport {
            read: scan.files.iter().map(|f| f.path.clone()).collect(),
            skipped: scan
                .skipped
                .iter()
                .map(|s| SkippedFile { path: s.path.clone(), reason: s.reason.to_string() })
                .collect(),
        }
    }
}

/// Money, for `/context`: `None` where no price is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CostReport {
    pub session_usd: Option<f64>,
    pub last_request_usd: Option<f64>,
}
