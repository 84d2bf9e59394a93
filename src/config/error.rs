use std::path::PathBuf;

/// A config file that cannot be used. Messages name the file, the line and the key, and say
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Unreadable { path: PathBuf, source: std::io::Error },

    #[error("config file {path}, line {line}{key}: {message}\n  fix that line or remove it; `cairn doctor` shows the resolved configuration", key = key_suffix(.key))]
    Invalid { path: PathBuf, line: usize, key: Option<String>, message: String },

    #[error("config file {path}: {message}")]
    Inconsistent { path: PathBuf, message: String },
}

fn key_suffix(key: &Option<String>) -> String {
    match key {
        Some(k) => format!(", key `{k}`"),
        None => String::new(),
    }
}
