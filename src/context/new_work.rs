//! Finished work leaves when it pays (CONTEXT.md §5): at a user-turn boundary, a request that
//! does not continue the work before it — a request of its own, in words mostly new to what the
//! assistant and its tools said since the previous request — makes everything before it finished
//! work. The cost model then weighs summarising that work now (one summary call reading the
//! cache, and the short rewrite after the system prompt) against reading it on every request
//! still to come; below the warning threshold too, when the saving wins by a clear margin. No
//! model call decides it: the words of the conversation do.

use std::collections::BTreeSet;

use super::budget::{BudgetLevel, ContextBudget};
use super::compact::{self, CompactionPlan};
use super::estimate::estimate_text_tokens;
#[cfg(test)]
use super::pipeline::Urgency;
use super::pipeline::{Pipeline, PreflightInput};
use super::terms::terms;
use crate::conversation::{Block, Message, Role};

/// What the decision saw, for tests and the replay's report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewWork {
    /// Distinct words of the request.
    pub terms: usize,
    /// Share of them the work since the previous request never used.
    pub novelty: f64,
}

/// Every word a message says: its text, its calls' arguments, its results whole.
fn words(message: &Message, into: &mut BTreeSet<String>) {
    for block in &message.content {
        match block {
            Block::Text { text } => into.extend(terms(text)),
            Block::ToolCall(call) => into.extend(terms(&call.arguments)),
            Block::ToolResult(result) => into.extend(terms(&result.content)),
            Block::Thinking(_) | Block::Image(_) => {}
        }
    }
}

impl Pipeline {
    /// Whether compaction summaries read the conversation in place (the session's own model):
    /// it makes a summary call cheaper, so finished work leaves sooner.
    pub fn set_summary_in_place(&mut self, in_place: bool) {
        self.summary_in_place = in_place;
    }

    /// How the user's latest message relates to the work before it, when it is the last message
    /// sent (the first request of a turn) and the assistant worked since the previous one.
    pub fn new_work(&self) -> Option<NewWork> {
        let entries = self.ledger.entries();
        let visible: Vec<usize> = (0..entries.len()).filter(|&i| self.state.is_visible(entries[i].seq)).collect();
        let (&last, before) = visible.split_last()?;
        if entries[last].role() != Role::User {
            return None;
        }
        let mut work = BTreeSet::new();
        for &i in before.iter().rev() {
            match entries[i].role() {
                Role::User => break,
                Role::Assistant | Role::Tool => words(&entries[i].message, &mut work),
            }
        }
        if work.is_empty() {
            return None;
        }
        let request = terms(&entries[last].message.text());
        let new = request.iter().filter(|t| !work.contains(*t)).count();
        Some(NewWork { terms: request.len(), novelty: new as f64 / request.len().max(1) as f64 })
    }

    /// Whether the pre-flight at `level` (a turn's first request; `tokens` about to be sent)
    /// summarises the finished work now, in the background, this request still fitting:
    /// whatever the estimate's calibration (the wait for usage after a compaction guards the
    /// window's thresholds, not this), never at the blocking level or while one is running.
    pub(super) fn finished_work_leaves(&self, input: &PreflightInput, level: BudgetLevel, tokens: u64) -> bool {
        level < BudgetLevel::Blocking
            && input.compaction_allowed
            && self.config.auto_compact
            && self.breaker_allows(input.now)
            && !input.compaction_running
            && self.finished_work_pays(input, tokens)
    }

    /// Whether the latest request turns to new work (see [`Pipeline::new_work`]).
    pub(super) fn turns_to_new_work(&self) -> bool {
        self.new_work()
            .is_some_and(|w| w.terms >= self.config.new_work_min_terms && w.novelty >= self.config.new_work_min_novelty)
    }

    /// The finished work before the latest request, summarised; `None` when there is none.
    pub fn plan_finished_work(&self) -> Option<CompactionPlan> {
        compact::plan_finished(&self.ledger, &self.state, &self.config)
    }

    /// Whether summarising the finished work now costs clearly less than reading it on every
    /// request still expected: the tokens it takes off each request, against one summary call
    /// (reading the request in place, or its transcript) and the rewrite of what follows the
    /// system prompt — the new continuation and the request itself.
    pub(super) fn finished_work_pays(&self, input: &PreflightInput, tokens: u64) -> bool {
        if !self.turns_to_new_work() {
            return false;
        }
        let Some(plan) = self.plan_finished_work() else { return false };
        let budget = compact::finished_budget(input.budget.window, self.config.summary_window_share) as u64;
        let request = self.ledger.entries().last().map_or(0, |e| e.tokens);
        // What stays: the system prompt and tools, the continuation (the summary and the
        // protected facts) and the request.
        let after = input.overhead + budget + self.calibrated(self.protected_tokens() + request);
        let saved = tokens.saturating_sub(after);
        if saved == 0 {
            return false;
        }
        let call = self.summary_call_cost(&plan, tokens, budget, &input.budget);
        let rewrite = self.cost.rewrite_cost(after.saturating_sub(input.overhead));
        let expected = self.horizon(&input.budget, after).expected_requests();
        self.cost.saving(saved, expected) > self.config.new_work_margin * (call + rewrite)
    }

    /// Rough tokens of the facts the continuation message always carries.
    fn protected_tokens(&self) -> u64 {
        estimate_text_tokens(self.protected.len() + super::view::CONTINUATION_CHARS, self.config.chars_per_token)
    }

    /// One summary call for `plan`, when the request about to be sent holds `tokens`: read in
    /// place (cache reads, and the instruction), or the transcript sent on its own.
    pub(super) fn summary_call_cost(
        &self,
        plan: &CompactionPlan,
        tokens: u64,
        budget: u64,
        limits: &ContextBudget,
    ) -> f64 {
        let cpt = self.config.chars_per_token;
        let prompt = estimate_text_tokens(compact::COMPACTION_PROMPT.len(), cpt);
        if self.summary_in_place && tokens + prompt + budget * 2 <= limits.window {
            return tokens as f64 * self.cost.read + self.cost.summary_call(prompt + 300, budget);
        }
        let previous = plan.previous_summary.as_deref().map_or(0, |s| estimate_text_tokens(s.len(), cpt));
        let read = (budget as f64 * plan.input_ratio) as u64;
        self.cost.summary_call(prompt + previous + plan.summarised_tokens.min(read), budget)
    }
}

#[cfg(test)]
#[path = "new_work_tests.rs"]
mod tests;
