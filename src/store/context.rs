use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError, now_rfc3339};

/// One compaction, as logged.
pub struct CompactionRecord<'a> {
    pub trigger: &'a str,
    pub through_seq: i64,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary: &'a str,
}

impl Store {
    /// The session's context state (JSON), if it has one.
    pub fn context_state(&self, session: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT state FROM context_state WHERE session_id = ?1", params![session], |r| r.get(0))
            .optional()?)
    }

    pub fn save_context_state(&self, session: &str, state: &str) -> Result<(), StoreError> {
        let now = now_rfc3339();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO context_state (session_id, state, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                params![session, state, now],
            )?;
            Ok(())
        })
    }

    /// A compaction, all or nothing: the new context state and the log entry (which holds the
    /// summary) commit together, or the old state stands. A summary is no memory: it is kept in
    /// this log, and the messages it stands for stay searchable by the recall tool.
    pub fn commit_compaction(
        &self,
        session: &str,
        state: &str,
        record: &CompactionRecord<'_>,
    ) -> Result<(), StoreError> {
        let now = now_rfc3339();
        self.write(|tx| {
        tx.execute(
            "INSERT INTO context_state (session_id, state, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            params![session, state, now],
        )?;
        tx.execute(
            "INSERT INTO compactions (session_id, trigger, through_seq, tokens_before, tokens_after, summary, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session,
                record.trigger,
                record.through_seq,
                record.tokens_before as i64,
                record.tokens_after as i64,
                record.summary,
                now
            ],
        )?;
        Ok(())
        })
    }

    /// How many compactions the session has been through.
    pub fn compaction_count(&self, session: &str) -> Result<u64, StoreError> {
        Ok(self.conn().query_row("SELECT COUNT(*) FROM compactions WHERE session_id = ?1", params![session], |r| {
            r.get::<_, i64>(0)
        })? as u64)
    }

    /// When the session last made an agent request (RFC 3339), to tell whether the provider's
    /// cache may still be warm.
    pub fn last_request_at(&self, session: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT created_at FROM usage WHERE session_id = ?1 AND purpose = 'turn' ORDER BY id DESC LIMIT 1",
                params![session],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Ids of sessions active since `since` (RFC 3339): their spilled outputs are kept.
    pub fn sessions_active_since(&self, since: &str) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id FROM sessions WHERE updated_at >= ?1")?;
        Ok(stmt.query_map(params![since], |r| r.get(0))?.collect::<Result<_, _>>()?)
    }
}
