//! The context state after a conversation rewind: every message from `seq` on leaves what is
//! sent, so every decision that rested on those messages goes with them, and nothing about the
//! messages that stay changes that does not have to (their cached prefix is worth keeping).
//!
//! Pure: the caller gives the state, the rewind's seq, the summary that stands before it (from
//! the compaction log) and the messages that stay; [`rewind_state`] returns the state to save.
//! A resume loads the same stored messages and this saved state, so it sends what the session
//! that rewound would have sent.

use std::collections::{BTreeMap, HashSet};

use super::dedup::DedupIndex;
use super::ledger::Ledger;
use super::state::{ContextState, Replacement, ReplacementKind, SummaryState};
use crate::conversation::Message;

/// The state once every message at or after `seq` has been rewound.
///
/// - `summary`: one that covers a rewound message (`through_seq >= seq`) summarised it, so it
///   is replaced by `earlier` (the latest compaction wholly before `seq`), or none.
/// - `trimmed`: ranges are cut to end before `seq`.
/// - `carried`: the user's words stay carried only when they are still out of the verbatim
///   view (an older summary shows more verbatim) and were not rewound.
/// - `clipped`, `recall`: entries of rewound messages go.
/// - `replacements`: those of rewound calls go; a deduplication of a call that stays goes when
///   the messages that stay no longer justify it (the later read or write that made it stale
///   was rewound); pruning of a call that stays stays (it was about age, not what came after).
/// - `shrunk_arguments`: those of rewound calls go.
/// - `outline`: cleared when the summary or the trimmed ranges changed (it listed what they
///   hid); the next rewrite of the continuation takes a fresh one.
/// - `awaiting_usage`: cleared when the summary changed (the compaction it waited on is gone).
/// - `counters`, `breaker`, `prompt` stay: they count what happened, guard against failing
///   compactions, and freeze the system prompt so the cached prefix holds.
pub fn rewind_state(
    state: &ContextState,
    seq: i64,
    earlier: Option<SummaryState>,
    live: &[(i64, Message)],
) -> ContextState {
    let live: Vec<&(i64, Message)> = live.iter().filter(|(s, _)| *s < seq).collect();
    let mut out = state.clone();

    let summary_rewound = state.summary.as_ref().is_some_and(|s| s.through_seq >= seq);
    if summary_rewound {
        out.summary = earlier.filter(|e| e.through_seq < seq);
    }
    out.trimmed = state
        .trimmed
        .iter()
        .filter(|&&(first, _)| first < seq)
        .map(|&(first, last)| (first, last.min(seq - 1)))
        .collect();
    let trimmed_changed = out.trimmed != state.trimmed;
    out.carried.messages =
        state.carried.messages.iter().filter(|(s, _)| *s < seq && !out.is_visible(*s)).cloned().collect();
    out.clipped.retain(|s, _| *s < seq);
    out.recall.retain(|s, _| *s < seq);

    let calls: HashSet<&str> = live.iter().flat_map(|(_, m)| m.tool_calls().map(|c| c.id.as_str())).collect();
    let results: HashSet<&str> = live.iter().filter_map(|(_, m)| m.tool_result().map(|r| r.call_id.as_str())).collect();
    let justified = dedup_decisions(&live);
    out.replacements = state
        .replacements
        .iter()
        .filter(|(id, r)| {
            results.contains(id.as_str()) && (!r.kind.is_dedup() || still_justified(r, justified.get(*id)))
        })
        .map(|(id, r)| (id.clone(), r.clone()))
        .collect();
    out.shrunk_arguments.retain(|id, _| calls.contains(id.as_str()));

    if summary_rewound || trimmed_changed {
        out.outline = String::new();
    }
    if summary_rewound {
        out.awaiting_usage = false;
    }
    out
}

/// What deduplication decides from the messages that stay alone, by call id.
fn dedup_decisions(live: &[&(i64, Message)]) -> BTreeMap<String, ReplacementKind> {
    // Token figures play no part in the decisions: any rate does.
    let mut ledger = Ledger::new(4.0);
    let mut index = DedupIndex::default();
    for (seq, message) in live {
        let i = ledger.push(*seq, message.clone());
        index.observe(&ledger, i);
    }
    let none = BTreeMap::new();
    index.unapplied(&none).map(|(id, _, r)| (id.to_string(), r.kind.clone())).collect()
}

/// Whether a deduplication applied before the rewind still stands on what stays: the same
/// decision, or a stale warning where the read is now superseded outright (the write that
/// made it stale stayed).
fn still_justified(applied: &Replacement, decided: Option<&ReplacementKind>) -> bool {
    match (&applied.kind, decided) {
        (_, None) => false,
        (kind, Some(decided)) if kind == decided => true,
        (ReplacementKind::StaleWarning, Some(ReplacementKind::StaleRead)) => true,
        (
            ReplacementKind::Duplicate
            | ReplacementKind::StaleRead
            | ReplacementKind::SubsumedGrep
            | ReplacementKind::StaleWarning
            | ReplacementKind::Pruned,
            Some(_),
        ) => false,
    }
}

#[cfg(test)]
#[path = "rewind_tests.rs"]
mod tests;
