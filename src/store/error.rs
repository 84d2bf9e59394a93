use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database {path}: {message}\n  {hint}")]
    Open { path: PathBuf, message: String, hint: &'static str },

    #[error("no session {id} in this project; `cairn sessions` lists them")]
    UnknownSession { id: String },

    #[error("session id {id:?} is too short: give at least {min} characters of it (`cairn sessions` lists the ids)")]
    ShortPrefix { id: String, min: usize },

    #[error("session id {id} is ambiguous ({count} sessions start with it); give more characters")]
    AmbiguousSession { id: String, count: usize },

    #[error("session {id} belongs to another project ({root}); run cairn there, or with -C {root}")]
    OtherProject { id: String, root: String },

    #[error("the database was written by a newer cairn (schema {found}, this build knows {known}); upgrade cairn")]
    TooNew { found: i64, known: i64 },

    /// Another process holds the session: two writers would interleave their conversations.
    #[error(
        "session {id} is open in another cairn ({holder}); two runs writing one session would mix their conversations. \
         Let that one finish or quit it, or start a new session (without --resume/--session)"
    )]
    SessionBusy { id: String, holder: String },

    /// A write waited for other processes as long as it may and was not saved.
    #[error(
        "the database stayed locked by another process for {waited_secs:.1} s, so this write was not saved; \
         another cairn (or a tool holding cairn.db open) is stuck — close it and retry"
    )]
    Busy { waited_secs: f64 },

    #[error("stored data is damaged: {0}")]
    Corrupt(String),

    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// What to do when the file is not a database or is damaged: a permissions hint would send
/// the user the wrong way.
const DAMAGED_HINT: &str = "the file is damaged or is not a cairn database; move it aside (e.g. rename it to cairn.db.bad) \
                            to start with an empty one, or set CAIRN_HOME to another folder";
const ACCESS_HINT: &str = "check that the folder is writable, or set CAIRN_HOME to another folder";

impl StoreError {
    /// Opening `path` failed with `error`; the hint follows the cause.
    pub(crate) fn open(path: &Path, error: &rusqlite::Error) -> StoreError {
        let damaged = matches!(
            error,
            rusqlite::Error::SqliteFailure(e, _)
                if matches!(e.code, rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
        );
        let hint = if damaged { DAMAGED_HINT } else { ACCESS_HINT };
        StoreError::Open { path: path.to_path_buf(), message: error.to_string(), hint }
    }

    /// The folder of the database could not be created.
    pub(crate) fn open_folder(path: &Path, error: &std::io::Error) -> StoreError {
        StoreError::Open { path: path.to_path_buf(), message: error.to_string(), hint: ACCESS_HINT }
    }

    /// SQLite said another connection holds the lock.
    pub(crate) fn is_busy(&self) -> bool {
        matches!(
            self,
            StoreError::Sql(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}
