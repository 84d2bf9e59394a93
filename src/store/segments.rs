use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Store, StoreError, now_rfc3339};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentRow {
    pub id: i64,
    pub level: u32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub tokens: u64,
    pub summary: Option<String>,
    pub parent_id: Option<i64>,
}

impl Store {
    pub fn insert_segment(
        &self,
        session: &str,
        level: u32,
        first_seq: i64,
        last_seq: i64,
        tokens: u64,
    ) -> Result<i64, StoreError> {
        let now = now_rfc3339();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO segments (session_id, level, first_seq, last_seq, tokens, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![session, level, first_seq, last_seq, tokens as i64, now],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Every segment of the session, by level then position.
    pub fn segments(&self, session: &str) -> Result<Vec<SegmentRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, level, first_seq, last_seq, tokens, summary, parent_id FROM segments
             WHERE session_id = ?1 ORDER BY level, first_seq",
        )?;
        let rows = stmt.query_map(params![session], |r| {
            Ok(SegmentRow {
                id: r.get(0)?,
                level: r.get(1)?,
                first_seq: r.get(2)?,
                last_seq: r.get(3)?,
                tokens: r.get::<_, i64>(4)? as u64,
                summary: r.get(5)?,
                parent_id: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The last seq covered by a level-0 segment (0 when there is none).
    pub fn last_segmented_seq(&self, session: &str) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT MAX(last_seq) FROM segments WHERE session_id = ?1 AND level = 0",
                params![session],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()?
            .flatten()
            .unwrap_or(0))
    }

    pub fn set_segment_summary(&self, id: i64, summary: &str) -> Result<(), StoreError> {
        self.execute("UPDATE segments SET summary = ?2 WHERE id = ?1", params![id, summary]).map(|_| ())
    }

    /// A parent over `children`, in one transaction.
    pub fn insert_parent_segment(
        &self,
        session: &str,
        level: u32,
        children: &[SegmentRow],
        summary: &str,
    ) -> Result<i64, StoreError> {
        let (Some(first), Some(last)) = (children.first(), children.last()) else {
            return Err(StoreError::Corrupt("a parent segment needs children".into()));
        };
        let tokens: u64 = children.iter().map(|c| c.tokens).sum();
        let now = now_rfc3339();
        self.write(|tx| {
        tx.execute(
            "INSERT INTO segments (session_id, level, first_seq, last_seq, tokens, summary, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![session, level, first.first_seq, last.last_seq, tokens as i64, summary, now],
        )?;
        let id = tx.last_insert_rowid();
        for c in children {
            tx.execute("UPDATE segments SET parent_id = ?2 WHERE id = ?1", params![c.id, id])?;
        }
        Ok(id)
        })
    }
}
