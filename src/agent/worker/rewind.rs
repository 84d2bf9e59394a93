//! `/rewind` and `/undo` on the session the worker holds: the shared [`Rewinder`] does the
//! work; a rewound conversation is then loaded again from the store, exactly as a resume would
//! load it, so what the next request sends is what `--resume` would send.

use super::Worker;
use crate::agent::events::{AgentEvent, BackgroundAnswer, NoticeLevel};
use crate::agent::library::LibraryError;
use crate::agent::rewind::{RewindOutcome, RewindPreview, RewindScope, Rewinder};
use crate::checkpoint::Overwrite;

impl Worker {
    fn rewinder(&self) -> Rewinder<'_> {
        Rewinder {
            store: self.place.store(),
            session: self.session.id(),
            root: self.place.root(),
            config: &self.place.config().checkpoints,
            secrets: self.session.redactor(),
        }
    }

    pub(super) fn plan_rewind(&self, user_seq: i64, scope: RewindScope) -> Result<RewindPreview, LibraryError> {
        let rewinder = self.rewinder();
        rewinder.turn_at(user_seq).and_then(|turn| rewinder.preview(turn, scope))
    }

    /// Take back the turn at `user_seq` and every later one. The background commands those
    /// turns started are ended first: they were part of what the turns did, and one still
    /// running could write into the files being put back.
    pub(super) async fn rewind(&mut self, user_seq: i64, scope: RewindScope, overwrite: &Overwrite) {
        let mut ended = Vec::new();
        if self.rewinder().turn_at(user_seq).is_ok()
            && let Some(jobs) = self.jobs.clone()
        {
            ended = jobs.stop_started_since(self.session.id(), user_seq).await;
        }
        let result = {
            let rewinder = self.rewinder();
            rewinder.turn_at(user_seq).and_then(|turn| rewinder.rewind(turn, scope, overwrite))
        };
        self.after_rewind(result);
        // Said after the reloaded session, whose transcript would otherwise replace it.
        if !ended.is_empty() {
            self.link.emit(AgentEvent::Background(BackgroundAnswer::Rewound(ended)));
        }
    }

    /// The file changes of the latest turn that made some, taken back; conflicts are reported
    /// and left (`/rewind` can overwrite them).
    pub(super) fn undo(&mut self) {
        let result = {
            let rewinder = self.rewinder();
            rewinder
                .last_turn_with_changes()
                .and_then(|turn| rewinder.rewind(turn, RewindScope::Code, &Overwrite::Nothing))
        };
        self.after_rewind(result);
    }

    fn after_rewind(&mut self, result: Result<RewindOutcome, LibraryError>) {
        if let Ok(outcome) = &result {
            tracing::info!(
                session = %outcome.session_id,
                turn = outcome.turn.number,
                scope = ?outcome.scope,
                complete = outcome.complete(),
                "rewound"
            );
            if outcome.conversation.is_some() {
                // A fresh cache watch comes with it: the next request is compared with nothing.
                let info = self.session.info().clone();
                match self.replace_session(info) {
                    Ok(()) => {
                        self.tools.forget_reads();
                        self.announce_session(false);
                    }
                    Err(e) => self.link.notice(
                        NoticeLevel::Error,
                        format!("the conversation was rewound, but reloading it failed ({e}); resume the session to continue"),
                    ),
                }
            }
        }
        self.link.emit(AgentEvent::Rewound(result));
    }
}
