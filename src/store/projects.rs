use std::path::Path;

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError, now_rfc3339};

/// A project: everything is scoped by the canonical path of its root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProjectId(pub i64);

impl Store {
    /// The project rooted at `root` (canonical), created on first use.
    pub fn project(&self, root: &Path) -> Result<ProjectId, StoreError> {
        let root = root.to_string_lossy();
        let now = now_rfc3339();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO projects (root, created_at) VALUES (?1, ?2) ON CONFLICT(root) DO NOTHING",
                params![root, now],
            )?;
            Ok(ProjectId(tx.query_row("SELECT id FROM projects WHERE root = ?1", params![root], |r| r.get(0))?))
        })
    }

    pub fn project_root(&self, id: ProjectId) -> Result<Option<String>, StoreError> {
        Ok(self.conn().query_row("SELECT root FROM projects WHERE id = ?1", params![id.0], |r| r.get(0)).optional()?)
    }
}
