//! Running compactions: in the background when the auto-compact threshold is crossed (the
//! current request still fits), awaited when the blocking threshold is, by hand on `/compact`,
//! and immediately on a context-length error. Each commits atomically or not at all.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, CompactionEvent, CompactionTrigger, TurnOutcome, TurnStats, TurnSummary};
use super::worker::Worker;
use crate::context::{CompactionPlan, PreflightInput, StageReport, thousands};
use crate::store::{CompactionRecord, NewMemory};

/// Working memories made of compaction summaries expire after this many days (001).
const SUMMARY_MEMORY_DAYS: i64 = 14;

pub(super) struct InFlight {
    plan: CompactionPlan,
    trigger: CompactionTrigger,
    tokens_before: u64,
    handle: JoinHandle<Result<String, String>>,
}

impl InFlight {
    pub(super) fn abort(self) {
        self.handle.abort();
    }
}

fn trigger_name(trigger: CompactionTrigger) -> &'static str {
    match trigger {
        CompactionTrigger::Auto => "auto",
        CompactionTrigger::Manual => "manual",
        CompactionTrigger::Overflow => "overflow",
    }
}

impl Worker {
    /// Facts the model must keep whatever is summarised: mode, folder, branch, agent depth.
    pub(super) fn protected_context(&self) -> String {
        let branch = crate::prompt::Environment::detect(&self.root, &self.cwd, chrono::Local::now().date_naive())
            .git_branch
            .unwrap_or_else(|| "not a git repository".into());
        format!(
            "## Session\n- Mode: {}\n- Working directory: {}\n- Git branch: {branch}\n- Agent: main agent (depth 0)\n",
            self.current_mode(),
            self.cwd.display()
        )
    }

    /// Plan a compaction and start summarising in the background. False when there is nothing
    /// to compact.
    pub(super) fn start_compaction(&mut self, trigger: CompactionTrigger, input: &PreflightInput) -> bool {
        if self.compaction.is_some() {
            return true;
        }
        let manual = trigger == CompactionTrigger::Manual;
        let Some(plan) = self.pipeline.plan_compaction(&input.budget, manual) else { return false };
        let tokens_before = self.pipeline.estimate(input.overhead, input.budget.window);
        self.emit(AgentEvent::Compaction(CompactionEvent::Started { trigger, tokens_before }));
        let summarizer = self.aux_model(CancellationToken::new());
        let events = self.events.clone();
        let cpt = self.config.context.chars_per_token;
        let task_plan = plan.clone();
        let handle = tokio::spawn(async move {
            let progress = move |chunk: u32, chunks: u32| {
                if chunks > 1 {
                    let _ = events.send(AgentEvent::Compaction(CompactionEvent::Progress { chunk, chunks }));
                }
            };
            crate::context::summarize(&task_plan, &summarizer, cpt, &progress).await
        });
        self.compaction = Some(InFlight { plan, trigger, tokens_before, handle });
        let status = self.context_status();
        self.emit(AgentEvent::Context(status));
        true
    }

    /// Apply a background compaction that has finished, if any.
    pub(super) async fn poll_compaction(&mut self, input: &PreflightInput) {
        if self.compaction.as_ref().is_some_and(|c| c.handle.is_finished()) {
            self.await_compaction(input, &CancellationToken::new()).await;
        }
    }

    /// Wait for the running compaction and apply it. `None` when none runs or the wait was
    /// interrupted (the compaction keeps running).
    pub(super) async fn await_compaction(
        &mut self,
        input: &PreflightInput,
        cancel: &CancellationToken,
    ) -> Option<Result<StageReport, String>> {
        let running = self.compaction.as_mut()?;
        let result = tokio::select! {
            joined = &mut running.handle => joined.unwrap_or_else(|e| Err(format!("the compaction task failed: {e}"))),
            _ = cancel.cancelled() => return None,
        };
        let done = self.compaction.take()?;
        Some(self.finish_compaction(done.plan, done.trigger, done.tokens_before, result, input))
    }

    /// Commit a finished summary (state, log, working memory in one transaction) or record
    /// the failure.
    fn finish_compaction(
        &mut self,
        plan: CompactionPlan,
        trigger: CompactionTrigger,
        tokens_before: u64,
        result: Result<String, String>,
        input: &PreflightInput,
    ) -> Result<StageReport, String> {
        let summary = match result {
            Ok(summary) => summary,
            Err(error) => return Err(self.compaction_failed(trigger, error, input.now)),
        };
        let old_state = self.pipeline.state().clone();
        let report = self.pipeline.apply_compaction(&plan, summary.clone(), input, tokens_before);
        let tokens_after = tokens_before.saturating_sub(report.saved_tokens);
        let committed = serde_json::to_string(self.pipeline.state()).map_err(|e| e.to_string()).and_then(|state| {
            let expires = (chrono::Utc::now() + chrono::Duration::days(SUMMARY_MEMORY_DAYS))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            let title = crate::memory::summary_title(&summary);
            let memory = NewMemory {
                project: Some(self.project),
                kind: "compaction",
                class: "working",
                title: &title,
                content: &summary,
                session_id: Some(&self.session.id),
                expires_at: Some(&expires),
            };
            let record = CompactionRecord {
                trigger: trigger_name(trigger),
                through_seq: plan.through_seq,
                tokens_before,
                tokens_after,
                summary: &summary,
            };
            self.store.commit_compaction(&self.session.id, &state, &record, Some(memory)).map_err(|e| e.to_string())
        });
        if let Err(error) = committed {
            // The old state stands, in memory as on disk.
            self.pipeline.replace_state(old_state);
            return Err(self.compaction_failed(trigger, format!("could not save the compaction: {error}"), input.now));
        }
        // The memory block is rebuilt for the conversation as it is now, and durable memories
        // are drawn from the summary.
        self.rebuild_memory_block();
        self.save_state();
        self.expect_cache_break("compaction rewrote the history and rebuilt the memory block".into());
        self.start_extraction(summary.clone());
        self.emit(AgentEvent::Compaction(CompactionEvent::Finished {
            trigger,
            tokens_before,
            tokens_after,
            summary_tokens: crate::context::estimate_text_tokens(summary.len(), self.config.context.chars_per_token),
        }));
        let status = self.context_status();
        self.emit(AgentEvent::Context(status));
        Ok(report)
    }

    fn compaction_failed(&mut self, trigger: CompactionTrigger, error: String, now: i64) -> String {
        tracing::warn!(%error, "compaction failed");
        self.pipeline.record_compaction_failure(now);
        self.save_state();
        self.emit(AgentEvent::Compaction(CompactionEvent::Failed { trigger, error: error.clone() }));
        error
    }

    /// `/compact`: always tries, even with the breaker open.
    pub(super) async fn compact_by_hand(&mut self, cancel: CancellationToken) -> TurnSummary {
        let start = self.pipeline.counters();
        let input = self.preflight_input(self.current_mode(), false);
        // A background compaction first, then the one asked for.
        let _ = self.await_compaction(&input, &cancel).await;
        let outcome = if self.start_compaction(CompactionTrigger::Manual, &input) {
            match self.await_compaction(&input, &cancel).await {
                Some(Ok(report)) => TurnOutcome::Completed { text: report.detail },
                Some(Err(error)) => TurnOutcome::Failed { error: format!("compaction failed: {error}") },
                None => TurnOutcome::Interrupted { partial: String::new() },
            }
        } else {
            TurnOutcome::Completed {
                text: format!(
                    "nothing to compact yet: the conversation ({} tokens) fits in the part kept verbatim",
                    thousands(self.pipeline.estimate(input.overhead, input.budget.window))
                ),
            }
        };
        let mut stats = TurnStats::default();
        self.take_aux_usage(&mut stats);
        stats.context = self.context_report(&start);
        TurnSummary { outcome, stats }
    }

    /// On shutdown: a compaction that is running completes and commits.
    pub(super) async fn finish_compaction_on_exit(&mut self) {
        if self.compaction.is_some() {
            let input = self.preflight_input(self.current_mode(), false);
            let _ = self.await_compaction(&input, &CancellationToken::new()).await;
        }
    }
}
