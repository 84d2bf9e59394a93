//! Secrets in text about to leave for a summariser, or coming back in a summary: API keys,
//! tokens, private keys and the values of password-like variables in env dumps.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

/// The patterns, in order of application. Word boundaries are ASCII (`(?-u:\b)`): secrets
/// are ASCII, and Unicode word boundaries would keep the regex engine off its fast path.
const PATTERNS: [(&str, &str); 10] = [
    (r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", "[REDACTED private key]"),
    (r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{16,}", "[REDACTED key]"),
    (r"(?-u:\b)sk-(?:proj-)?[A-Za-z0-9_\-]{20,}", "[REDACTED key]"),
    (r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{30,}(?-u:\b)", "[REDACTED token]"),
    (r"(?-u:\b)github_pat_[A-Za-z0-9_]{30,}(?-u:\b)", "[REDACTED token]"),
    (r"(?-u:\b)AKIA[0-9A-Z]{16}(?-u:\b)", "[REDACTED key]"),
    (r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}(?-u:\b)", "[REDACTED key]"),
    (r"(?-u:\b)xox[abposr]-[A-Za-z0-9\-]{10,}", "[REDACTED token]"),
    (r"(?i)(?-u:\b)(?P<name>authorization:\s*(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=\-]{8,}", "${name}[REDACTED]"),
    (
        r#"(?i)(?-u:\b)(?P<name>[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*\s*[=:]\s*["']?)[^\s"']{6,}"#,
        "${name}[REDACTED]",
    ),
];

struct Compiled {
    /// One pass over the text says which patterns occur at all.
    any: RegexSet,
    each: Vec<Regex>,
}

// The patterns are constants and `every_pattern_compiles` proves they compile; failing
// silently here would turn redaction off, which is worse than failing loudly.
#[allow(clippy::expect_used)]
static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    any: RegexSet::new(PATTERNS.iter().map(|(p, _)| *p)).expect("constant patterns compile"),
    each: PATTERNS.iter().map(|(p, _)| Regex::new(p).expect("constant patterns compile")).collect(),
});

/// `text` with every secret-looking value replaced.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    let compiled = &*COMPILED;
    let found = compiled.any.matches(text);
    if !found.matched_any() {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    for i in found.iter() {
        out = Cow::Owned(compiled.each[i].replace_all(&out, PATTERNS[i].1).into_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for (pattern, _) in PATTERNS {
            assert!(Regex::new(pattern).is_ok(), "{pattern}");
        }
        assert_eq!(COMPILED.each.len(), PATTERNS.len());
    }

    #[test]
    fn keys_tokens_and_env_values_are_redacted_and_names_kept() {
        let env = "HOME=/root\nOPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456\nDB_PASSWORD=hunter2hunter\nGITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123456789\nPATH=/usr/bin";
        let out = redact_secrets(env);
        assert!(out.contains("HOME=/root") && out.contains("PATH=/usr/bin"));
        assert!(out.contains("OPENAI_API_KEY=[REDACTED"), "{out}");
        assert!(out.contains("DB_PASSWORD=[REDACTED]"), "{out}");
        assert!(!out.contains("hunter2") && !out.contains("ghp_abc") && !out.contains("sk-proj"), "{out}");
        let header = redact_secrets("curl -H 'Authorization: Bearer abc.def.ghi123456'");
        assert!(header.contains("Authorization: Bearer [REDACTED]"), "{header}");
        let pem = redact_secrets("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----");
        assert_eq!(pem, "[REDACTED private key]");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let text = "The token count is 42; set max_tokens=4096 and see src/secret_santa.rs";
        assert!(matches!(redact_secrets(text), Cow::Borrowed(_)), "{}", redact_secrets(text));
    }
}
