use rusqlite::{OptionalExtension, Row, params};

use super::{ProjectId, Store, StoreError, now_rfc3339};
use crate::conversation::{MemoryKind, MemoryRecord, RetentionClass};

pub struct NewMemory<'a> {
    /// `None` for a global memory.
    pub project: Option<ProjectId>,
    pub kind: MemoryKind,
    pub class: RetentionClass,
    pub title: &'a str,
    pub content: &'a str,
    pub session_id: Option<&'a str>,
    pub expires_at: Option<&'a str>,
    /// Who approved a global memory (see [`MemoryRecord::approved_by`]).
    pub approved_by: Option<&'a str>,
}

/// The columns [`memory_from_row`] reads, in its order.
const MEMORY_COLUMNS: &str = "id, kind, class, pinned, title, content, project_id IS NULL, session_id, created_at, updated_at, expires_at, approved_by";

pub(super) fn memory_from_row(r: &Row<'_>) -> rusqlite::Result<MemoryRecord> {
    Ok(MemoryRecord {
        id: r.get(0)?,
        kind: r.get(1)?,
        class: r.get(2)?,
        pinned: r.get(3)?,
        title: r.get(4)?,
        content: r.get(5)?,
        global: r.get(6)?,
        session_id: r.get(7)?,
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
        expires_at: r.get(10)?,
        approved_by: r.get(11)?,
        quarantined: None,
    })
}

impl Store {
    pub fn create_memory(&self, new: NewMemory<'_>) -> Result<MemoryRecord, StoreError> {
        let now = now_rfc3339();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO memories (project_id, kind, class, title, content, session_id, created_at, updated_at, expires_at, approved_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)",
                params![
                    new.project.map(|p| p.0),
                    new.kind,
                    new.class,
                    new.title,
                    new.content,
                    new.session_id,
                    now,
                    new.expires_at,
                    new.project.is_none().then_some(new.approved_by).flatten()
                ],
            )?;
            let id = tx.last_insert_rowid();
            Ok(tx.query_row(&format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"), params![id], memory_from_row)?)
        })
    }

    /// The project's memories and the global ones, newest first.
    pub fn memories(&self, project: ProjectId) -> Result<Vec<MemoryRecord>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE project_id = ?1 OR project_id IS NULL ORDER BY created_at DESC, id DESC"
        ))?;
        Ok(stmt.query_map(params![project.0], memory_from_row)?.collect::<Result<_, _>>()?)
    }

    /// A memory visible from `project` (its own or a global one).
    pub fn memory(&self, project: ProjectId, id: i64) -> Result<Option<MemoryRecord>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1 AND (project_id = ?2 OR project_id IS NULL)"
                ),
                params![id, project.0],
                memory_from_row,
            )
            .optional()?)
    }

    pub fn update_memory(&self, project: ProjectId, id: i64, title: &str, content: &str) -> Result<bool, StoreError> {
        self.execute(
            "UPDATE memories SET title = ?3, content = ?4, updated_at = ?5 WHERE id = ?1 AND (project_id = ?2 OR project_id IS NULL)",
            params![id, project.0, title, content, now_rfc3339()],
        )
        .map(|n| n == 1)
    }

    pub fn set_memory_pinned(&self, project: ProjectId, id: i64, pinned: bool) -> Result<bool, StoreError> {
        self.execute(
            "UPDATE memories SET pinned = ?3, updated_at = ?4 WHERE id = ?1 AND (project_id = ?2 OR project_id IS NULL)",
            params![id, project.0, pinned, now_rfc3339()],
        )
        .map(|n| n == 1)
    }

    /// Make a memory global (every project sees it), recording who approved that, or this
    /// project's own; false when there is none by that id.
    pub fn set_memory_global(
        &self,
        project: ProjectId,
        id: i64,
        global: bool,
        approved_by: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.execute(
            "UPDATE memories SET project_id = CASE WHEN ?3 THEN NULL ELSE ?2 END,
                 approved_by = CASE WHEN ?3 THEN ?5 ELSE NULL END, updated_at = ?4
             WHERE id = ?1 AND (project_id = ?2 OR project_id IS NULL)",
            params![id, project.0, global, now_rfc3339(), approved_by],
        )
        .map(|n| n == 1)
    }

    /// Delete a memory of this project (or a global one); false when there is none by that id.
    pub fn delete_memory(&self, project: ProjectId, id: i64) -> Result<bool, StoreError> {
        self.execute(
            "DELETE FROM memories WHERE id = ?1 AND (project_id = ?2 OR project_id IS NULL)",
            params![id, project.0],
        )
        .map(|n| n == 1)
    }
}
