//! What each agent request carried, kept beside its usage row for the session report: the
//! window and thresholds, the context in four parts, what the pipeline did before it and the
//! cache break it showed. The JSON columns are the caller's; the store only keeps them.

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};
use crate::conversation::Usage;

/// One request's figures. The four parts add up to the prompt tokens the provider reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestFigures {
    pub window: u64,
    pub effective: u64,
    pub warning: u64,
    pub auto_compact: u64,
    pub blocking: u64,
    /// The system prompt (without the memory block) and the tool definitions.
    pub system_tokens: u64,
    pub memory_tokens: u64,
    /// The compaction summary and the user's words carried beside it.
    pub summary_tokens: u64,
    pub message_tokens: u64,
    /// What the pipeline did since the request before (JSON list).
    pub stages: String,
    /// The cache break this request showed (JSON), if any.
    pub cache_break: Option<String>,
}

/// One stored request of a session, with its figures when it has them (agent requests made
/// since the figures were kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRow {
    pub id: i64,
    pub session_id: String,
    pub purpose: String,
    pub model: String,
    pub usage: Usage,
    pub created_at: String,
    pub figures: Option<RequestFigures>,
}

/// A tool call's whole output, by size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSize {
    pub call_id: String,
    pub tool: String,
    pub arguments: String,
    pub bytes: u64,
}

impl Store {
    /// The session's `limit` largest tool outputs, largest first.
    pub fn largest_outputs(&self, session: &str, limit: usize) -> Result<Vec<OutputSize>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT call_id, tool, arguments, length(CAST(output AS BLOB)) AS size FROM tool_results
             WHERE session_id = ?1 ORDER BY size DESC, id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![session, limit as i64], |r| {
            Ok(OutputSize {
                call_id: r.get(0)?,
                tool: r.get(1)?,
                arguments: r.get(2)?,
                bytes: r.get::<_, i64>(3)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn record_request_figures(&self, usage_id: i64, f: &RequestFigures) -> Result<(), StoreError> {
        self.execute(
            "INSERT OR REPLACE INTO request_figures (usage_id, window, effective, warning, auto_compact, blocking,
                 system_tokens, memory_tokens, summary_tokens, message_tokens, stages, cache_break)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                usage_id,
                f.window as i64,
                f.effective as i64,
                f.warning as i64,
                f.auto_compact as i64,
                f.blocking as i64,
                f.system_tokens as i64,
                f.memory_tokens as i64,
                f.summary_tokens as i64,
                f.message_tokens as i64,
                f.stages,
                f.cache_break
            ],
        )?;
        Ok(())
    }

    /// Every request of `sessions` (a session and, say, its subagents'), oldest first.
    pub fn request_rows(&self, sessions: &[String]) -> Result<Vec<RequestRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT u.id, u.session_id, u.purpose, u.model, u.input_tokens, u.output_tokens,
                    u.cache_read_input_tokens, u.cache_creation_input_tokens, u.created_at,
                    f.window, f.effective, f.warning, f.auto_compact, f.blocking, f.system_tokens,
                    f.memory_tokens, f.summary_tokens, f.message_tokens, f.stages, f.cache_break
             FROM usage u LEFT JOIN request_figures f ON f.usage_id = u.id
             WHERE u.session_id = ?1 ORDER BY u.id",
        )?;
        let mut rows = Vec::new();
        for session in sessions {
            let found = stmt.query_map(params![session], |r| {
                let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)? as u64) };
                let figures = match r.get::<_, Option<i64>>(9)? {
                    Some(window) => Some(RequestFigures {
                        window: window as u64,
                        effective: n(10)?,
                        warning: n(11)?,
                        auto_compact: n(12)?,
                        blocking: n(13)?,
                        system_tokens: n(14)?,
                        memory_tokens: n(15)?,
                        summary_tokens: n(16)?,
                        message_tokens: n(17)?,
                        stages: r.get(18)?,
                        cache_break: r.get(19)?,
                    }),
                    None => None,
                };
                Ok(RequestRow {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    purpose: r.get(2)?,
                    model: r.get(3)?,
                    usage: Usage {
                        input_tokens: n(4)?,
                        output_tokens: n(5)?,
                        cache_read_input_tokens: n(6)?,
                        cache_creation_input_tokens: n(7)?,
                    },
                    created_at: r.get(8)?,
                    figures,
                })
            })?;
            for row in found {
                rows.push(row?);
            }
        }
        rows.sort_by_key(|r| r.id);
        Ok(rows)
    }

    /// Ids of every session under `session` (its subagents, theirs, …).
    pub fn descendant_sessions(&self, session: &str) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        let mut open = vec![session.to_string()];
        while let Some(id) = open.pop() {
            for child in self.child_sessions(&id)? {
                if !out.contains(&child) && child != session {
                    out.push(child.clone());
                    open.push(child);
                }
            }
        }
        Ok(out)
    }

    /// The full text of each compaction summary of the session, oldest first, with when and
    /// through which message.
    pub fn compaction_summaries(&self, session: &str) -> Result<Vec<(String, i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT created_at, through_seq, summary FROM compactions WHERE session_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map(params![session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Each user message of the session (oldest first) with the time of the agent's answer
    /// before it, if any: how long the user was away each time.
    pub fn idle_gaps(&self, session: &str) -> Result<Vec<(String, Option<String>)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT m.created_at,
                    (SELECT MAX(u.created_at) FROM usage u
                     WHERE u.session_id = m.session_id AND u.purpose = 'turn' AND u.created_at <= m.created_at)
             FROM messages m WHERE m.session_id = ?1 AND m.role = 'user' ORDER BY m.seq",
        )?;
        let rows = stmt.query_map(params![session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// When the session's first message was written, if it has one.
    pub fn first_message_at(&self, session: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT created_at FROM messages WHERE session_id = ?1 ORDER BY seq LIMIT 1",
                params![session],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::Mode;
    use crate::store::NewSession;

    #[test]
    fn figures_ride_with_their_request_and_go_with_it() {
        let store = Store::open_in_memory().unwrap();
        let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let s = store
            .create_session(project, NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit })
            .unwrap();
        let u = Usage { input_tokens: 10, ..Usage::default() };
        let first = store.record_usage(&s.id, None, "turn", "m", &u).unwrap();
        store.record_usage(&s.id, None, "compaction", "m", &u).unwrap();
        let figures = RequestFigures {
            window: 200_000,
            system_tokens: 4,
            message_tokens: 6,
            stages: "[]".into(),
            cache_break: Some("{}".into()),
            ..RequestFigures::default()
        };
        store.record_request_figures(first, &figures).unwrap();
        let rows = store.request_rows(std::slice::from_ref(&s.id)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].figures.as_ref(), Some(&figures));
        assert_eq!(rows[1].figures, None, "an auxiliary call has none");
        store.delete_session(&s.id).unwrap();
        assert!(store.request_rows(&[s.id]).unwrap().is_empty());
    }
}
