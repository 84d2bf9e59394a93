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
                let end = crate::conversation::floor_char_boundary(&result.content, INDEXED_RESULT_CHARS as usize);
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

/// A tool output of a session that matched a search, beyond what the message index holds.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputHit {
    pub call_id: String,
    pub tool: String,
    /// The seq of the message that carried the (possibly truncated) result.
    pub seq: i64,
    pub output: String,
    /// How many of the searched words it holds.
    pub matched: usize,
}

/// Characters of a tool result the message index holds ([`searchable_text`]).
const INDEXED_RESULT_CHARS: i64 = 4_000;

impl Store {
    /// The full outputs of `session`'s tool calls that are longer than what the message index
    /// holds and contain any of `words` (lower-case), those holding the most first.
    pub fn search_tool_outputs(
        &self,
        session: &str,
        words: &[String],
        limit: usize,
    ) -> Result<Vec<OutputHit>, StoreError> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let any: Vec<String> = (0..words.len()).map(|i| format!("instr(lower(t.output), ?{}) > 0", i + 3)).collect();
        let sql = format!(
            "SELECT t.call_id, t.tool, m.seq, t.output FROM tool_results t JOIN messages m ON m.id = t.message_id
             WHERE t.session_id = ?1 AND length(t.output) > ?2 AND ({}) ORDER BY m.seq",
            any.join(" OR ")
        );
        let conn = self.conn();
        let mut stmt = conn.prepare(&sql)?;
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![&session, &INDEXED_RESULT_CHARS];
        values.extend(words.iter().map(|w| w as &dyn rusqlite::ToSql));
        let rows = stmt.query_map(values.as_slice(), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (call_id, tool, seq, output) = row?;
            let lower = output.to_lowercase();
            let matched = words.iter().filter(|w| lower.contains(w.as_str())).count();
            out.push(OutputHit { call_id, tool, seq, output, matched });
        }
        out.sort_by_key(|h| std::cmp::Reverse(h.matched));
        out.truncate(limit);
        Ok(out)
    }
}
