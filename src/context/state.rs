//! The persisted context state of a session: everything that turns the stored history into the
//! sent view. Stored as one JSON document per session, so resume rebuilds exactly the same view.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::breaker::Breaker;

/// Why a tool result is sent as something other than its recorded content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplacementKind {
    /// Dedup tier 1: an identical later result.
    Duplicate,
    /// Dedup tier 2: the file was modified and read again.
    StaleRead,
    /// Dedup tier 3: a later full read contains this grep's matches.
    SubsumedGrep,
    /// Dedup: the file was modified after this read and not read again; the content is kept
    /// with a warning in front.
    StaleWarning,
    /// Pruning.
    Pruned,
}

impl ReplacementKind {
    pub fn is_dedup(&self) -> bool {
        match self {
            ReplacementKind::Duplicate
            | ReplacementKind::StaleRead
            | ReplacementKind::SubsumedGrep
            | ReplacementKind::StaleWarning => true,
            ReplacementKind::Pruned => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replacement {
    pub kind: ReplacementKind,
    /// The text sent instead (for `StaleWarning`, the line put in front of the content).
    pub text: String,
}

/// The latest compaction: messages up to `through_seq` are sent as this summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryState {
    /// The model-written summary (sections Goal … Critical Context).
    pub text: String,
    /// The last stored message it covers.
    pub through_seq: i64,
    /// How many compactions it has been through.
    pub generation: u32,
}

/// The user's own words carried verbatim past compaction and trimming, so the goal and every
/// correction survive whatever the summariser does.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedInstructions {
    /// (seq, text) of user messages no longer sent verbatim, oldest first.
    pub messages: Vec<(i64, String)>,
}

/// The parts of the system prompt frozen for a session, kept so a resume sends the same bytes
/// (and reads the provider's cache).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptSnapshot {
    /// `None` until the first request builds it; `Some("")` when there were no memories.
    pub memory_block: Option<String>,
    pub memory_ids: Vec<i64>,
    /// The environment layer as rendered at session start, and the day it was rendered.
    pub environment: Option<String>,
    pub environment_date: Option<String>,
}

/// Counters of what the stages did, cumulative over the session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounters {
    pub truncations: u64,
    pub dedup_replacements: u64,
    pub pruned_results: u64,
    pub compactions: u64,
    pub trimmed_messages: u64,
    pub compaction_failures: u64,
}

impl StageCounters {
    /// What happened since `earlier`.
    pub fn since(&self, earlier: &StageCounters) -> StageCounters {
        StageCounters {
            truncations: self.truncations.saturating_sub(earlier.truncations),
            dedup_replacements: self.dedup_replacements.saturating_sub(earlier.dedup_replacements),
            pruned_results: self.pruned_results.saturating_sub(earlier.pruned_results),
            compactions: self.compactions.saturating_sub(earlier.compactions),
            trimmed_messages: self.trimmed_messages.saturating_sub(earlier.trimmed_messages),
            compaction_failures: self.compaction_failures.saturating_sub(earlier.compaction_failures),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextState {
    /// Tool results sent as something else, by call id.
    #[serde(default)]
    pub replacements: BTreeMap<String, Replacement>,
    /// Tool calls whose long arguments are sent shrunk, by call id: the shrunk JSON.
    #[serde(default)]
    pub shrunk_arguments: BTreeMap<String, String>,
    #[serde(default)]
    pub summary: Option<SummaryState>,
    #[serde(default)]
    pub carried: CarriedInstructions,
    /// Stored messages dropped from the sent view by trimming, as inclusive seq ranges.
    #[serde(default)]
    pub trimmed: Vec<(i64, i64)>,
    /// Messages sent clipped because even after trimming the request did not fit: the text
    /// sent for a user message or a tool result, by seq.
    #[serde(default)]
    pub clipped: BTreeMap<i64, String>,
    #[serde(default)]
    pub counters: StageCounters,
    #[serde(default)]
    pub breaker: Breaker,
    /// Set by a compaction, cleared by the next reported usage: the last usage stored is of the
    /// history before it, so a resumed session does not calibrate on it.
    #[serde(default)]
    pub awaiting_usage: bool,
    #[serde(default)]
    pub prompt: PromptSnapshot,
    /// Recall blocks found for user messages (by seq), sent after the message's text.
    #[serde(default)]
    pub recall: BTreeMap<i64, String>,
    /// The outline of earlier segments shown in the continuation message: it changes only
    /// when the continuation is rewritten anyway (a compaction, a trim), never between, so it
    /// does not break the cached prefix.
    #[serde(default)]
    pub outline: String,
}

impl ContextState {
    /// Whether trimming dropped `seq`.
    pub fn is_trimmed(&self, seq: i64) -> bool {
        self.trimmed.iter().any(|&(a, b)| a <= seq && seq <= b)
    }

    /// Whether `seq` is sent verbatim (not summarised, not trimmed).
    pub fn is_visible(&self, seq: i64) -> bool {
        self.summary.as_ref().is_none_or(|s| seq > s.through_seq) && !self.is_trimmed(seq)
    }

    pub fn add_trimmed(&mut self, first: i64, last: i64) {
        self.trimmed.push((first, last));
        self.trimmed.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(self.trimmed.len());
        for (a, b) in self.trimmed.drain(..) {
            match merged.last_mut() {
                Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.trimmed = merged;
    }
}
