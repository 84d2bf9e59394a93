use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::{ProjectId, Store, StoreError, now_rfc3339};
use crate::config::ProviderKind;
use crate::conversation::{Mode, SessionSummary};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    pub id: String,
    #[serde(skip)]
    pub project: ProjectId,
    pub title: String,
    pub provider: ProviderKind,
    pub model: String,
    pub mode: Mode,
    pub created_at: String,
    pub updated_at: String,
}

pub struct NewSession<'a> {
    pub provider: ProviderKind,
    pub model: &'a str,
    pub mode: Mode,
}

/// The shortest id prefix that names a session: shorter ones match too many by chance.
const MIN_PREFIX: usize = 4;

pub(super) const SESSION_COLUMNS: &str = "id, project_id, title, provider, model, mode, created_at, updated_at";

pub(super) fn session_from_row(r: &Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: r.get(0)?,
        project: ProjectId(r.get(1)?),
        title: r.get(2)?,
        provider: r.get(3)?,
        model: r.get(4)?,
        mode: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

/// Twelve hex digits: short enough to type, random enough never to collide in practice (and
/// the primary key catches it if it ever does).
pub(super) fn new_session_id() -> String {
    format!("{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

impl Store {
    pub fn create_session(&self, project: ProjectId, new: NewSession<'_>) -> Result<SessionInfo, StoreError> {
        let now = now_rfc3339();
        for _ in 0..8 {
            let id = new_session_id();
            let inserted = self.execute(
                "INSERT INTO sessions (id, project_id, provider, model, mode, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT(id) DO NOTHING",
                params![id, project.0, new.provider, new.model, new.mode, now],
            )?;
            if inserted == 1 {
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

    pub fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(&format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"), params![id], session_from_row)
            .optional()?)
    }

    /// The session of this project that `id` names, exactly or by a unique prefix of at least
    /// four characters.
    pub fn resolve_session(&self, project: ProjectId, id: &str) -> Result<SessionInfo, StoreError> {
        let id = id.trim();
        if let Some(exact) = self.session(id)? {
            return self.check_project(project, exact);
        }
        if !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(StoreError::UnknownSession { id: id.to_string() });
        }
        if id.len() < MIN_PREFIX {
            return Err(StoreError::ShortPrefix { id: id.to_string(), min: MIN_PREFIX });
        }
        let matches: Vec<SessionInfo> = {
            let conn = self.conn();
            let mut stmt = conn.prepare(&format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id LIKE ?1 || '%'"))?;
            stmt.query_map(params![id], session_from_row)?.collect::<Result<_, _>>()?
        };
        let (mine, others): (Vec<_>, Vec<_>) = matches.into_iter().partition(|s| s.project == project);
        match (mine.len(), others.into_iter().next()) {
            (1, _) => Ok(mine.into_iter().next().ok_or_else(|| StoreError::UnknownSession { id: id.to_string() })?),
            (0, Some(other)) => self.check_project(project, other),
            (0, None) => Err(StoreError::UnknownSession { id: id.to_string() }),
            (count, _) => Err(StoreError::AmbiguousSession { id: id.to_string(), count }),
        }
    }

    fn check_project(&self, project: ProjectId, session: SessionInfo) -> Result<SessionInfo, StoreError> {
        if session.project == project {
            return Ok(session);
        }
        let root = self.project_root(session.project)?.unwrap_or_else(|| "an unknown folder".into());
        Err(StoreError::OtherProject { id: session.id, root })
    }

    /// The most recently active session of the project that is not a subagent's.
    pub fn latest_session(&self, project: ProjectId) -> Result<Option<SessionInfo>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions WHERE project_id = ?1 AND parent_session IS NULL ORDER BY updated_at DESC, rowid DESC LIMIT 1"
                ),
                params![project.0],
                session_from_row,
            )
            .optional()?)
    }

    /// The project's sessions, most recently active first; a subagent's session right after the
    /// session that started it.
    pub fn list_sessions(&self, project: ProjectId) -> Result<Vec<SessionSummary>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT s.id, s.title, s.created_at, s.updated_at, s.model, s.mode,
                    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
                    COALESCE((SELECT u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
                              FROM usage u WHERE u.session_id = s.id AND u.purpose = 'turn'
                              ORDER BY u.id DESC LIMIT 1), 0),
                    (SELECT m.content FROM messages m WHERE m.session_id = s.id AND m.role != 'tool'
                     ORDER BY m.seq DESC LIMIT 1),
                    s.parent_session, s.agent_type
             FROM sessions s WHERE s.project_id = ?1
             ORDER BY s.updated_at DESC, s.rowid DESC",
        )?;
        let rows = stmt.query_map(params![project.0], |r| {
            let last: Option<String> = r.get(8)?;
            Ok(SessionSummary {
                id: r.get(0)?,
                title: r.get(1)?,
                started_at: r.get(2)?,
                last_active_at: r.get(3)?,
                model: r.get(4)?,
                mode: r.get(5)?,
                message_count: r.get::<_, i64>(6)? as u64,
                tokens: r.get::<_, i64>(7)? as u64,
                last_message: last.as_deref().map(preview_of_content).unwrap_or_default(),
                parent: r.get(9)?,
                agent_type: r.get(10)?,
            })
        })?;
        Ok(children_under_parents(rows.collect::<Result<_, _>>()?))
    }

    pub fn set_session_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        self.execute("UPDATE sessions SET title = ?2 WHERE id = ?1", params![id, title])?;
        Ok(())
    }

    pub fn set_session_mode(&self, id: &str, mode: Mode) -> Result<(), StoreError> {
        self.execute("UPDATE sessions SET mode = ?2 WHERE id = ?1", params![id, mode])?;
        Ok(())
    }

    pub fn set_session_model(&self, id: &str, provider: ProviderKind, model: &str) -> Result<(), StoreError> {
        self.execute("UPDATE sessions SET provider = ?2, model = ?3 WHERE id = ?1", params![id, provider, model])?;
        Ok(())
    }

    pub fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        let deleted = self.execute("DELETE FROM sessions WHERE id = ?1", params![id])? == 1;
        if deleted {
            self.remove_session_lock(id);
        }
        Ok(deleted)
    }
}

/// One line of a stored content JSON, for previews.
fn preview_of_content(json: &str) -> String {
    let text = serde_json::from_str::<Vec<crate::conversation::Block>>(json)
        .map(|blocks| {
            blocks
                .iter()
                .find_map(|b| match b {
                    crate::conversation::Block::Text { text } if !text.trim().is_empty() => Some(text.clone()),
                    crate::conversation::Block::ToolCall(c) => Some(format!("[{}]", c.name)),
                    crate::conversation::Block::Text { .. }
                    | crate::conversation::Block::ToolResult(_)
                    | crate::conversation::Block::Thinking(_)
                    | crate::conversation::Block::Image(_) => None,
                })
                .unwrap_or_default()
        })
        .unwrap_or_default();
    crate::conversation::clip(&crate::conversation::first_plain_line(&text), 100)
}

/// `list` (most recently active first) with each session's subagent sessions right after it,
/// oldest first, under their own parents at any depth. A child whose parent is not listed
/// keeps its place.
fn children_under_parents(list: Vec<SessionSummary>) -> Vec<SessionSummary> {
    let listed: std::collections::HashSet<String> = list.iter().map(|s| s.id.clone()).collect();
    let (roots, mut children): (Vec<_>, Vec<_>) =
        list.into_iter().partition(|s| s.parent.as_ref().is_none_or(|p| !listed.contains(p)));
    // Oldest first under a parent: the order they were started in.
    children.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let mut out = Vec::with_capacity(roots.len() + children.len());
    fn place(s: SessionSummary, children: &mut Vec<SessionSummary>, out: &mut Vec<SessionSummary>) {
        let id = s.id.clone();
        out.push(s);
        let mine: Vec<SessionSummary> = {
            let (mine, rest): (Vec<_>, Vec<_>) =
                std::mem::take(children).into_iter().partition(|c| c.parent.as_deref() == Some(id.as_str()));
            *children = rest;
            mine
        };
        for child in mine {
            place(child, children, out);
        }
    }
    for root in roots {
        place(root, &mut children, &mut out);
    }
    out
}
