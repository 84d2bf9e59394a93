//! A summariser that needs no model: it writes the summary sections from the transcript
//! itself — the user's words, the calls made, the files touched, the last errors. Used by
//! `context replay` when no provider is configured (and said so), and by the benchmarks.

use futures_util::future::BoxFuture;

use super::compact::{Summarizer, SummaryError};

pub struct ExtractiveSummarizer {
    pub window: u64,
}

fn section(out: &mut String, title: &str, items: &[String]) {
    out.push_str(&format!("## {title}\n"));
    if items.is_empty() {
        out.push_str("none\n");
    }
    for item in items {
        out.push_str(&format!("- {item}\n"));
    }
    out.push('\n');
}

/// Summarise `request` (the text the pipeline sends a summariser) in about `max_tokens`.
pub fn extract(request: &str, max_tokens: u32) -> String {
    let previous = request
        .split_once("<summary>\n")
        .and_then(|(_, rest)| rest.split_once("\n</summary>"))
        .map(|(s, _)| s.to_string());
    let transcript = request.split_once("<messages>\n").map(|(_, t)| t).unwrap_or(request);
    let mut users = Vec::new();
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut files = std::collections::BTreeSet::new();
    let mut lines = transcript.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "USER:" {
            if let Some(text) = lines.next() {
                users.push(crate::conversation::clip(text.trim(), 300));
            }
        } else if let Some(call) = line.strip_prefix("→ called ") {
            calls.push(crate::conversation::clip(call, 160));
            for word in call.split(|c: char| c == '"' || c.is_whitespace()) {
                if word.contains('/') && word.contains('.') && word.len() < 120 {
                    files.insert(word.trim_matches(|c: char| c == ',' || c == '}').to_string());
                }
            }
        } else if line.to_lowercase().contains("error") && line.len() < 300 {
            errors.push(line.trim().to_string());
        }
    }
    let mut out = String::new();
    if let Some(previous) = previous {
        out.push_str(previous.trim());
        out.push_str("\n\n## Since then\n\n");
    }
    section(&mut out, "Goal", &users.iter().take(1).cloned().collect::<Vec<_>>());
    section(&mut out, "Constraints & Preferences", &users.iter().skip(1).cloned().collect::<Vec<_>>());
    section(&mut out, "Done — do not repeat", &calls.iter().rev().take(20).rev().cloned().collect::<Vec<_>>());
    section(&mut out, "Relevant Files", &files.into_iter().take(30).collect::<Vec<_>>());
    section(&mut out, "Critical Context", &errors.iter().rev().take(5).rev().cloned().collect::<Vec<_>>());
    let max_chars = (max_tokens as usize) * 3;
    crate::conversation::clip(&out, max_chars)
}

impl Summarizer for ExtractiveSummarizer {
    fn summarize<'a>(
        &'a self,
        _system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move { Ok(extract(user, max_tokens)) })
    }

    fn window(&self) -> u64 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_goal_calls_files_and_errors() {
        let request = "Summarise the messages below.\n\n<messages>\nUSER:\nport the parser to nom\nASSISTANT:\n→ called file_read {\"path\":\"src/parse.rs\"}\nRESULT of file_read:\nerror[E0308]: mismatched types\nUSER:\nnever touch vendor/\n</messages>";
        let s = extract(request, 2_000);
        assert!(s.contains("## Goal\n- port the parser to nom"), "{s}");
        assert!(s.contains("- never touch vendor/"));
        assert!(s.contains("src/parse.rs"));
        assert!(s.contains("error[E0308]"));
    }
}
