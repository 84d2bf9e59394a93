//! Deduplication (CONTEXT.md §3), decided incrementally as results arrive and applied when it
//! pays: stale file reads, greps subsumed by a later full read.
//!
//! Exact duplicates are not decided here: the later copy of an output already shown is sent as
//! a reference to the earlier one from the start (`Pipeline::refresh`), which changes nothing
//! already sent; the seed replaced the earlier copy, a rewrite of everything after it.
//!
//! Fixed against the seed: ranges matter; a failed write is not a write; order is by position in
//! the history; decisions come from the recorded history only; a stale read with no later
//! re-read is annotated rather than left misleading. Idempotent: deciding again changes nothing.

use std::collections::{BTreeMap, HashMap};

use super::facts::{Effect, LineRange};
use super::ledger::Ledger;
use super::state::{Replacement, ReplacementKind};

pub const STALE_READ: &str = "[Superseded -- file was re-read after modification]";

pub fn subsumed_grep(path: &str) -> String {
    format!("[Superseded -- content included in later file_read of {path}]")
}

pub fn stale_warning(path: &str) -> String {
    format!("[stale: {path} was modified after this read]")
}

#[derive(Clone, Debug)]
enum FileEvent {
    Read {
        index: usize,
        range: LineRange,
    },
    Write,
    /// A grep of this single file.
    Grep {
        index: usize,
    },
}

/// Decisions waiting to be applied, by call id, and what applying them would save.
#[derive(Debug, Default)]
pub struct DedupIndex {
    files: HashMap<String, Vec<FileEvent>>,
    pending: BTreeMap<String, (usize, Replacement)>,
}

impl DedupIndex {
    /// Note the entry just pushed at `index`; decide what it supersedes.
    pub fn observe(&mut self, ledger: &Ledger, index: usize) {
        let entry = &ledger.entries()[index];
        let Some(facts) = &entry.facts else { return };
        if facts.is_error {
            return;
        }
        match &facts.effect {
            Effect::Read { path, range } => {
                let events = self.files.entry(path.clone()).or_default();
                let mut decisions = Vec::new();
                let mut written_since = false;
                // Walk back from the newest event: reads before a write that this read covers
                // are stale; greps of this file with no write in between are subsumed by a
                // read of the whole file.
                for event in events.iter().rev() {
                    match event {
                        FileEvent::Write => written_since = true,
                        FileEvent::Read { index: i, range: r } if written_since && range.covers(r) => {
                            decisions.push((*i, ReplacementKind::StaleRead, STALE_READ.to_string()))
                        }
                        FileEvent::Grep { index: i } if !written_since && range.is_whole() => {
                            decisions.push((*i, ReplacementKind::SubsumedGrep, subsumed_grep(path)))
                        }
                        FileEvent::Read { .. } | FileEvent::Grep { .. } => {}
                    }
                }
                events.push(FileEvent::Read { index, range: *range });
                for (i, kind, text) in decisions {
                    self.decide(ledger, i, kind, text);
                }
            }
            Effect::Write { path } => {
                let events = self.files.entry(path.clone()).or_default();
                let reads: Vec<usize> = events
                    .iter()
                    .filter_map(|e| if let FileEvent::Read { index, .. } = e { Some(*index) } else { None })
                    .collect();
                events.push(FileEvent::Write);
                for i in reads {
                    self.decide(ledger, i, ReplacementKind::StaleWarning, stale_warning(path));
                }
            }
            Effect::Search { scope, .. } if greps_one_file(scope, &entry.message) => {
                self.files.entry(scope.clone()).or_default().push(FileEvent::Grep { index });
            }
            Effect::Search { .. } | Effect::List { .. } | Effect::Command { .. } | Effect::Other => {}
        }
    }

    /// Record a decision unless a stronger one stands: a replacement beats a stale warning.
    fn decide(&mut self, ledger: &Ledger, index: usize, kind: ReplacementKind, text: String) {
        let Some(facts) = &ledger.entries()[index].facts else { return };
        let id = facts.call_id.clone();
        if let Some((_, existing)) = self.pending.get(&id)
            && existing.kind != ReplacementKind::StaleWarning
        {
            return;
        }
        self.pending.insert(id, (index, Replacement { kind, text }));
    }

    /// Decisions not yet in `applied`, with the tokens each saves (negative for a warning).
    pub fn unapplied<'a>(
        &'a self,
        applied: &'a BTreeMap<String, Replacement>,
    ) -> impl Iterator<Item = (&'a str, usize, &'a Replacement)> + 'a {
        self.pending.iter().filter_map(move |(id, (index, r))| match applied.get(id) {
            None => Some((id.as_str(), *index, r)),
            Some(old) if old.kind == ReplacementKind::StaleWarning && r.kind != ReplacementKind::StaleWarning => {
                Some((id.as_str(), *index, r))
            }
            Some(_) => None,
        })
    }
}

/// A grep whose every match line is in `scope`, i.e. it searched one file.
fn greps_one_file(scope: &str, message: &crate::conversation::Message) -> bool {
    let Some(result) = message.tool_result() else { return false };
    let mut lines = result.content.lines().filter(|l| !l.starts_with('[')).peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            l.strip_prefix(scope)
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|rest| rest.split(':').next().is_some_and(|n| n.parse::<u64>().is_ok()))
        })
}

#[cfg(test)]
#[path = "dedup_tests.rs"]
mod tests;
