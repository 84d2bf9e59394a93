//! `/rewind` and `/undo` on the session the worker holds: the shared [`Rewinder`] does the
//! work; a rewound conversation is then loaded again from the store, exactly as a resume would
//! load it, so what the next request sends is what `--resume` would send.

use super::Worker;
use crate::agent::events::{AgentEvent, NoticeLevel};
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

    pub(super) fn rewind(&mut self, user_seq: i64, scope: RewindScope, overwrite: &Overwrite) {
        let result = {
            let rewinder = self.rewinder();
            rewinder.turn_at(user_seq).and_then(|turn| rewinder.rewind(turn, scope, overwrite))
        };
        self.after_rewind(result);
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
