//! Why a headless run stops early, and how a library error maps onto it.

use crate::agent::LibraryError;

/// Why a headless run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// The prompt asked for something that cannot be done (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The run failed (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl From<LibraryError> for HeadlessError {
    fn from(e: LibraryError) -> Self {
        match e {
            LibraryError::Input(message) => HeadlessError::Usage(message),
            LibraryError::Failed(message) => HeadlessError::Failed(message),
        }
    }
}
