//! Subagents' sessions, stored as children of the session that started them, and each
//! session's task list (the `todo` tool's).

use rusqlite::{OptionalExtension, params};

use super::sessions::{NewSession, SessionInfo};
use super::{ProjectId, Store, StoreError};

/// A subagent's session as its parent's transcript finds it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubagentSession {
    pub id: String,
    /// The parent's `task` call that started it (`None` for sessions stored before cairn kept it).
    pub call_id: Option<String>,
    pub agent_type: String,
    /// Its job, as the call described it.
    pub title: String,
    pub model: String,
    pub mode: crate::conversation::Mode,
}

impl Store {
    /// A session for a subagent started by `parent`'s `task` call `call_id`, titled by its job.
    pub fn create_child_session(
        &self,
        project: ProjectId,
        new: NewSession<'_>,
        parent: &str,
        call_id: &str,
        agent_type: &str,
        title: &str,
    ) -> Result<SessionInfo, StoreError> {
        let mut info = self.create_session(project, new)?;
        self.execute(
            "UPDATE sessions SET parent_session = ?2, agent_type = ?3, title = ?4, parent_call = ?5 WHERE id = ?1",
            params![info.id, parent, agent_type, title, call_id],
        )?;
        info.title = title.to_string();
        Ok(info)
    }

    /// The subagents' sessions `id` started, oldest first, with what started each.
    pub fn subagent_sessions(&self, id: &str) -> Result<Vec<SubagentSession>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, parent_call, COALESCE(agent_type, ''), title, model, mode FROM sessions
             WHERE parent_session = ?1 ORDER BY created_at, rowid",
        )?;
        let rows = stmt.query_map(params![id], |r| {
            Ok(SubagentSession {
                id: r.get(0)?,
                call_id: r.get(1)?,
                agent_type: r.get(2)?,
                title: r.get(3)?,
                model: r.get(4)?,
                mode: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The session that started `id`, when `id` is a subagent's.
    pub fn parent_session(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT parent_session FROM sessions WHERE id = ?1", params![id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    /// The subagents' sessions `id` started, oldest first.
    pub fn child_sessions(&self, id: &str) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id FROM sessions WHERE parent_session = ?1 ORDER BY created_at, rowid")?;
        let rows = stmt.query_map(params![id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Keep a session's task list (JSON), so a resume shows it again.
    pub fn set_session_task_list(&self, id: &str, json: &str) -> Result<(), StoreError> {
        self.execute("UPDATE sessions SET todo = ?2 WHERE id = ?1", params![id, json])?;
        Ok(())
    }

    /// A session's task list as last kept, if it has one.
    pub fn session_task_list(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT todo FROM sessions WHERE id = ?1", params![id], |r| r.get(0))
            .optional()?
            .flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::Mode;

    fn new() -> NewSession<'static> {
        NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit }
    }

    #[test]
    fn a_child_is_listed_under_its_parent_never_resumed_as_latest_and_deleted_with_it() {
        let store = Store::open_in_memory().unwrap();
        let p = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let parent = store.create_session(p, new()).unwrap();
        let child = store.create_child_session(p, new(), &parent.id, "c1", "explore", "find the parser").unwrap();
        let other = store.create_session(p, new()).unwrap();
        store.append_message(&child.id, &crate::conversation::Message::user("look")).unwrap();
        let list = store.list_sessions(p).unwrap();
        let ids: Vec<&str> = list.iter().map(|s| s.id.as_str()).collect();
        let at = |id: &str| ids.iter().position(|i| *i == id).unwrap();
        assert_eq!(at(&child.id), at(&parent.id) + 1, "{ids:?}");
        let listed = &list[at(&child.id)];
        assert_eq!(
            (listed.parent.as_deref(), listed.agent_type.as_deref(), listed.title.as_str()),
            (Some(parent.id.as_str()), Some("explore"), "find the parser")
        );
        let latest = store.latest_session(p).unwrap().unwrap();
        assert_ne!(latest.id, child.id, "--resume never picks a subagent's session");
        assert!(latest.id == other.id || latest.id == parent.id);
        assert_eq!(store.parent_session(&child.id).unwrap().as_deref(), Some(parent.id.as_str()));
        assert_eq!(store.child_sessions(&parent.id).unwrap(), std::slice::from_ref(&child.id));
        store.delete_session(&parent.id).unwrap();
        assert!(store.session(&child.id).unwrap().is_none(), "deleted with its parent");
    }

    #[test]
    fn a_task_list_is_kept_with_its_session() {
        let store = Store::open_in_memory().unwrap();
        let p = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let s = store.create_session(p, new()).unwrap();
        assert_eq!(store.session_task_list(&s.id).unwrap(), None);
        store.set_session_task_list(&s.id, "[1]").unwrap();
        assert_eq!(store.session_task_list(&s.id).unwrap().as_deref(), Some("[1]"));
    }
}
