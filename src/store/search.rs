use rusqlite::params;
use serde::Serialize;

use super::memories::memory_from_row;
use super::{ProjectId, Store, StoreError};
use crate::conversation::MemoryRecord;
use crate::conversation::{Block, Message, Role};

/// A past message that matched a search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MessageHit {
    pub session_id: String,
    pub session_title: String,
    pub seq: i64,
    pub role: String,
    pub created_at: String,
    /// The message's text, for the caller to cut a snippet from.
    pub text: String,
    /// bm25 rank: lower is better.
    pub rank: f64,
}

/// What of a message is searchable: its text, and tool results (the start of long ones).
pub fn searchable_text(message: &Message) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            Block::Text { text } => out.push_str(text),
            Block::ToolCall(call) => out.push_str(&call.name),
            Block::ToolResult(result) => {
                let end = crate::conversation::floor_char_boundary(&result.content, 4_000);
                out.push_str(&result.content[..end]);
            }
            // Thinking is the model's scratch work, and an image has no words to find.
            Block::Thinking(_) => {}
            Block::Image(image) => out.push_str(&image.source),
        }
        out.push(' ');
    }
    out
}

impl Store {
    /// Memories of the project (and global ones) matching `fts_query`, best first.
    pub fn search_memories(
        &self,
        project: ProjectId,
        fts_query: &str,
        limit: usize,
    ) -> Result<Vec<MemoryRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT m.id, m.kind, m.class, m.pinned, m.title, m.content, m.project_id IS NULL, m.session_id,
                    m.created_at, m.updated_at, m.expires_at, m.approved_by
             FROM memories_fts f JOIN memories m ON m.id = f.rowid
             WHERE memories_fts MATCH ?1 AND (m.project_id = ?2 OR m.project_id IS NULL)
             ORDER BY bm25(memories_fts, 2.0, 1.0) LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![fts_query, project.0, limit as i64], memory_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Messages of the project's sessions matching `fts_query`, best first. `skip` leaves out
    /// messages the caller already shows: (session, seq) pairs.
    pub fn search_messages(
        &self,
        project: ProjectId,
        fts_query: &str,
        limit: usize,
        skip: &dyn Fn(&str, i64) -> bool,
    ) -> Result<Vec<MessageHit>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT m.session_id, s.title, m.seq, m.role, m.created_at, m.content, bm25(messages_fts)
             FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
             WHERE messages_fts MATCH ?1 AND s.project_id = ?2
             ORDER BY bm25(messages_fts) LIMIT ?3",
        )?;
        // Ask for more than needed: some are skipped.
        let rows = stmt.query_map(params![fts_query, project.0, (limit * 4 + 20) as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, f64>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (session_id, session_title, seq, role, created_at, content, rank) = row?;
            if skip(&session_id, seq) {
                continue;
            }
            let blocks: Vec<Block> = serde_json::from_str(&content).unwrap_or_default();
            let role_value = Role::parse(&role).unwrap_or(Role::User);
            let text = searchable_text(&Message { role: role_value, content: blocks });
            out.push(MessageHit { session_id, session_title, seq, role, created_at, text, rank });
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }
}
