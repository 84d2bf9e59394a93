//! What the pipeline needs to know about a tool call and its result, read once from the
//! recorded history (never from today's filesystem), so every decision is deterministic.

use std::hash::{Hash, Hasher};

use crate::conversation::{ToolCall, ToolResult};

/// The part of a file a read showed, in 1-based inclusive lines; `None` for an end means "to
/// the end of the file".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRange {
    pub first: u64,
    pub last: Option<u64>,
}

impl LineRange {
    pub const WHOLE: LineRange = LineRange { first: 1, last: None };

    /// Whether `self` shows every line `other` shows.
    pub fn covers(&self, other: &LineRange) -> bool {
        self.first <= other.first
            && match (self.last, other.last) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(a), Some(b)) => a >= b,
            }
    }

    pub fn is_whole(&self) -> bool {
        *self == LineRange::WHOLE
    }
}

/// What a call did, in the terms dedup and pruning reason about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A file read, of these lines.
    Read { path: String, range: LineRange },
    /// A search; `file` is set when it searched a single file.
    Search { pattern: String, scope: String },
    /// A listing by pattern.
    List { pattern: String },
    /// A file changed (only when the call succeeded: a failed write is not a write).
    Write { path: String },
    /// A command.
    Command { command: String },
    /// Anything else (foreign tools, failures).
    Other,
}

/// Facts about one answered tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFacts {
    pub call_id: String,
    pub tool: String,
    pub effect: Effect,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    /// Lines of the result as recorded.
    pub lines: usize,
    /// Identity of (tool, arguments) and of the result content, for exact-duplicate detection.
    pub args_key: u64,
    pub content_key: u64,
}

fn hash_of(parts: &[&str]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// Lexically normalised path: `./a/../b//c` → `b/c`. Only the recorded string is used.
pub fn normalise_path(raw: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let absolute = raw.starts_with('/');
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

fn str_arg<'a>(args: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(|v| v.as_str())
}

fn u64_arg(args: &serde_json::Value, key: &str) -> Option<u64> {
    args.get(key).and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok())))
}

/// `[showing lines A–B of N; …]`, the note file_read adds when it shows part of a file.
fn shown_range(content: &str) -> Option<LineRange> {
    let tail = &content[content.len().saturating_sub(200)..];
    let start = tail.rfind("[showing lines ")? + "[showing lines ".len();
    let rest = &tail[start..];
    let (a, rest) = rest.split_once('–').or_else(|| rest.split_once('-'))?;
    let (b, rest) = rest.split_once(" of ")?;
    let n: u64 = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    Some(LineRange { first: a, last: if b >= n { None } else { Some(b) } })
}

/// The marker output truncation puts where it cut.
const TRUNCATED: &str = "[truncated: ";

/// Lines shown before a truncation notice, when the output was truncated.
fn truncated_head_lines(content: &str) -> Option<u64> {
    let at = content.find(TRUNCATED)?;
    Some(content[..at].lines().count() as u64)
}

/// The content with the path of its saved full output taken out: two identical outputs
/// truncated in two calls differ only in that path, and must count as identical.
fn without_spill_path(content: &str) -> std::borrow::Cow<'_, str> {
    const SAVED: &str = "; full output saved to ";
    let Some(at) = content.find(TRUNCATED).and_then(|t| content[t..].find(SAVED).map(|s| t + s + SAVED.len())) else {
        return std::borrow::Cow::Borrowed(content);
    };
    let end = content[at..].find("; read it with").map(|e| at + e).unwrap_or(at);
    std::borrow::Cow::Owned(format!("{}{}", &content[..at], &content[end..]))
}

/// Facts of `call` answered by `result`.
pub fn facts_of(call: Option<&ToolCall>, result: &ToolResult) -> ToolFacts {
    let args = call.and_then(|c| c.parsed_arguments().ok()).unwrap_or(serde_json::Value::Null);
    let tool = result.name.as_str();
    let effect = if result.is_error {
        Effect::Other
    } else {
        match tool {
            "file_read" => match str_arg(&args, "path") {
                Some(path) => {
                    let requested = match (u64_arg(&args, "offset"), u64_arg(&args, "limit")) {
                        (None | Some(0) | Some(1), None) => LineRange::WHOLE,
                        (offset, limit) => {
                            let first = offset.unwrap_or(1).max(1);
                            LineRange { first, last: limit.map(|l| first + l.max(1) - 1) }
                        }
                    };
                    // What was actually shown wins over what was asked (a default read of a
                    // long file stops at the line limit; a truncated one showed only its head
                    // and tail, and is taken to cover its head).
                    let range = match truncated_head_lines(&result.content) {
                        Some(head) => {
                            LineRange { first: requested.first, last: Some(requested.first + head.max(1) - 1) }
                        }
                        None => shown_range(&result.content).unwrap_or(requested),
                    };
                    Effect::Read { path: normalise_path(path), range }
                }
                None => Effect::Other,
            },
            "grep" => Effect::Search {
                pattern: str_arg(&args, "pattern").unwrap_or_default().to_string(),
                scope: normalise_path(str_arg(&args, "path").unwrap_or(".")),
            },
            "glob" => Effect::List { pattern: str_arg(&args, "pattern").unwrap_or_default().to_string() },
            "file_write" | "file_edit" => match str_arg(&args, "path") {
                Some(path) => Effect::Write { path: normalise_path(path) },
                None => Effect::Other,
            },
            "bash" => Effect::Command { command: str_arg(&args, "command").unwrap_or_default().to_string() },
            _ => Effect::Other,
        }
    };
    let raw_args = call.map(|c| c.arguments.as_str()).unwrap_or("");
    let canonical_args = if args.is_null() { raw_args.to_string() } else { args.to_string() };
    ToolFacts {
        call_id: result.call_id.clone(),
        tool: tool.to_string(),
        effect,
        is_error: result.is_error,
        exit_code: result.exit_code.or_else(|| exit_code_in(&result.content)),
        lines: result.content.lines().count(),
        args_key: hash_of(&[tool, &canonical_args]),
        content_key: hash_of(&[&without_spill_path(&result.content)]),
    }
}

/// The exit code a command's output states, for histories recorded without the field: cairn's
/// `[exit code N]`, `[Command finished with exit code N]`, `Exit code: N`, and
/// `<returncode>N</returncode>` at the start.
pub fn exit_code_in(content: &str) -> Option<i32> {
    let number = |s: &str| -> Option<i32> {
        let s = s.trim_start();
        let end = s.char_indices().find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-'))).map(|(i, _)| i);
        s[..end.unwrap_or(s.len())].parse().ok()
    };
    let head = &content[..crate::conversation::floor_char_boundary(content, 200)];
    if let Some(at) = head.find("<returncode>") {
        return number(&head[at + "<returncode>".len()..]);
    }
    let tail = &content[crate::conversation::floor_char_boundary(content, content.len().saturating_sub(300))..];
    let lower = tail.to_ascii_lowercase();
    for marker in ["exit code:", "exit code"] {
        if let Some(at) = lower.rfind(marker) {
            return number(&tail[at + marker.len()..]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(args: &str, content: &str) -> ToolFacts {
        facts_of(Some(&ToolCall::new("c", "file_read", args)), &ToolResult::ok("c", "file_read", content))
    }

    #[test]
    fn paths_normalise_lexically() {
        assert_eq!(normalise_path("./src/../src//lib.rs"), "src/lib.rs");
        assert_eq!(normalise_path("/a/b/../c"), "/a/c");
        assert_eq!(normalise_path("../x"), "../x");
    }

    #[test]
    fn read_ranges_come_from_arguments_and_the_shown_note() {
        assert_eq!(
            read(r#"{"path":"a"}"#, "     1\tx").effect,
            Effect::Read { path: "a".into(), range: LineRange::WHOLE }
        );
        let partial = read(
            r#"{"path":"a","offset":900,"limit":51}"#,
            "   900\tx\n[showing lines 900–950 of 2000; continue with offset=951]",
        );
        assert_eq!(partial.effect, Effect::Read { path: "a".into(), range: LineRange { first: 900, last: Some(950) } });
        let default_long = read(r#"{"path":"a"}"#, "…\n[showing lines 1–2000 of 5000; continue with offset=2001]");
        assert_eq!(
            default_long.effect,
            Effect::Read { path: "a".into(), range: LineRange { first: 1, last: Some(2000) } }
        );
        let to_end = read(r#"{"path":"a","offset":10}"#, "…\n[showing lines 10–20 of 20; end of file]");
        assert_eq!(to_end.effect, Effect::Read { path: "a".into(), range: LineRange { first: 10, last: None } });
    }

    #[test]
    fn ranges_cover_only_what_they_show() {
        let first_50 = LineRange { first: 1, last: Some(50) };
        let late = LineRange { first: 900, last: Some(950) };
        assert!(!late.covers(&first_50) && !first_50.covers(&late));
        assert!(LineRange::WHOLE.covers(&late));
        assert!(!late.covers(&LineRange::WHOLE));
    }

    #[test]
    fn truncated_copies_of_one_output_are_identical_and_cover_only_their_head() {
        let notice = |path: &str| {
            format!(
                "     1\ta\n     2\tb\n[truncated: 10 of 12 lines (1 KB) omitted; full output saved to {path}; read it with file_read offset/limit or grep rather than printing it again]\n    12\tz"
            )
        };
        let a = read(r#"{"path":"big.rs"}"#, &notice("/t/s-c1.txt"));
        let b = read(r#"{"path":"big.rs"}"#, &notice("/t/s-c2.txt"));
        assert_eq!(a.content_key, b.content_key, "the spill path is not part of the identity");
        assert_ne!(a.content_key, read(r#"{"path":"big.rs"}"#, "     1\ta").content_key);
        assert_eq!(a.effect, Effect::Read { path: "big.rs".into(), range: LineRange { first: 1, last: Some(2) } });
        assert!(!LineRange { first: 1, last: Some(2) }.covers(&LineRange { first: 5, last: Some(6) }));
    }

    #[test]
    fn a_failed_write_is_not_a_write() {
        let call = ToolCall::new("c", "file_edit", r#"{"path":"a.rs","old_string":"x","new_string":"y"}"#);
        let failed = facts_of(Some(&call), &ToolResult::error("c", "file_edit", "old_string not found"));
        assert_eq!(failed.effect, Effect::Other);
        let ok = facts_of(Some(&call), &ToolResult::ok("c", "file_edit", "Edited a.rs"));
        assert_eq!(ok.effect, Effect::Write { path: "a.rs".into() });
    }

    #[test]
    fn exit_codes_are_read_from_old_results() {
        let f = facts_of(
            Some(&ToolCall::new("c", "bash", r#"{"command":"cargo test"}"#)),
            &ToolResult::ok("c", "bash", "boom\n[exit code 101]"),
        );
        assert_eq!(f.exit_code, Some(101));
        assert_eq!(exit_code_in("<returncode>2</returncode>\n<output>\nboom</output>"), Some(2));
        assert_eq!(exit_code_in("x\n[Command finished with exit code 127]"), Some(127));
        assert_eq!(exit_code_in("x\nExit code: 1"), Some(1));
        assert_eq!(exit_code_in("nothing here"), None);
    }
}
