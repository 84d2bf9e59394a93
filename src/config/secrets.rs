//! Keys and their redaction: a key may sit in memory and go into a request header, and nowhere
//! else — not the database, an export, or a log line.

use std::borrow::Cow;

/// Environment variables that hold provider keys.
pub const KEY_VARS: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// An API key. Its `Debug` never shows the value, so it cannot reach a log line or an error
/// message by accident; it is never serialised.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The key itself, for the one place that needs it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Replaces known key values with a marker naming the variable they came from.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<(Secret, &'static str)>,
}

/// Shorter values are not treated as secrets: replacing them would mangle ordinary text.
const MIN_SECRET_LEN: usize = 8;

impl Redactor {
    /// The values of every provider key variable that is set.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Redactor {
        let mut redactor = Redactor::default();
        for var in KEY_VARS {
            if let Some(value) = env(var) {
                redactor.add(var, value.trim());
            }
        }
        redactor
    }

    pub fn add(&mut self, name: &'static str, value: &str) {
        if value.len() >= MIN_SECRET_LEN && !self.secrets.iter().any(|(s, _)| s.expose() == value) {
            self.secrets.push((Secret::new(value), name));
        }
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (secret, name) in &self.secrets {
            if out.contains(secret.expose()) {
                out = Cow::Owned(out.replace(secret.expose(), &format!("[REDACTED {name}]")));
            }
        }
        out
    }

    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_are_replaced_and_short_values_ignored() {
        let env = |k: &str| match k {
            "ANTHROPIC_API_KEY" => Some("sk-ant-123456789\n".to_string()),
            "OPENAI_API_KEY" => Some("short".to_string()),
            _ => None,
        };
        let r = Redactor::from_env(&env);
        assert_eq!(r.redact("key=sk-ant-123456789 ok"), "key=[REDACTED ANTHROPIC_API_KEY] ok");
        assert_eq!(r.redact("short stays"), "short stays");
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn secret_never_prints() {
        let s = Secret::new("sk-very-secret");
        assert!(!format!("{s:?}").contains("very"));
    }
}
