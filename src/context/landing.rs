//! A compaction landing in the pipeline: planning it (reaching further back after one that
//! freed too little), applying its summary with every pending reduction folded into the same
//! rewrite, and what the circuit breaker makes of the outcome.

use super::budget::ContextBudget;
use super::compact::{self, CompactionPlan};
use super::pipeline::{Pipeline, PreflightInput, Stage, StageReport, thousands};
use super::state::SummaryState;

impl Pipeline {
    /// What an automatic (or, with `manual`, a `/compact`) compaction would summarise. After a
    /// compaction that freed too little, the next keeps a shorter tail.
    pub fn plan_compaction(&self, budget: &ContextBudget, manual: bool) -> Option<CompactionPlan> {
        let widen = manual || self.state.breaker.widen_next();
        compact::plan(&self.ledger, &self.state, &self.config, budget, &self.sent_tokens, widen)
    }

    /// Replace everything up to `plan.through_seq` with `summary`. The whole view after the
    /// continuation message is sent again, so pending dedup decisions and the latest segment
    /// outline are applied in the same rewrite.
    pub fn apply_compaction(
        &mut self,
        plan: &CompactionPlan,
        summary: String,
        input: &PreflightInput,
        tokens_before: u64,
    ) -> StageReport {
        let through = plan.through_seq;
        let summarised: Vec<usize> =
            (0..self.ledger.len()).filter(|&i| self.ledger.entries()[i].seq <= through).collect();
        for &i in &summarised {
            let e = &self.ledger.entries()[i];
            if let Some(f) = &e.facts {
                self.state.replacements.remove(&f.call_id);
            }
            for call in e.message.tool_calls() {
                self.state.shrunk_arguments.remove(&call.id);
            }
            self.refresh(i);
        }
        self.state.trimmed.retain(|&(_, last)| last > through);
        self.state.clipped.retain(|&seq, _| seq > through);
        self.state.recall.retain(|&seq, _| seq > through);
        self.state.summary = Some(SummaryState { text: summary, through_seq: through, generation: plan.generation });
        if plan.finished {
            // Finished work leaves with the user's words in it: the summary holds them, and the
            // recall tool finds them (the first message is no longer sent again either).
            self.state.carried.messages.clear();
        }
        self.state.carried.messages.extend(plan.carried.iter().cloned());
        self.state.counters.compactions += 1;
        self.state.awaiting_usage = true;
        self.compacted_unreported = true;
        self.rewrite_continuation();
        self.refresh_twins();
        let folded = self.apply_dedup_from(0);
        let after = self.estimate(input.overhead, input.budget.window);
        let freed = tokens_before.saturating_sub(after);
        self.state.breaker.record_success(freed, input.budget.effective, input.now, &self.breaker);
        let also = folded.map(|r| format!("; {}", r.detail)).unwrap_or_default();
        StageReport {
            stage: Stage::Compaction,
            count: plan.messages.len() as u64,
            saved_tokens: freed,
            detail: format!(
                "compacted {} messages: {} → {} tokens{also}",
                plan.messages.len(),
                thousands(tokens_before),
                thousands(after)
            ),
        }
    }

    /// A compaction failed: count it, and open the breaker after enough in a row.
    pub fn record_compaction_failure(&mut self, now: i64) {
        self.state.counters.compaction_failures += 1;
        self.state.breaker.record_failure(now, &self.breaker);
    }

    /// Whether an automatic compaction may run: the breaker is closed, or half-open after its
    /// cooldown.
    pub fn breaker_allows(&self, now: i64) -> bool {
        self.state.breaker.allows(now, &self.breaker)
    }
}
