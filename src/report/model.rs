//! What a session report holds, whatever it was read from: every request with what it
//! carried and cost, what the pipeline did, and the session's outputs, topics and memories.

use serde::{Deserialize, Serialize};

use crate::context::StageCounters;

/// Two costs together; unknown only when both are.
pub(super) fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

/// Who made a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// The agent's own request.
    Turn,
    /// A compaction's summary, an extraction, a web page read: a call beside the turn.
    Auxiliary,
    /// A request of a subagent the session delegated to.
    Subagent,
    /// A one-token request that kept the prompt cache warm while the user was idle.
    KeepAlive,
}

impl RequestKind {
    pub fn label(self) -> &'static str {
        match self {
            RequestKind::Turn => "agent requests",
            RequestKind::Auxiliary => "auxiliary calls",
            RequestKind::Subagent => "subagents",
            RequestKind::KeepAlive => "keep-alive pings",
        }
    }

    pub fn of_purpose(purpose: &str) -> RequestKind {
        match purpose {
            "turn" => RequestKind::Turn,
            "keepalive" => RequestKind::KeepAlive,
            _ => RequestKind::Auxiliary,
        }
    }
}

/// The context a request carried, in four parts that add up to its prompt tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Parts {
    /// The system prompt (without memories) and the tool definitions.
    pub system: u64,
    pub memories: u64,
    /// The compaction summary and the user's own words carried beside it.
    pub summary: u64,
    pub messages: u64,
}

impl Parts {
    pub fn total(&self) -> u64 {
        self.system + self.memories + self.summary + self.messages
    }

    /// Estimated parts scaled so they add up to `total` (the tokens the provider counted);
    /// the last part takes the rounding.
    pub fn scaled_to(raw: [u64; 4], total: u64) -> Parts {
        let sum: u64 = raw.iter().sum();
        let mut out = raw;
        if sum > 0 && sum != total {
            let mut assigned = 0;
            for (i, p) in out.iter_mut().enumerate() {
                *p = if i == 3 { total.saturating_sub(assigned) } else { *p * total / sum };
                assigned += *p;
            }
        }
        Parts { system: out[0], memories: out[1], summary: out[2], messages: out[3] }
    }
}

/// The window and the thresholds in force at a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    pub window: u64,
    /// What a request may hold (the window less the reply's reserve).
    pub effective: u64,
    pub warning: u64,
    pub auto_compact: u64,
    pub blocking: u64,
}

/// One thing the pipeline did before a request, as stored with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageMark {
    /// `compaction`, `prune`, `dedup`, `trim` or `truncation`.
    pub stage: String,
    pub count: u64,
    pub saved_tokens: u64,
    pub detail: String,
}

impl StageMark {
    pub fn of(report: &crate::context::StageReport) -> StageMark {
        StageMark {
            stage: format!("{:?}", report.stage).to_lowercase(),
            count: report.count,
            saved_tokens: report.saved_tokens,
            detail: report.detail.clone(),
        }
    }
}

/// A drop in cache reads at a request, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakMark {
    /// `expected`, `ttl_expiry` or `unexpected`.
    pub kind: String,
    pub dropped_tokens: u64,
    pub reason: String,
}

/// One request of the session, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestPoint {
    pub kind: RequestKind,
    /// `turn`, `compaction`, `keepalive`, … as stored.
    pub purpose: String,
    pub model: String,
    /// RFC 3339, or the replay's own clock.
    pub at: String,
    /// Prompt tokens neither read from nor written to the cache.
    pub uncached: u64,
    pub read: u64,
    pub written: u64,
    pub output: u64,
    pub cost: Option<f64>,
    /// What the context held, for the agent's own requests recorded with it.
    pub context: Option<(Parts, Thresholds)>,
    /// What the pipeline did since the request before.
    pub marks: Vec<StageMark>,
    pub cache_break: Option<BreakMark>,
}

impl RequestPoint {
    pub fn prompt(&self) -> u64 {
        self.uncached + self.read + self.written
    }
}

/// A large tool output and what the pipeline did to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutputRow {
    pub tool: String,
    /// The command, path or pattern the call named.
    pub target: String,
    /// Tokens of the whole output.
    pub tokens: u64,
    /// Tokens of what the model was first sent.
    pub sent_tokens: u64,
    /// In words: "truncated when produced; then summarised by a compaction", …
    pub fate: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentLine {
    pub level: u32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub tokens: u64,
    pub summary: Option<String>,
    /// Still sent verbatim.
    pub shown: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactionLine {
    pub at: String,
    pub trigger: String,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryLine {
    pub id: i64,
    pub kind: String,
    pub title: String,
    pub content: String,
    pub pinned: bool,
    /// Why it is not injected as is (see `context::injection`).
    pub quarantined: Option<String>,
}

/// The session's sums: the same figures `/context` and the headless JSON show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    /// Dollars; `None` when no request had a price.
    pub cost_usd: Option<f64>,
    /// Share of prompt tokens read from cache.
    pub cache_hit_rate: Option<f64>,
    /// Prompt tokens of the last agent request.
    pub last_request_tokens: u64,
    pub keepalive_pings: u64,
    pub keepalive_usd: Option<f64>,
    /// The subagents' requests and cost, counted apart from the session's own.
    pub subagent_requests: u64,
    pub subagent_usd: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SessionReport {
    pub title: String,
    /// Session id, project, model: one line under the title.
    pub subtitle: String,
    pub generated_at: String,
    pub requests: Vec<RequestPoint>,
    /// What the pipeline did after the last request (a compaction that landed at the end).
    pub trailing: Vec<StageMark>,
    pub totals: Totals,
    pub counters: StageCounters,
    pub outputs: Vec<OutputRow>,
    pub segments: Vec<SegmentLine>,
    pub compactions: Vec<CompactionLine>,
    pub memories: Vec<MemoryLine>,
    /// A line under the figures when the source lacks something (an older session).
    pub notes: Vec<String>,
}
