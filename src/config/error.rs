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

/// The dotted key written on `line` (1-based), prefixed by the table header in effect.
pub(super) fn key_at(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') && !l.starts_with("[[") {
            table = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
        if i + 1 == line {
            if l.starts_with('[') {
                return (!table.is_empty()).then(|| table.clone());
            }
            let key = l.split('=').next()?.trim().trim_matches('"');
            if key.is_empty() {
                return None;
            }
            return Some(if table.is_empty() { key.to_string() } else { format!("{table}.{key}") });
        }
    }
    None
}
