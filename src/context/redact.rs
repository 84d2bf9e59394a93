//! Secrets in text about to leave for a summariser, or coming back in a summary: API keys,
//! tokens, private keys and the values of password-like variables in env dumps.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

struct Pattern {
    regex: Regex,
    /// Replacement; `$name` keeps a captured variable name.
    with: &'static str,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |re: &str, with: &'static str| {
        // The patterns are constants checked by the tests below; a failure is a programming
        // error caught there, so a pattern that does not compile is skipped, not a panic.
        Regex::new(re).ok().map(|regex| Pattern { regex, with })
    };
    [
        p(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", "[REDACTED private key]"),
        p(r"\bsk-ant-[A-Za-z0-9_\-]{16,}", "[REDACTED key]"),
        p(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}", "[REDACTED key]"),
        p(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", "[REDACTED token]"),
        p(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b", "[REDACTED token]"),
        p(r"\bAKIA[0-9A-Z]{16}\b", "[REDACTED key]"),
        p(r"\bAIza[0-9A-Za-z_\-]{35}\b", "[REDACTED key]"),
        p(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "[REDACTED token]"),
        p(r"(?i)\b(?P<name>authorization:\s*(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=\-]{8,}", "${name}[REDACTED]"),
        p(
            r#"(?i)\b(?P<name>[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*\s*[=:]\s*["']?)[^\s"']{6,}"#,
            "${name}[REDACTED]",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// `text` with every secret-looking value replaced.
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for pattern in PATTERNS.iter() {
        if pattern.regex.is_match(&out) {
            out = Cow::Owned(pattern.regex.replace_all(&out, pattern.with).into_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(PATTERNS.len(), 10);
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
