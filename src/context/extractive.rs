//! Summarisers that need no model. The extractive one writes the summary sections from the
//! transcript itself — the user's words, the calls made, the files touched, the last errors —
//! and is what `context replay` uses when no provider is configured (and says so). The
//! scripted one writes the same content padded or cut to exactly the length the request asks
//! for, like a model that uses all the room it is given: `context replay --summaries scripted`,
//! so a replay's summaries cost what the peer policies' are priced at.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::compact::{Summarizer, SummaryError};
use super::reply::{MEMORIES_HEADING, STRETCHES_HEADING};
use super::transcript::transcript_piece;
use crate::conversation::Message;

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

/// The trailing sections of a reply to `request`: a line per marked stretch (its first user
/// words or call) — or per stretch an in-place instruction names (`- 12–40: from …`) — and no
/// memories.
fn trailing(request: &str) -> String {
    let transcript = request.split_once("<messages>\n").map(|(_, t)| t).unwrap_or("");
    let mut out = String::new();
    let mut line_for = |range: &str, gist: &str| {
        if out.is_empty() {
            out.push_str(&format!("\n\n{STRETCHES_HEADING}\n"));
        }
        out.push_str(&format!("- {range}: {gist}\n"));
    };
    let mut lines = transcript.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(range) = line.strip_prefix("=== stretch ").and_then(|r| r.strip_suffix(" ===")) else { continue };
        let gist = lines
            .by_ref()
            .take_while(|l| !l.starts_with("=== stretch "))
            .find(|l| !l.trim().is_empty() && !matches!(l.trim(), "USER:" | "ASSISTANT:"))
            .map(|l| crate::conversation::clip(l.trim(), 150))
            .unwrap_or_default();
        line_for(range, &gist);
    }
    for line in request.lines() {
        let named = line.strip_prefix("- ").and_then(|l| l.split_once(": from "));
        if let Some((range, opening)) = named.filter(|(r, _)| r.contains('–') && r.len() < 30) {
            line_for(range, &format!("worked on what began with {}", crate::conversation::clip(opening, 120)));
        }
    }
    if !transcript.is_empty() || request.contains(MEMORIES_HEADING) {
        out.push_str(&format!("\n{MEMORIES_HEADING}\n{{\"memories\": []}}\n"));
    }
    out
}

/// A conversation read in place, as the text the transcript summarisers read: the messages
/// inside `<messages>`, then the instruction.
fn in_place_request(messages: &[Arc<Message>], instruction: &str) -> String {
    let transcript: String = messages.iter().map(|m| transcript_piece(m)).collect::<Vec<_>>().join("\n");
    format!("<messages>\n{transcript}</messages>\n\n{instruction}")
}

/// Summarise `request` (the text the pipeline sends a summariser) in about `max_tokens`, with
/// the trailing sections the request asks for.
pub fn extract(request: &str, max_tokens: u32) -> String {
    let trailing = trailing(request);
    let body = extract_body(request, max_tokens);
    let max_chars = (max_tokens as usize) * 3;
    format!("{}{trailing}", crate::conversation::clip(&body, max_chars.saturating_sub(trailing.len()).max(200)))
}

fn extract_body(request: &str, max_tokens: u32) -> String {
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

    fn in_place(&self) -> bool {
        true
    }

    fn summarize_conversation<'a>(
        &'a self,
        messages: &'a [Arc<Message>],
        instruction: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move { Ok(extract(&in_place_request(messages, instruction), max_tokens)) })
    }
}

/// The length a summarisation request asks for ("at most about N tokens"), if it says one:
/// the last such phrase outside the `<messages>` it quotes.
pub fn requested_tokens(request: &str) -> Option<u32> {
    let instructions = match (request.find("<messages>"), request.rfind("</messages>")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &request[..a], &request[b..]),
        _ => request.to_string(),
    };
    let lower = instructions.to_ascii_lowercase();
    let at = lower.rfind("at most about ")? + "at most about ".len();
    let digits: String = lower[at..].chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
    digits.replace(',', "").parse().ok()
}

/// A summariser whose every reply is exactly as long as asked: the length the request states,
/// else `max_tokens`, counted at `chars_per_token` (the tokenizer the replay simulates). Its
/// content is the extractive summary, repeated or cut to that length.
pub struct ScriptedSummarizer {
    pub window: u64,
    pub chars_per_token: f64,
}

impl ScriptedSummarizer {
    pub fn reply(&self, user: &str, max_tokens: u32) -> String {
        let tokens = requested_tokens(user).unwrap_or(max_tokens).min(max_tokens);
        let chars = (tokens as f64 * self.chars_per_token) as usize;
        let trailing = trailing(user);
        let body_chars = chars.saturating_sub(trailing.len());
        let content = extract_body(user, tokens.max(1));
        let mut out = String::with_capacity(chars + content.len());
        while out.len() < body_chars {
            out.push_str(&content);
            out.push('\n');
        }
        out.truncate(crate::conversation::floor_char_boundary(&out, body_chars));
        out.push_str(&trailing);
        out
    }
}

impl ScriptedSummarizer {
    /// The reply to a conversation read in place (`messages`, then `instruction`): what
    /// [`Summarizer::summarize_conversation`] answers, for a server that answers as this
    /// summariser does (the mock's `--summarise`).
    pub fn reply_in_place(&self, messages: &[Arc<Message>], instruction: &str, max_tokens: u32) -> String {
        self.reply(&in_place_request(messages, instruction), max_tokens)
    }
}

impl Summarizer for ScriptedSummarizer {
    fn summarize<'a>(
        &'a self,
        _system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move { Ok(self.reply(user, max_tokens)) })
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn in_place(&self) -> bool {
        true
    }

    fn summarize_conversation<'a>(
        &'a self,
        messages: &'a [Arc<Message>],
        instruction: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move { Ok(self.reply_in_place(messages, instruction, max_tokens)) })
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

    #[test]
    fn the_scripted_summary_fills_the_length_asked_for() {
        let scripted = ScriptedSummarizer { window: 32_000, chars_per_token: 4.0 };
        let request =
            "Summarise the messages below. At most about 1,600 tokens.\n\n<messages>\nUSER:\nfix it\n</messages>";
        assert_eq!(requested_tokens(request), Some(1_600));
        let reply = scripted.reply(request, 2_400);
        assert_eq!(reply.len(), 6_400, "1,600 tokens of 4 characters");
        assert!(reply.starts_with("## Goal\n- fix it"));
        assert_eq!(scripted.reply("no length stated", 100).len(), 400, "else max_tokens");
    }
}
