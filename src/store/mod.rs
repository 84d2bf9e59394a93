//! SQLite storage: schema, migrations and every SQL statement of cairn. One database file,
//! WAL mode, every message committed as it completes so a crash loses at most the one in flight.
//!
//! Holds no business rules: callers decide what to store and when.

mod blobs;
mod checkpoints;
mod context;
mod drafts;
mod error;
mod lock;
mod memories;
mod messages;
mod migrations;
mod projects;
mod requests;
mod search;
mod segments;
mod sessions;
mod subagents;
mod usage;
mod usage_report;
mod vocabulary;

/// The records the store reads and writes, kept with the shared types every layer shows.
pub use crate::conversation::{MemoryRecord, SessionSummary, ToolDisplay, TurnInfo};
pub use blobs::{BlobContent, CapReport, CheckpointSpace, ContentHash, NewBlob};
pub use checkpoints::{
    CaptureBatch, ChangeRecord, EarlierSummary, ManifestDelta, ManifestEntry, NewChange, PathState, RewoundRange,
    TurnChanges, Unkept, is_rewound,
};
pub use context::CompactionRecord;
pub use error::StoreError;
pub use lock::SessionLock;
pub use memories::NewMemory;
pub use messages::StoredMessage;
pub use projects::ProjectId;
pub use requests::{OutputSize, RequestFigures, RequestRow};
pub use search::{MessageHit, OutputHit, searchable_text};
pub use segments::SegmentRow;
pub use sessions::{NewSession, SessionInfo};
pub use subagents::SubagentSession;
pub use usage::{LastRequest, UsageTotals};
pub use usage_report::{DailyUsage, LoggedCompaction, UsageRow};

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// How long a write waits for other cairn processes on the same database before it fails:
/// their transactions take milliseconds, so ten seconds only runs out when one is stuck.
const WRITE_WAIT: Duration = Duration::from_secs(10);

/// The database. Cheap to share behind an `Arc`; statements are serialised by a mutex, which
/// costs nothing next to SQLite's own single-writer rule.
pub struct Store {
    conn: Mutex<Connection>,
    /// Where session locks live: beside the database file, or in this process for an
    /// in-memory database.
    locks: lock::Locks,
    /// How long a write may wait for other writers (see [`WRITE_WAIT`]).
    write_wait: Duration,
}

impl Store {
    /// Open (creating if needed) the database at `path`, migrating it to the current schema.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::open_folder(path, &e))?;
        }
        // Opening runs statements the busy handler does not cover (switching a new file to WAL,
        // reading a WAL index another opener is still building): when several processes open a
        // new database at once, the losers see "database is locked" and simply try again.
        let started = std::time::Instant::now();
        loop {
            let conn = Connection::open(path).map_err(|e| StoreError::open(path, &e))?;
            let locks = lock::Locks::Dir(path.with_file_name("locks"));
            match Store::init(conn, locks) {
                Ok(store) => return Ok(store),
                Err(e) if e.is_busy() && started.elapsed() < WRITE_WAIT => {
                    std::thread::sleep(Duration::from_millis(fastrand::u64(10..50)));
                }
                Err(StoreError::Sql(err)) => return Err(StoreError::open(path, &err)),
                Err(other) => return Err(other),
            }
        }
    }

    /// A private in-memory database, for tests and replays.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory()?, lock::Locks::InProcess(Default::default()))
    }

    fn init(mut conn: Connection, locks: lock::Locks) -> Result<Store, StoreError> {
        // First, so that every later statement waits for other processes instead of failing.
        conn.busy_timeout(WRITE_WAIT)?;
        // WAL: readers never block the writer and a crash never corrupts; NORMAL sync is
        // durable across process crashes (kill -9), which is the failure that matters here.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::migrate(&mut conn)?;
        Ok(Store { conn: Mutex::new(conn), locks, write_wait: WRITE_WAIT })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is safe to keep using.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `work` in a write transaction and commit it. The transaction takes the write lock
    /// at `BEGIN` (IMMEDIATE): a deferred one that reads first would fail at once with "database
    /// is locked" when it upgrades while another process writes, without waiting. Busy attempts
    /// are retried from the start until the write wait runs out; then the error says so.
    pub(crate) fn write<T>(
        &self,
        mut work: impl FnMut(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            let attempt = {
                let mut conn = self.conn();
                conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from).and_then(
                    |tx| {
                        let value = work(&tx)?;
                        tx.commit()?;
                        Ok(value)
                    },
                )
            };
            match attempt {
                Err(e) if e.is_busy() => {
                    let waited = started.elapsed();
                    if waited >= self.write_wait {
                        tracing::error!(waited_ms = waited.as_millis() as u64, "database write gave up waiting");
                        return Err(StoreError::Busy { waited_secs: waited.as_secs_f64() });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    /// One write statement in its own IMMEDIATE transaction (see [`Store::write`]); the number
    /// of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: impl rusqlite::Params + Clone) -> Result<usize, StoreError> {
        self.write(|tx| Ok(tx.execute(sql, params.clone())?))
    }

    /// The path of the database's folder of session locks, if it has one.
    pub fn locks_dir(&self) -> Option<&Path> {
        match &self.locks {
            lock::Locks::Dir(dir) => Some(dir),
            lock::Locks::InProcess(_) => None,
        }
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
