use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError, now_rfc3339};
use crate::conversation::{Block, FinishedCall, Message, Role, ToolDisplay};

/// A message as stored: its row id, its position in the session, and when it completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredMessage {
    pub id: i64,
    pub seq: i64,
    pub message: Message,
    pub created_at: String,
}

impl Store {
    /// Commit one completed message.
    pub fn append_message(&self, session: &str, message: &Message) -> Result<StoredMessage, StoreError> {
        self.append(session, message, None)
    }

    /// Commit a tool message together with the record of its call (its whole output), in one
    /// transaction.
    pub fn append_tool_message(
        &self,
        session: &str,
        message: &Message,
        record: &FinishedCall,
    ) -> Result<StoredMessage, StoreError> {
        self.append(session, message, Some(record))
    }

    fn append(
        &self,
        session: &str,
        message: &Message,
        record: Option<&FinishedCall>,
    ) -> Result<StoredMessage, StoreError> {
        let content = serde_json::to_string(&message.content)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode message: {e}")))?;
        let now = now_rfc3339();
        self.write(|tx| {
        let seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1",
            params![session],
            |r| r.get(0),
        )?;
        tx.execute(
            "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![session, seq, message.role.as_str(), content, now],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO messages_fts (rowid, text) VALUES (?1, ?2)",
            params![id, super::search::searchable_text(message)],
        )?;
        if let Some(r) = record {
            tx.execute(
                "INSERT INTO tool_results (session_id, message_id, call_id, tool, arguments, output, is_error, exit_code, diff, duration_ms, created_at, not_run, decided_by, summary)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    session,
                    id,
                    r.call_id,
                    r.tool,
                    r.arguments,
                    r.output,
                    r.is_error,
                    r.exit_code,
                    r.diff,
                    r.duration.as_millis() as i64,
                    now,
                    r.not_run,
                    // The column keeps the approval line (the short `decided_by` is not stored).
                    r.approval,
                    r.summary
                ],
            )?;
        }
        tx.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![session, now])?;
        Ok(StoredMessage { id, seq, message: message.clone(), created_at: now.clone() })
        })
    }

    /// Every message of the session, in order.
    pub fn messages(&self, session: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.messages_between(session, i64::MIN, i64::MAX)
    }

    /// The messages of the session with `first <= seq <= last`, in order.
    pub fn messages_between(&self, session: &str, first: i64, last: i64) -> Result<Vec<StoredMessage>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, seq, role, content, created_at FROM messages
             WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session, first, last], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get(4)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, seq, role, content, created_at) = row?;
            let role =
                Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("message {id} has role {role:?}")))?;
            let content: Vec<Block> = serde_json::from_str(&content)
                .map_err(|e| StoreError::Corrupt(format!("message {id} has unreadable content: {e}")))?;
            out.push(StoredMessage { id, seq, message: Message { role, content }, created_at });
        }
        Ok(out)
    }

    /// What a transcript shows of every call of the session, by call id — everything but the
    /// output, in one query.
    pub fn tool_display(&self, session: &str) -> Result<std::collections::HashMap<String, ToolDisplay>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT call_id, diff, duration_ms, not_run, decided_by, summary FROM tool_results WHERE session_id = ?1",
        )?;
        let rows = stmt.query_map(params![session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                ToolDisplay {
                    diff: r.get(1)?,
                    duration_ms: r.get::<_, i64>(2)? as u64,
                    not_run: r.get(3)?,
                    decided_by: r.get(4)?,
                    summary: r.get::<_, Option<String>>(5)?.filter(|s| !s.is_empty()),
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The whole stored output of a tool call of the session.
    pub fn tool_output(&self, session: &str, call_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT output FROM tool_results WHERE session_id = ?1 AND call_id = ?2 ORDER BY id DESC LIMIT 1",
                params![session, call_id],
                |r| r.get(0),
            )
            .optional()?)
    }
}
