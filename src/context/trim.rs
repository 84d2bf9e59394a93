//! Oldest-turn trimming (CONTEXT.md §6): the emergency stage at the blocking threshold. Drops
//! the oldest whole turns from the sent view — never the latest user turn, never part of a tool
//! group, never leaving a tool result first — and no LLM call. The user messages it drops are
//! carried verbatim, so the goal and corrections survive even this.
//!
//! When one long turn is all that is left, its oldest tool groups go, the latest one never.

use super::ledger::Ledger;
use super::state::ContextState;
use crate::conversation::Role;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrimPlan {
    /// Inclusive seq ranges to drop.
    pub ranges: Vec<(i64, i64)>,
    /// User messages dropped, to carry verbatim: (seq, text).
    pub carried: Vec<(i64, String)>,
    pub messages: u64,
    pub saved_tokens: u64,
}

/// Drop units, oldest first, until at least `need` tokens are saved or nothing more may go.
pub fn plan(ledger: &Ledger, state: &ContextState, sent_tokens: &[u64], need: u64) -> TrimPlan {
    let entries = ledger.entries();
    let visible: Vec<usize> = (0..entries.len()).filter(|&i| state.is_visible(entries[i].seq)).collect();
    // The latest user message still sent verbatim; none when a compaction carried it into the
    // summary, and then every unit is a tool group.
    let latest_user = visible.iter().rev().find(|&&i| entries[i].role() == Role::User).copied();
    // Units: runs of visible entries that may be dropped together. Before the latest user
    // message a unit is a whole turn; after it, a tool group (or a lone message).
    let mut units: Vec<Vec<usize>> = Vec::new();
    for &i in &visible {
        let starts = match latest_user {
            Some(latest) if i <= latest => entries[i].role() == Role::User,
            Some(_) | None => entries[i].starts_unit(),
        };
        match units.last_mut() {
            Some(unit) if !starts => unit.push(i),
            _ => units.push(vec![i]),
        }
    }
    let mut plan = TrimPlan::default();
    let last_unit = units.len().saturating_sub(1);
    for (n, unit) in units.iter().enumerate() {
        if plan.saved_tokens >= need || n == last_unit {
            break;
        }
        // The latest user message itself never goes: units after it start at an assistant.
        if latest_user.is_some_and(|latest| unit.contains(&latest)) {
            continue;
        }
        for &i in unit {
            plan.saved_tokens += sent_tokens[i];
            if entries[i].role() == Role::User {
                plan.carried.push((entries[i].seq, entries[i].message.text()));
            }
        }
        plan.messages += unit.len() as u64;
        plan.ranges.push((entries[unit[0]].seq, entries[unit[unit.len() - 1]].seq));
    }
    plan
}
