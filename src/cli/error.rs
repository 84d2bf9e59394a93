/// Why cairn stopped, and with which exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage or bad input: exit 2.
    #[error("{0}")]
    Usage(String),
    /// The run failed: exit 1.
    #[error("{0}")]
    Failed(String),
    /// Whoever read the output stopped reading (`cairn export ID | head`): nothing is wrong,
    /// so cairn stops quietly with success.
    #[error("the output was closed")]
    OutputClosed,
}

impl CliError {
    pub fn code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) => 1,
            CliError::OutputClosed => 0,
        }
    }
}

impl From<crate::config::ConfigError> for CliError {
    fn from(e: crate::config::ConfigError) -> Self {
        CliError::Usage(e.to_string())
    }
}

impl From<crate::store::StoreError> for CliError {
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError;
        match e {
            StoreError::UnknownSession { .. }
            | StoreError::AmbiguousSession { .. }
            | StoreError::ShortPrefix { .. }
            | StoreError::OtherProject { .. } => CliError::Usage(e.to_string()),
            StoreError::Open { .. } | StoreError::TooNew { .. } => CliError::Usage(e.to_string()),
            StoreError::Corrupt(_) | StoreError::Sql(_) => CliError::Failed(e.to_string()),
            StoreError::SessionBusy { .. } | StoreError::Busy { .. } => CliError::Failed(e.to_string()),
        }
    }
}

impl From<crate::headless::HeadlessError> for CliError {
    fn from(e: crate::headless::HeadlessError) -> Self {
        use crate::headless::HeadlessError;
        match e {
            HeadlessError::Usage(message) => CliError::Usage(message),
            HeadlessError::Failed(message) => CliError::Failed(message),
        }
    }
}

impl From<crate::agent::LibraryError> for CliError {
    fn from(e: crate::agent::LibraryError) -> Self {
        use crate::agent::LibraryError;
        match e {
            LibraryError::Input(message) => CliError::Usage(message),
            LibraryError::Failed(message) => CliError::Failed(message),
        }
    }
}
