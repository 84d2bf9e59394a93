//! Sessions that exist from their first message: a new session is drafted (an id, not a row)
//! and written when its first message is, so launching and quitting stores nothing. Also the
//! queries that treat a session the user merely opened as the one they were last in.

use rusqlite::{OptionalExtension, params};

use super::sessions::{NewSession, SESSION_COLUMNS, SessionInfo, new_session_id, session_from_row};
use super::{ProjectId, Store, StoreError, now_rfc3339};

impl Store {
    /// A new session of `project`, not yet written: [`Store::insert_session`] writes it.
    pub fn draft_session(&self, project: ProjectId, new: NewSession<'_>) -> Result<SessionInfo, StoreError> {
        let conn = self.conn();
        for _ in 0..8 {
            let id = new_session_id();
            let taken: bool =
                conn.query_row("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)", params![id], |r| r.get(0))?;
            if !taken {
                let now = now_rfc3339();
                return Ok(SessionInfo {
                    id,
                    project,
                    title: String::new(),
                    provider: new.provider,
                    model: new.model.to_string(),
                    mode: new.mode,
                    created_at: now.clone(),
                    updated_at: now,
                });
            }
        }
        Err(StoreError::Corrupt("could not allocate a unique session id".into()))
    }

    /// Write a drafted session. False when its id was taken meanwhile (draft another).
    pub fn insert_session(&self, info: &SessionInfo) -> Result<bool, StoreError> {
        let now = now_rfc3339();
        let inserted = self.conn().execute(
            "INSERT INTO sessions (id, project_id, title, provider, model, mode, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) ON CONFLICT(id) DO NOTHING",
            params![info.id, info.project.0, info.title, info.provider, info.model, info.mode, now],
        )?;
        Ok(inserted == 1)
    }

    /// The user opened this session: it becomes the one `--resume` continues.
    pub fn touch_session(&self, id: &str) -> Result<(), StoreError> {
        self.conn().execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![id, now_rfc3339()])?;
        Ok(())
    }

    /// The session of the project the user was last in that holds a conversation: sessions
    /// left empty (by older versions, or a crash between writing a session and its first
    /// message) are passed over.
    pub fn latest_conversation(&self, project: ProjectId) -> Result<Option<SessionInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions s WHERE project_id = ?1
                       AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
                     ORDER BY updated_at DESC, rowid DESC LIMIT 1"
                ),
                params![project.0],
                session_from_row,
            )
            .optional()?)
    }

    /// Delete the project's sessions without a message that were created before `before`
    /// (RFC 3339): nothing is in them to lose. Returns how many went.
    pub fn purge_empty_sessions(&self, project: ProjectId, before: &str) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "DELETE FROM sessions WHERE project_id = ?1 AND created_at < ?2
               AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)",
            params![project.0, before],
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::{Message, Mode};

    fn new() -> NewSession<'static> {
        NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit }
    }

    #[test]
    fn a_draft_is_no_session_until_inserted_and_resume_skips_empty_ones() {
        let store = Store::open_in_memory().unwrap();
        let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let draft = store.draft_session(project, new()).unwrap();
        assert_eq!(store.session(&draft.id).unwrap(), None);
        assert!(store.list_sessions(project).unwrap().is_empty());
        assert!(store.insert_session(&draft).unwrap());
        assert!(!store.insert_session(&draft).unwrap(), "an id is written once");
        store.append_message(&draft.id, &Message::user("hi")).unwrap();
        // An empty session written later (as older versions did) is not what --resume picks.
        let empty = store.create_session(project, new()).unwrap();
        assert_eq!(store.latest_conversation(project).unwrap().unwrap().id, draft.id);
        assert_eq!(store.purge_empty_sessions(project, "0000").unwrap(), 0, "too young to purge");
        assert_eq!(store.purge_empty_sessions(project, "9999").unwrap(), 1);
        assert_eq!(store.session(&empty.id).unwrap(), None);
        assert!(store.session(&draft.id).unwrap().is_some(), "a conversation is never purged");
    }

    #[test]
    fn opening_an_older_session_makes_it_the_one_to_resume() {
        let store = Store::open_in_memory().unwrap();
        let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let older = store.create_session(project, new()).unwrap();
        store.append_message(&older.id, &Message::user("old")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let newer = store.create_session(project, new()).unwrap();
        store.append_message(&newer.id, &Message::user("new")).unwrap();
        assert_eq!(store.latest_conversation(project).unwrap().unwrap().id, newer.id);
        std::thread::sleep(std::time::Duration::from_millis(5));
        store.touch_session(&older.id).unwrap();
        assert_eq!(store.latest_conversation(project).unwrap().unwrap().id, older.id);
    }
}
