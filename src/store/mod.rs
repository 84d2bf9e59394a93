//! SQLite storage: schema, migrations and every SQL statement of cairn. One database file,
//! WAL mode, every message committed as it completes so a crash loses at most the one in flight.
//!
//! Holds no business rules: callers decide what to store and when.

mod context;
mod drafts;
mod error;
mod memories;
mod messages;
mod migrations;
mod projects;
mod search;
mod segments;
mod sessions;
mod usage;
mod usage_report;
mod vocabulary;

pub use context::CompactionRecord;
pub use error::StoreError;
pub use memories::{MemoryRecord, NewMemory};
pub use messages::{StoredMessage, ToolDisplay, ToolRecord};
pub use projects::ProjectId;
pub use search::{MessageHit, searchable_text};
pub use segments::SegmentRow;
pub use sessions::{NewSession, SessionInfo, SessionSummary};
pub use usage::UsageTotals;
pub use usage_report::{DailyUsage, LoggedCompaction, UsageRow};

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

/// The database. Cheap to share behind an `Arc`; statements are serialised by a mutex, which
/// costs nothing next to SQLite's own single-writer rule.
pub struct Store {
    conn: Mutex<Connection>,
}

impl Store {
    /// Open (creating if needed) the database at `path`, migrating it to the current schema.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Open { path: path.to_path_buf(), message: e.to_string() })?;
        }
        let conn = Connection::open(path)
            .map_err(|e| StoreError::Open { path: path.to_path_buf(), message: e.to_string() })?;
        Store::init(conn).map_err(|e| match e {
            StoreError::Sql(err) => StoreError::Open { path: path.to_path_buf(), message: err.to_string() },
            other => other,
        })
    }

    /// A private in-memory database, for tests and replays.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Store, StoreError> {
        // WAL: readers never block the writer and a crash never corrupts; NORMAL sync is
        // durable across process crashes (kill -9), which is the failure that matters here.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations::migrate(&conn)?;
        Ok(Store { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The schema version, for `cairn doctor`.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self.conn().pragma_query_value(None, "user_version", |r| r.get(0))?)
    }
}

pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
