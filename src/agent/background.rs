//! Work that runs beside the conversation: a compaction summarising in the background (one
//! call: the summary, a line per hidden segment and the memories worth keeping) — and the usage
//! of that auxiliary call, kept until a turn's stats take it.

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::auxiliary::UsageTally;
use super::events::CompactionTrigger;
use crate::context::{CompactionPlan, CompactionReply};

/// A compaction asked for: what it summarises, why, and how big the context was.
pub(super) struct CompactionJob {
    pub(super) plan: CompactionPlan,
    pub(super) trigger: CompactionTrigger,
    pub(super) tokens_before: u64,
}

/// A compaction summarising in the background.
struct InFlight {
    job: CompactionJob,
    handle: JoinHandle<Result<CompactionReply, String>>,
}

#[derive(Default)]
pub(super) struct Background {
    compaction: Option<InFlight>,
    /// A compaction planned at the pre-flight, to start once the request is answered.
    deferred: Option<CompactionJob>,
    /// A compaction planned at a request whose answer ended the turn: it starts when the user
    /// goes on (a session that ends there pays for no summary that would never land).
    parked: Option<CompactionJob>,
    /// The last request answered, and its size: a compaction that cannot wait reads it from
    /// the provider's cache when it reaches the part kept verbatim.
    answered: Option<(crate::llm::ChatRequest, u64)>,
    /// Usage of auxiliary calls not yet counted in a turn's stats.
    aux_usage: Arc<Mutex<UsageTally>>,
}

impl Background {
    pub(super) fn compacting(&self) -> bool {
        self.compaction.is_some()
    }

    /// A compaction ran to its end and waits to be applied.
    pub(super) fn compaction_done(&self) -> bool {
        self.compaction.as_ref().is_some_and(|c| c.handle.is_finished())
    }

    pub(super) fn begin_compaction(&mut self, job: CompactionJob, handle: JoinHandle<Result<CompactionReply, String>>) {
        self.compaction = Some(InFlight { job, handle });
    }

    /// Wait for the running compaction: its job and the summary (or why there is none).
    /// `None` when none runs or the wait was interrupted (the compaction keeps running).
    pub(super) async fn wait_compaction(
        &mut self,
        cancel: &CancellationToken,
    ) -> Option<(CompactionJob, Result<CompactionReply, String>)> {
        let running = self.compaction.as_mut()?;
        let result = tokio::select! {
            joined = &mut running.handle => joined.unwrap_or_else(|e| Err(format!("the compaction task failed: {e}"))),
            _ = cancel.cancelled() => return None,
        };
        let done = self.compaction.take()?;
        Some((done.job, result))
    }

    /// Hold `job` until the request being prepared is answered (a failed request drops it:
    /// the next pre-flight plans again).
    pub(super) fn defer(&mut self, job: Option<CompactionJob>) {
        self.deferred = job;
    }

    pub(super) fn take_deferred(&mut self) -> Option<CompactionJob> {
        self.deferred.take()
    }

    /// Keep `job` until the user's next prompt: its request was answered and the turn ended.
    pub(super) fn park(&mut self, job: CompactionJob) {
        self.parked = Some(job);
    }

    pub(super) fn take_parked(&mut self) -> Option<CompactionJob> {
        self.parked.take()
    }

    pub(super) fn answered(&mut self, request: crate::llm::ChatRequest, tokens: u64) {
        self.answered = Some((request, tokens));
    }

    pub(super) fn last_answered(&self) -> Option<(crate::llm::ChatRequest, u64)> {
        self.answered.clone()
    }

    /// A compaction landed: the last request answered shows the history before it.
    pub(super) fn forget_answered(&mut self) {
        self.answered = None;
    }

    /// A session switch drops a running compaction: its plan is of the session left.
    pub(super) fn abort_compaction(&mut self) {
        self.deferred = None;
        self.parked = None;
        self.answered = None;
        if let Some(running) = self.compaction.take() {
            running.handle.abort();
        }
    }

    /// Where auxiliary calls count their usage.
    pub(super) fn tally(&self) -> Arc<Mutex<UsageTally>> {
        self.aux_usage.clone()
    }

    /// A session switch: calls still running for the session left count there (the store has
    /// them under its id), not in the next session's first turn.
    pub(super) fn new_tally(&mut self) {
        self.aux_usage = Arc::default();
    }

    /// The usage of auxiliary calls since the last take.
    pub(super) fn take_usage(&self) -> UsageTally {
        std::mem::take(&mut *self.aux_usage.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
