//! A session switched to: a new one (`/new`) or another one (`/resume`), and what ends with the
//! session left.

use super::{Worker, start_checkpoints};
use crate::agent::events::NoticeLevel;
use crate::store::{NewSession, SessionInfo, StoreError};

impl Worker {
    /// Switch to `info`: everything of the session left (its compaction, cache history, files
    /// read, approvals, checkpoints) ends with it. On failure the current session stays.
    pub(super) fn load_session(&mut self, info: SessionInfo) -> Result<(), StoreError> {
        let switching = info.id != self.session.id();
        self.replace_session(info)?;
        self.tools.new_session();
        if switching {
            self.background.new_tally();
            self.checkpoints = start_checkpoints(&self.place, self.session.id(), self.session.redactor(), &self.link);
        }
        Ok(())
    }

    pub(super) fn open_new_session(&mut self) {
        let mode = self.link.mode();
        let created = self.place.store().draft_session(
            self.place.project(),
            NewSession { provider: self.model.kind(), model: self.model.name(), mode },
        );
        match created.and_then(|session| self.load_session(session)) {
            Ok(()) => self.announce_session(false),
            Err(e) => self.link.notice(NoticeLevel::Error, format!("could not start a new session: {e}")),
        }
    }

    pub(super) fn open_existing_session(&mut self, id: &str) {
        let store = self.place.store().clone();
        let opened = store
            .resolve_session(self.place.project(), id)
            .and_then(|s| store.touch_session(&s.id).map(|()| s))
            .and_then(|s| self.load_session(s));
        match opened {
            Ok(()) => self.announce_session(true),
            Err(e) => self.link.notice(NoticeLevel::Error, e.to_string()),
        }
    }
}
