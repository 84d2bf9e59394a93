//! The session's checkpoints, as the agent keeps them: the checkpointer of the session (its
//! tree warmed up on a blocking thread as the session opens), the turn the next changes belong
//! to, and capture around each call that writes or runs something. Capture never changes a
//! call's result: a failure is logged, and told once per session.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::events::NoticeLevel;
use super::link::Emitter;
use crate::checkpoint::{CallGuard, CallKind, CheckpointError, Checkpointer};
use crate::config::{CheckpointsConfig, Redactor};
use crate::store::{ProjectId, Store};

pub(super) struct Checkpoints {
    /// `None` when the checkpointer could not be made (told once at the start).
    inner: Option<Arc<Mutex<Checkpointer>>>,
    /// The seq of the prompt that opened the current turn.
    turn: Option<i64>,
    events: Emitter,
    /// A capture failed and the user was told; later failures are only logged.
    warned: Arc<AtomicBool>,
    /// Set when the session closes: a warm-up still reading stops (and cairn can exit).
    stop: Arc<AtomicBool>,
    /// A subagent's: its changes belong to the parent's turn, whatever its own prompts are.
    follows_parent: bool,
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Where the checkpointer of a session starts.
pub(super) struct CheckpointSite<'a> {
    pub store: Arc<Store>,
    pub session: &'a str,
    pub project: ProjectId,
    /// Canonical.
    pub root: &'a Path,
    pub config: &'a CheckpointsConfig,
    /// Folders never scanned (cairn's own data when it sits inside the project).
    pub exclude: Vec<PathBuf>,
    /// Key values no kept content may hold.
    pub secrets: &'a Redactor,
}

impl Checkpoints {
    /// The checkpoints of a session that opens now. The first scan of the project (reading
    /// every file not yet kept) runs on a blocking thread, so the session is usable at once; a
    /// `bash` call before it is done waits for it.
    pub(super) fn start(site: CheckpointSite<'_>, events: Emitter) -> Checkpoints {
        let warned = Arc::new(AtomicBool::new(false));
        let inner =
            match Checkpointer::new(site.store, site.session, site.project, site.root, site.config, site.exclude) {
                Ok(c) => Some(Arc::new(Mutex::new(c.keeping_out(site.secrets)))),
                Err(e) => {
                    tracing::error!(error = %e, "checkpoints are off for this session");
                    warned.store(true, Ordering::SeqCst);
                    events.notice(
                        NoticeLevel::Warning,
                        format!("file changes are not checkpointed in this session (/rewind cannot restore them): {e}"),
                    );
                    None
                }
            };
        let checkpoints = Checkpoints {
            inner,
            turn: None,
            events,
            warned,
            stop: Arc::new(AtomicBool::new(false)),
            follows_parent: false,
        };
        if site.config.enabled {
            checkpoints.warm_up();
        }
        checkpoints
    }

    fn warm_up(&self) {
        let Some(inner) = self.inner.clone() else { return };
        // Without a runtime (never in cairn itself) the first command warms up instead.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let events = self.events.clone();
        let warned = self.warned.clone();
        let stop = self.stop.clone();
        runtime.spawn_blocking(move || {
            let started = std::time::Instant::now();
            let result = lock(&inner).warm_up_until(&stop);
            match result {
                Ok(w) => {
                    tracing::info!(
                        entries = w.entries,
                        files_read = w.files_read,
                        bytes_read = w.bytes_read,
                        watched = w.watched,
                        stopped = w.stopped,
                        ms = started.elapsed().as_millis() as u64,
                        "checkpoints warmed up"
                    );
                    if let Some(reason) = w.scan_off {
                        events.notice(
                            NoticeLevel::Warning,
                            format!(
                                "changes made by commands (bash) are not checkpointed in this session: {reason}; file_write and file_edit still are"
                            ),
                        );
                    }
                }
                Err(e) => tell_once(&events, &warned, &e),
            }
        });
    }

    /// The changes from now on belong to the turn opened by the prompt stored at `user_seq`
    /// (a subagent's stay in the parent's turn).
    /// The seq of the prompt that opened the current turn.
    pub(super) fn turn(&self) -> Option<i64> {
        self.turn
    }

    pub(super) fn begin_turn(&mut self, user_seq: i64) {
        if !self.follows_parent {
            self.turn = Some(user_seq);
        }
    }

    /// A subagent's checkpoints: the parent's checkpointer and the parent's current turn, so
    /// what a subagent changes is taken back with the parent's turn that started it. Closing
    /// the subagent stops nothing of the parent's.
    pub(super) fn for_subagent(&self) -> Checkpoints {
        Checkpoints {
            inner: self.inner.clone(),
            turn: self.turn,
            events: self.events.clone(),
            warned: self.warned.clone(),
            stop: Arc::new(AtomicBool::new(false)),
            follows_parent: true,
        }
    }

    /// What capture needs to run around one call, for the dispatcher's tasks.
    pub(super) fn capture(&self) -> Capture {
        Capture { inner: self.inner.clone(), turn: self.turn, events: self.events.clone(), warned: self.warned.clone() }
    }
}

/// Capture around the calls of one dispatch.
#[derive(Clone)]
pub(super) struct Capture {
    inner: Option<Arc<Mutex<Checkpointer>>>,
    turn: Option<i64>,
    events: Emitter,
    warned: Arc<AtomicBool>,
}

impl Capture {
    /// Right before a call that writes `kind` runs: what it may change, as it is now.
    pub(super) async fn before(&self, kind: CallKind) -> Option<CallGuard> {
        let inner = self.inner.clone()?;
        let turn = self.turn;
        let result = tokio::task::spawn_blocking(move || {
            let mut c = lock(&inner);
            if let Some(seq) = turn {
                c.begin_turn(seq);
            }
            c.before_call(&kind)
        })
        .await;
        match result {
            Ok(Ok(guard)) => Some(guard),
            Ok(Err(e)) => {
                tell_once(&self.events, &self.warned, &e);
                None
            }
            Err(e) => {
                tell_once(&self.events, &self.warned, &CheckpointError::Io(e.to_string()));
                None
            }
        }
    }

    /// Right after the call, whatever its outcome: record what it changed in the turn.
    pub(super) async fn after(&self, guard: CallGuard, tool: &str, call_id: &str) {
        let Some(inner) = self.inner.clone() else { return };
        let (tool, call_id) = (tool.to_string(), call_id.to_string());
        let result = tokio::task::spawn_blocking(move || lock(&inner).after_call(guard, &tool, &call_id)).await;
        match result {
            Ok(Ok(changed)) => {
                if !changed.is_empty() {
                    tracing::debug!(paths = changed.len(), "checkpointed a call's changes");
                }
            }
            Ok(Err(e)) => tell_once(&self.events, &self.warned, &e),
            Err(e) => tell_once(&self.events, &self.warned, &CheckpointError::Io(e.to_string())),
        }
    }
}

fn lock(inner: &Mutex<Checkpointer>) -> MutexGuard<'_, Checkpointer> {
    // A panic mid-capture leaves at worst a stale tree, which the next scan corrects.
    inner.lock().unwrap_or_else(|p| p.into_inner())
}

fn tell_once(events: &Emitter, warned: &AtomicBool, e: &CheckpointError) {
    tracing::error!(error = %e, "checkpoint capture failed");
    if !warned.swap(true, Ordering::SeqCst) {
        events.notice(
            NoticeLevel::Warning,
            format!(
                "a checkpoint could not be recorded ({e}); /rewind may not restore every file this session changes"
            ),
        );
    }
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;
