//! Running compactions: planned at the pre-flight, summarised in the background once the
//! request they follow has been answered (so the summary call reads that request's cache),
//! awaited before a request when the blocking threshold is crossed, by hand on `/compact`, and
//! at once on a context-length error. One call writes the summary, a line per hidden segment
//! and the memories worth keeping. Each commits atomically or not at all.

use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::auxiliary::SessionSummarizer;
use crate::agent::background::CompactionJob;
use crate::agent::events::{AgentEvent, CompactionEvent, CompactionTrigger, TurnOutcome, TurnStats, TurnSummary};
use crate::agent::request::RequestHead;
use crate::context::{CompactionPlan, CompactionReply, Conversation, PreflightInput, SegmentNode, StageReport};
use crate::conversation::{Mode, format_tokens};
use crate::llm::ChatRequest;
use crate::store::CompactionRecord;

/// A compaction committed: what it did, and the head a request has now.
pub(super) struct Landed {
    pub(super) report: StageReport,
    pub(super) head: RequestHead,
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
        let branch =
            crate::prompt::Environment::detect(self.place.root(), self.place.cwd(), chrono::Local::now().date_naive())
                .git_branch
                .unwrap_or_else(|| "not a git repository".into());
        format!(
            "## Session\n- Mode: {}\n- Working directory: {}\n- Git branch: {branch}\n- Agent: {}\n",
            self.link.mode(),
            self.place.cwd().display(),
            self.agent_line()
        )
    }

    /// What a compaction would summarise now: the window's plan (`manual`: `/compact`), or the
    /// finished work before the latest request; the segments it hides are asked a line each.
    pub(super) fn plan_job(
        &mut self,
        trigger: CompactionTrigger,
        finished: bool,
        input: &PreflightInput,
    ) -> Option<CompactionJob> {
        let manual = trigger == CompactionTrigger::Manual;
        let pipeline = self.session.pipeline();
        let mut plan =
            if finished { pipeline.plan_finished_work() } else { pipeline.plan_compaction(&input.budget, manual) }?;
        self.update_segments();
        plan.stretches = self.hidden_stretches(&plan);
        let tokens_before = self.session.pipeline_mut().estimate(input.overhead, input.budget.window);
        Some(CompactionJob { plan, trigger, tokens_before })
    }

    /// The level-0 segments `plan` hides that have no summary yet: its reply gives each a line.
    fn hidden_stretches(&self, plan: &CompactionPlan) -> Vec<(i64, i64)> {
        let after = self.session.pipeline().state().summary.as_ref().map_or(i64::MIN, |s| s.through_seq);
        let rows = self.place.store().segments(self.session.id()).unwrap_or_default();
        let nodes: Vec<SegmentNode> = rows.into_iter().map(super::segments::node).collect();
        crate::context::stretches(&nodes, after, plan.through_seq)
    }

    /// Plan a compaction and start summarising it now, in the background. `requests`: requests
    /// as sent (or about to be) with their sizes; when the session's own model summarises, the
    /// call reads the first that reaches the part kept verbatim from the provider's cache. False
    /// when there is nothing to compact.
    pub(super) fn start_compaction(
        &mut self,
        trigger: CompactionTrigger,
        input: &PreflightInput,
        requests: Vec<(ChatRequest, u64)>,
    ) -> bool {
        if self.background.compacting() {
            return true;
        }
        let Some(job) = self.plan_job(trigger, false, input) else { return false };
        self.launch_compaction(job, requests, input.overhead);
        true
    }

    /// Summarise a planned compaction in the background; the status line then shows it, for a
    /// request whose system prompt and tools take `overhead`.
    pub(super) fn launch_compaction(
        &mut self,
        mut job: CompactionJob,
        requests: Vec<(ChatRequest, u64)>,
        overhead: u64,
    ) {
        if self.background.compacting() {
            return;
        }
        let in_place = self.model.summarizes_in_place();
        let template =
            requests.into_iter().filter(|_| in_place).find(|(r, _)| job.plan.reads_in(&r.messages).is_some());
        let template = template.map(|(request, tokens)| {
            job.plan.conversation = Some(Conversation { messages: request.messages.clone(), tokens });
            request
        });
        let (trigger, tokens_before) = (job.trigger, job.tokens_before);
        self.link.emit(AgentEvent::Compaction(CompactionEvent::Started { trigger, tokens_before }));
        let summarizer = SessionSummarizer { aux: self.aux_model(CancellationToken::new()), template };
        let events = self.link.emitter();
        let cpt = self.place.config().context.chars_per_token;
        let task_plan = job.plan.clone();
        let pre_compact = self.pre_compact_check(trigger_name(trigger));
        let handle = tokio::spawn(async move {
            pre_compact.await?;
            let progress = move |chunk: u32, chunks: u32| {
                if chunks > 1 {
                    events.emit(AgentEvent::Compaction(CompactionEvent::Progress { chunk, chunks }));
                }
            };
            crate::context::summarize_reply(&task_plan, &summarizer, cpt, &progress).await
        });
        self.background.begin_compaction(job, handle);
        let status = self.context_status(overhead);
        self.link.emit(AgentEvent::Context(status));
    }

    /// Apply a background compaction that has finished, if any: the head a request in `mode`
    /// has now when it landed.
    pub(super) async fn poll_compaction(&mut self, input: &PreflightInput, mode: Mode) -> Option<RequestHead> {
        if !self.background.compaction_done() {
            return None;
        }
        match self.await_compaction(input, mode, &CancellationToken::new()).await? {
            Ok(landed) => Some(landed.head),
            Err(_) => None,
        }
    }

    /// [`crate::agent::UserCommand::Settle`]: let a running compaction land and say what it
    /// added (an interrupt stops the wait; the compaction keeps running).
    pub(super) async fn settle(&mut self, cancel: CancellationToken) -> TurnStats {
        let start = self.session.pipeline().counters();
        let mode = self.link.mode();
        let input = self.preflight_input(self.overhead_now(), false);
        // Landing shows itself (the compaction's events and the status line).
        let _ = self.await_compaction(&input, mode, &cancel).await;
        let mut stats = TurnStats::default();
        self.take_aux_usage(&mut stats);
        stats.context = self.context_report(&start);
        stats
    }

    /// Wait for the running compaction and apply it (`mode`: of the request it lands before).
    /// `None` when none runs or the wait was interrupted (the compaction keeps running).
    pub(super) async fn await_compaction(
        &mut self,
        input: &PreflightInput,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> Option<Result<Landed, String>> {
        let (job, result) = self.background.wait_compaction(cancel).await?;
        Some(self.finish_compaction(job, result, input, mode))
    }

    /// Commit a finished summary (state, log, working memory in one transaction) — then the
    /// segment lines and memories its reply carried — or record the failure. A request in
    /// `mode` then has a new head (the memory block was rebuilt): the status line shows it, and
    /// the request being prepared, if any, is built on it.
    pub(super) fn finish_compaction(
        &mut self,
        job: CompactionJob,
        result: Result<CompactionReply, String>,
        input: &PreflightInput,
        mode: Mode,
    ) -> Result<Landed, String> {
        let CompactionJob { plan, trigger, tokens_before } = job;
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => return Err(self.compaction_failed(trigger, error, input.now)),
        };
        let summary = reply.summary;
        let old_state = self.session.pipeline().state().clone();
        let report = self.session.pipeline_mut().apply_compaction(&plan, summary.clone(), input, tokens_before);
        let tokens_after = tokens_before.saturating_sub(report.saved_tokens);
        // The summary goes to the compaction log, not the memories: a summary is no memory (it
        // is this session's, and the messages it stands for stay searchable).
        let committed =
            serde_json::to_string(self.session.pipeline().state()).map_err(|e| e.to_string()).and_then(|state| {
                let record = CompactionRecord {
                    trigger: trigger_name(trigger),
                    through_seq: plan.through_seq,
                    tokens_before,
                    tokens_after,
                    summary: &summary,
                };
                self.place.store().commit_compaction(self.session.id(), &state, &record).map_err(|e| e.to_string())
            });
        if let Err(error) = committed {
            // The old state stands, in memory as on disk.
            self.session.pipeline_mut().replace_state(old_state);
            return Err(self.compaction_failed(trigger, format!("could not save the compaction: {error}"), input.now));
        }
        self.background.forget_answered();
        self.set_segment_lines(&reply.stretches);
        // The memory block is rebuilt for the conversation as it is now.
        self.rebuild_memory_block();
        self.session.save_state();
        self.release_summarised();
        self.cache.expect_break("compaction rewrote the history and rebuilt the memory block".into());
        self.save_memories(&reply.memories);
        self.link.emit(AgentEvent::Compaction(CompactionEvent::Finished {
            trigger,
            tokens_before,
            tokens_after,
            summary_tokens: crate::context::estimate_text_tokens(
                summary.len(),
                self.place.config().context.chars_per_token,
            ),
        }));
        let head = self.head(mode);
        let status = self.context_status(head.overhead().total());
        self.link.emit(AgentEvent::Context(status));
        Ok(Landed { report, head })
    }

    /// Let the pipeline drop the bodies of the messages a saved summary stands for, so memory
    /// stays flat over a long session. Segments are cut first: the cut reads their words.
    pub(super) fn release_summarised(&mut self) {
        self.update_segments();
        let released = self.session.pipeline_mut().release_summarised();
        if released > 0 {
            tracing::debug!(released, "released the bodies of summarised messages");
        }
    }

    fn compaction_failed(&mut self, trigger: CompactionTrigger, error: String, now: i64) -> String {
        tracing::warn!(%error, "compaction failed");
        self.session.pipeline_mut().record_compaction_failure(now);
        self.session.save_state();
        self.link.emit(AgentEvent::Compaction(CompactionEvent::Failed { trigger, error: error.clone() }));
        error
    }

    /// `/compact`: always tries, even with the breaker open.
    pub(super) async fn compact_by_hand(&mut self, cancel: CancellationToken) -> TurnSummary {
        let start = self.session.pipeline().counters();
        let mode = self.link.mode();
        let mut head = self.head(mode);
        let input = self.preflight_input(head.overhead().total(), false);
        // A background compaction first, then the one asked for.
        if let Some(Ok(landed)) = self.await_compaction(&input, mode, &cancel).await {
            head = landed.head;
        }
        let requests = self.requests_to_read(&head, &input);
        let outcome = if self.start_compaction(CompactionTrigger::Manual, &input, requests) {
            match self.await_compaction(&input, mode, &cancel).await {
                Some(Ok(landed)) => TurnOutcome::Completed { text: landed.report.detail },
                Some(Err(error)) => TurnOutcome::Failed { error: format!("compaction failed: {error}") },
                None => TurnOutcome::Interrupted { partial: String::new() },
            }
        } else {
            TurnOutcome::Completed {
                text: format!(
                    "nothing to compact yet: the conversation ({} tokens) fits in the part kept verbatim",
                    format_tokens(self.session.pipeline_mut().estimate(input.overhead, input.budget.window))
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
        if self.background.compacting() {
            let mode = self.link.mode();
            let input = self.preflight_input(self.overhead_now(), false);
            let _ = self.await_compaction(&input, mode, &CancellationToken::new()).await;
        }
    }
}
