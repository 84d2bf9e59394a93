//! Work that runs beside the conversation: a compaction summarising in the background, durable
//! memories extracted from a summary, segment summaries and roll-ups — and the usage of those
//! auxiliary calls, kept until a turn's stats take it.

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::auxiliary::UsageTally;
use super::events::CompactionTrigger;
use crate::context::CompactionPlan;

/// A compaction asked for: what it summarises, why, and how big the context was.
pub(super) struct CompactionJob {
    pub(super) plan: CompactionPlan,
    pub(super) trigger: CompactionTrigger,
    pub(super) tokens_before: u64,
}

/// A compaction summarising in the background.
struct InFlight {
    job: CompactionJob,
    handle: JoinHandle<Result<String, String>>,
}

#[derive(Default)]
pub(super) struct Background {
    compaction: Option<InFlight>,
    extraction: Option<JoinHandle<()>>,
    segmenting: Option<JoinHandle<()>>,
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

    pub(super) fn begin_compaction(&mut self, job: CompactionJob, handle: JoinHandle<Result<String, String>>) {
        self.compaction = Some(InFlight { job, handle });
    }

    /// Wait for the running compaction: its job and the summary (or why there is none).
    /// `None` when none runs or the wait was interrupted (the compaction keeps running).
    pub(super) async fn wait_compaction(
        &mut self,
        cancel: &CancellationToken,
    ) -> Option<(CompactionJob, Result<String, String>)> {
        let running = self.compaction.as_mut()?;
        let result = tokio::select! {
            joined = &mut running.handle => joined.unwrap_or_else(|e| Err(format!("the compaction task failed: {e}"))),
            _ = cancel.cancelled() => return None,
        };
        let done = self.compaction.take()?;
        Some((done.job, result))
    }

    /// A session switch drops a running compaction: its plan is of the session left.
    pub(super) fn abort_compaction(&mut self) {
        if let Some(running) = self.compaction.take() {
            running.handle.abort();
        }
    }

    /// Start an extraction, replacing one still running.
    pub(super) fn extract(&mut self, job: impl Future<Output = ()> + Send + 'static) {
        if let Some(previous) = self.extraction.take() {
            previous.abort();
        }
        self.extraction = Some(tokio::spawn(job));
    }

    pub(super) fn segmenting(&self) -> bool {
        self.segmenting.as_ref().is_some_and(|t| !t.is_finished())
    }

    pub(super) fn segment(&mut self, job: impl Future<Output = ()> + Send + 'static) {
        self.segmenting = Some(tokio::spawn(job));
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

    /// On shutdown: memories being extracted and segments being summarised are saved first.
    pub(super) async fn finish(&mut self) {
        if let Some(extraction) = self.extraction.take() {
            let _ = extraction.await;
        }
        if let Some(segmenting) = self.segmenting.take() {
            let _ = segmenting.await;
        }
    }
}
