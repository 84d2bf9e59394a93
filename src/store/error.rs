use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the database {path}: {message}\n  check that the folder is writable, or set CAIRN_HOME to another folder"
    )]
    Open { path: PathBuf, message: String },

    #[error("no session {id} in this project; `cairn sessions` lists them")]
    UnknownSession { id: String },

    #[error("session id {id} is ambiguous ({count} sessions start with it); give more characters")]
    AmbiguousSession { id: String, count: usize },

    #[error("session {id} belongs to another project ({root}); run cairn there, or with -C {root}")]
    OtherProject { id: String, root: String },

    #[error("the database was written by a newer cairn (schema {found}, this build knows {known}); upgrade cairn")]
    TooNew { found: i64, known: i64 },

    #[error("stored data is damaged: {0}")]
    Corrupt(String),

    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
}
