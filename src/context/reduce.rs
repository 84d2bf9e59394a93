//! The pipeline's economic decisions: which pending reductions (dedup, pruning) pay for the
//! rewrite they cause, and whether a compaction is due. Every change to what was already sent
//! is weighed with the [`CostModel`]: the tokens after the change are written again, once; the
//! tokens removed are not read again on the requests still to come before the next compaction.

use super::budget::ContextBudget;
use super::compact::{self, CompactionPlan};
use super::cost::{CostModel, Horizon, Reduction, choose};
use super::estimate::MESSAGE_OVERHEAD_TOKENS;
use super::estimate::estimate_text_tokens;
use super::pipeline::{Pipeline, PreflightInput, Stage, StageReport, thousands};
use super::prune::{self, PruneAction};
use super::state::{Replacement, ReplacementKind};

/// Requests ahead a compaction is started: it runs in the background while the current request
/// is answered and lands before the next one, the one expected to cross the blocking threshold
/// (when a larger step crosses it sooner, the compaction is awaited instead).
const COMPACTION_LEAD_REQUESTS: u64 = 1;

impl Pipeline {
    /// What the provider charges, for every decision to rewrite (from the model catalog's
    /// prices and whether the provider caches prompts; see [`CostModel`]).
    pub fn set_cost_model(&mut self, model: CostModel) {
        self.cost = model;
    }

    pub fn cost_model(&self) -> &CostModel {
        &self.cost
    }

    /// How long a saving made now lasts, from what the session has done so far.
    pub(super) fn horizon(&self, budget: &ContextBudget, tokens_after: u64) -> Horizon {
        Horizon {
            requests_so_far: self.requests,
            share: self.config.expected_requests_share,
            growth: self.growth(),
            room: budget.auto_compact.saturating_sub(tokens_after),
        }
    }

    /// Tokens the history grows by per request: the session's average, or the last step's
    /// when that was larger (a saving is felt until the next compaction; err short).
    pub(super) fn growth(&self) -> u64 {
        let last = self.calibration.map(|c| self.messages_tokens().saturating_sub(c.messages)).unwrap_or(0);
        self.average_growth().max(last)
    }

    /// The session's average growth per request.
    pub(super) fn average_growth(&self) -> u64 {
        let total: u64 = self.ledger.entries().iter().map(|e| e.tokens).sum();
        total / self.requests.max(1)
    }

    /// Dedup decisions waiting to be applied to visible results: (entry, replacement, saving).
    fn pending_dedup(&self) -> Vec<(String, usize, Replacement, i64)> {
        let entries = self.ledger.entries();
        self.dedup
            .unapplied(&self.state.replacements)
            .filter(|(_, i, _)| self.state.is_visible(entries[*i].seq))
            .map(|(id, i, r)| {
                let now = self.sent_tokens[i] as i64;
                let after = match r.kind {
                    ReplacementKind::StaleWarning => now + self.tokens_of_text(r.text.len() + 1) as i64,
                    ReplacementKind::Duplicate
                    | ReplacementKind::StaleRead
                    | ReplacementKind::SubsumedGrep
                    | ReplacementKind::Pruned => (self.tokens_of_text(r.text.len()) + MESSAGE_OVERHEAD_TOKENS) as i64,
                };
                (id.to_string(), i, r.clone(), now - after)
            })
            .collect()
    }

    /// Tokens sent from visible entry `i` on.
    fn suffix_from(&self, i: usize) -> u64 {
        let entries = self.ledger.entries();
        (i..entries.len()).filter(|&j| self.state.is_visible(entries[j].seq)).map(|j| self.sent_tokens[j]).sum()
    }

    /// At or above the warning threshold: the pending dedup decisions and the pruning the
    /// pressure calls for, applied from the position where that pays best, if any does.
    pub(super) fn reduce(&mut self, budget: &ContextBudget, tokens: u64) -> Vec<StageReport> {
        let dedup = self.pending_dedup();
        let prune_plan = if self.config.prune {
            // Aim a tenth of the effective window below the threshold, so the next few requests
            // do not cross it again.
            let target = tokens.saturating_sub(budget.warning) + 1 + budget.effective / 10;
            prune::plan(&self.ledger, &self.state, &self.config, &self.sent_tokens, target, budget.effective)
        } else {
            prune::PrunePlan::default()
        };
        let dedup_total: i64 = dedup.iter().map(|d| d.3).sum();
        let mut reductions: Vec<Reduction> =
            prune_plan.actions.iter().map(|a| Reduction { position: a.index(), tokens: a.saved() }).collect();
        // Dedup alone is worth a rewrite only from the configured minimum saving.
        if dedup_total >= self.config.dedup_min_savings_tokens as i64 || !reductions.is_empty() {
            reductions
                .extend(dedup.iter().filter(|d| d.3 > 0).map(|d| Reduction { position: d.1, tokens: d.3 as u64 }));
        }
        let total: u64 = reductions.iter().map(|r| r.tokens).sum();
        let horizon = self.horizon(budget, tokens.saturating_sub(total));
        let Some(choice) = choose(&reductions, |i| self.suffix_from(i), &self.cost, horizon.requests()) else {
            return Vec::new();
        };
        let mut reports = Vec::new();
        reports.extend(self.apply_dedup_from(choice.from));
        let actions: Vec<PruneAction> = prune_plan.actions.into_iter().filter(|a| a.index() >= choice.from).collect();
        if !actions.is_empty() {
            reports.push(self.apply_prune(actions));
        }
        reports
    }

    /// Whether to start a compaction below the blocking threshold: only when the window will
    /// force one within the requests it takes to land, at the session's usual growth. Earlier
    /// would be a bet that the session goes on long enough to repay the summary and the
    /// rewrite (a session that ends first never needed it), and a compaction loses detail the
    /// verbatim history has: not a bet to make on an estimate.
    pub(super) fn compaction_due(&self, input: &PreflightInput, tokens: u64) -> bool {
        tokens + COMPACTION_LEAD_REQUESTS * self.calibrated(self.average_growth()) >= input.budget.blocking
    }

    /// Whether compacting along `plan` now, from the warning threshold on but before the window
    /// forces it, is expected to cost less than waiting (see
    /// [`CostModel::early_compaction_pays`](super::cost::CostModel::early_compaction_pays)):
    /// the tokens it takes off every later request against the summariser call and the
    /// rewrite of what follows the first message, at the session's growth per request.
    pub(super) fn compaction_pays(&self, input: &PreflightInput, tokens: u64, plan: &CompactionPlan) -> bool {
        let cpt = self.config.chars_per_token;
        let text_tokens = |chars: usize| estimate_text_tokens(chars, cpt);
        let entries = self.ledger.entries();
        let removed: u64 = (0..entries.len())
            .filter(|&i| entries[i].seq <= plan.through_seq && self.state.is_visible(entries[i].seq))
            .map(|i| self.sent_tokens[i])
            .sum();
        let budget = compact::plan_budget(plan, input.budget.window) as u64;
        let previous = plan.previous_summary.as_deref().map_or(0, |s| text_tokens(s.len()));
        let carried: u64 = plan.carried.iter().map(|(_, t)| text_tokens(t.len())).sum();
        // What every later request carries less, in the provider's tokens.
        let span = self.calibrated((removed + previous).saturating_sub(budget + carried));
        let after = tokens.saturating_sub(span);
        // The first message is sent again as it was, so the cache still holds everything up to
        // it; the rest of the request after the compaction is written again.
        let first = self
            .state
            .carried
            .messages
            .first()
            .map(|(_, t)| t.as_str())
            .or_else(|| plan.carried.first().map(|(_, t)| t.as_str()));
        let kept_prefix = input.overhead + first.map_or(0, |t| text_tokens(t.len()));
        let call = self.summary_call_cost(plan, tokens, budget, &input.budget);
        let cost = call + self.cost.rewrite_cost(after.saturating_sub(kept_prefix));
        let expected = self.horizon(&input.budget, after).expected_requests();
        let growth = self.calibrated(self.average_growth());
        self.cost.early_compaction_pays(span, cost, growth, expected, self.config.early_compaction_margin)
    }

    /// Rough tokens in the provider's count, when usage has calibrated the estimate (the rough
    /// rate errs high).
    pub(super) fn calibrated(&self, rough: u64) -> u64 {
        match self.calibration {
            Some(c) if c.raw > 0 && c.reported < c.raw => (rough as f64 * c.reported as f64 / c.raw as f64) as u64,
            Some(_) | None => rough,
        }
    }

    /// Apply the pending dedup decisions for entries from `from` on (all of them from 0).
    pub(super) fn apply_dedup_from(&mut self, from: usize) -> Option<StageReport> {
        let decisions: Vec<(String, usize, Replacement)> = self
            .dedup
            .unapplied(&self.state.replacements)
            .filter(|(_, i, _)| *i >= from)
            .map(|(id, i, r)| (id.to_string(), i, r.clone()))
            .collect();
        if decisions.is_empty() {
            return None;
        }
        let before: u64 = decisions.iter().map(|(_, i, _)| self.sent_tokens[*i]).sum();
        let mut after = 0;
        for (id, i, replacement) in &decisions {
            self.state.replacements.insert(id.clone(), replacement.clone());
            self.refresh(*i);
            after += self.sent_tokens[*i];
        }
        self.refresh_twins();
        let count = decisions.len() as u64;
        self.state.counters.dedup_replacements += count;
        let saved = before.saturating_sub(after);
        Some(StageReport {
            stage: Stage::Dedup,
            count,
            saved_tokens: saved,
            detail: format!("replaced {count} superseded tool results (−{} tokens)", thousands(saved)),
        })
    }

    fn apply_prune(&mut self, actions: Vec<PruneAction>) -> StageReport {
        let mut pruned = 0u64;
        let mut shrunk = 0u64;
        let before: u64 = self.sent_tokens.iter().sum();
        for action in actions {
            match action {
                PruneAction::Replace { index, call_id, text, .. } => {
                    self.state.replacements.insert(call_id, Replacement { kind: ReplacementKind::Pruned, text });
                    self.refresh(index);
                    pruned += 1;
                }
                PruneAction::Shrink { index, call_id, arguments, .. } => {
                    self.state.shrunk_arguments.insert(call_id, arguments);
                    self.refresh(index);
                    shrunk += 1;
                }
            }
        }
        self.refresh_twins();
        let after: u64 = self.sent_tokens.iter().sum();
        self.state.counters.pruned_results += pruned;
        let saved = before.saturating_sub(after);
        StageReport {
            stage: Stage::Prune,
            count: pruned,
            saved_tokens: saved,
            detail: match (pruned, shrunk) {
                (n, 0) => format!("cleared {n} old tool outputs (−{} tokens)", thousands(saved)),
                (0, s) => format!("shortened the arguments of {s} old tool calls (−{} tokens)", thousands(saved)),
                (n, s) => format!(
                    "cleared {n} old tool outputs and shortened the arguments of {s} old calls (−{} tokens)",
                    thousands(saved)
                ),
            },
        }
    }
}
