//! Making a request fit when nothing cheaper can: trimming the oldest turns (CONTEXT.md §6),
//! then clipping what is left in the view. Both rewrite from the continuation message, so every
//! pending dedup decision is folded into the same rewrite.

use super::pipeline::{Pipeline, Stage, StageReport, thousands};
use super::trim;
use crate::conversation::Role;

/// A clipped message keeps at least this many characters.
const KEEP_CHARS: usize = 600;

impl Pipeline {
    /// Drop oldest turns to save at least `need` tokens.
    pub fn trim(&mut self, need: u64) -> Option<StageReport> {
        let plan = trim::plan(&self.ledger, &self.state, &self.sent_tokens, need);
        if plan.ranges.is_empty() {
            return None;
        }
        for (a, b) in &plan.ranges {
            self.state.add_trimmed(*a, *b);
        }
        let kept_words = !plan.carried.is_empty();
        self.state.carried.messages.extend(plan.carried);
        self.state.counters.trimmed_messages += plan.messages;
        self.rewrite_continuation();
        self.refresh_twins();
        // Everything after the continuation is sent again anyway.
        let folded = self.apply_dedup_from(0).map(|r| r.saved_tokens).unwrap_or(0);
        Some(StageReport {
            stage: Stage::Trim,
            count: plan.messages,
            saved_tokens: plan.saved_tokens + folded,
            detail: format!(
                "dropped the {} oldest messages (−{} tokens){}",
                plan.messages,
                thousands(plan.saved_tokens + folded),
                if kept_words { "; the user's instructions in them are kept verbatim" } else { "" }
            ),
        })
    }

    /// Last resort: clip the largest visible tool results, then the latest user message, to
    /// what saves at least `need` tokens (a few hundred characters of each stay).
    pub(super) fn clip(&mut self, need: u64) -> Option<StageReport> {
        let cpt = self.config.chars_per_token;
        let mut saved = 0u64;
        let mut clipped = std::collections::BTreeSet::new();
        for _ in 0..64 {
            if saved >= need {
                break;
            }
            let entries = self.ledger.entries();
            let text_of = |i: usize| -> Option<String> {
                let m = self.sent[i].as_ref().unwrap_or(&entries[i].message);
                match entries[i].role() {
                    Role::Tool => m.tool_result().map(|r| r.content.clone()),
                    Role::User => Some(m.text()),
                    Role::Assistant => None,
                }
            };
            let candidate = (0..entries.len())
                .filter(|&i| self.state.is_visible(entries[i].seq))
                .filter_map(|i| {
                    let len = text_of(i)?.len();
                    (len > KEEP_CHARS * 2).then_some((entries[i].role() == Role::User, len, i))
                })
                // Tool results before the user's words; the largest first.
                .min_by_key(|&(is_user, len, _)| (is_user, std::cmp::Reverse(len)));
            let Some((_, len, i)) = candidate else { break };
            let Some(current) = text_of(i) else { break };
            let seq = entries[i].seq;
            // Measured on the whole view: a clipped output's repeat is sent whole again.
            let before = self.visible_tokens();
            // Clip to what is still needed, never below the floor nor above half.
            let still = ((need - saved) as f64 * cpt) as usize;
            let target = len.saturating_sub(still).clamp(KEEP_CHARS, len / 2);
            self.state.clipped.insert(seq, super::truncate::clip_to_fit(&current, target));
            self.refresh(i);
            self.refresh_twins();
            saved += before.saturating_sub(self.visible_tokens());
            clipped.insert(seq);
        }
        if clipped.is_empty() {
            return None;
        }
        let n = clipped.len();
        Some(StageReport {
            stage: Stage::Trim,
            count: n as u64,
            saved_tokens: saved,
            detail: format!(
                "clipped {n} message{} in what is sent to fit the window (−{} tokens; the stored text is whole)",
                if n == 1 { "" } else { "s" },
                thousands(saved)
            ),
        })
    }
}
