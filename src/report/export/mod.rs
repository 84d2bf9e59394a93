//! A stored session as a readable file (`cairn export ID --format md|html`, `/export`): the
//! conversation in order — prompts, answers, thinking and tool calls folded, diffs, images by
//! reference — with every text passed through the secrets' redaction, as the report's are.
//!
//! `gather` reads the store into a [`Transcript`]; `markdown` and `html` write it. The HTML is
//! the report's kind of page (`page`'s head and style, no script, nothing fetched).

mod html;
mod markdown;

pub use html::render_html;
pub use markdown::render_markdown;

use std::collections::HashMap;

use super::gather::{clean, target_of};
use crate::config::Redactor;
use crate::conversation::{Block, Image, Role};
use crate::store::{SessionInfo, Store, StoreError};

/// The formats `cairn export` writes; JSONL stays its default and is written elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Html,
}

impl ExportFormat {
    /// The file name's extension.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Html => "html",
        }
    }

    pub fn render(self, transcript: &Transcript) -> String {
        match self {
            ExportFormat::Markdown => render_markdown(transcript),
            ExportFormat::Html => render_html(transcript),
        }
    }
}

/// A session told for people.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub title: String,
    pub session_id: String,
    pub project_root: String,
    pub model: String,
    pub started: String,
    pub exported_at: String,
    pub entries: Vec<Entry>,
}

/// One step of the conversation.
#[derive(Clone, Debug)]
pub enum Entry {
    /// What the user sent: the prompt, files attached to it, images by reference.
    User { text: String, attachments: Vec<Attached>, images: Vec<ImageRef>, at: String, rewound: bool },
    /// One reply of the model: its thinking, its text, and its calls with their results.
    Assistant { thinking: Vec<String>, text: String, calls: Vec<CallEntry>, rewound: bool },
    /// A compaction: older messages were summarised from here on.
    Compaction { at: String, trigger: String, tokens_before: u64, tokens_after: u64 },
}

/// A file or folder a prompt attached (`@path`), with what was sent of it.
#[derive(Clone, Debug)]
pub struct Attached {
    pub path: String,
    pub content: String,
}

/// An image, named and sized, never embedded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    pub source: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
}

impl ImageRef {
    fn of(image: &Image, redactor: &Redactor) -> ImageRef {
        ImageRef {
            source: clean(redactor, &image.source),
            media_type: image.media_type.clone(),
            width: image.width,
            height: image.height,
        }
    }

    /// `shot.png (PNG, 800×600)`.
    pub fn label(&self) -> String {
        let kind = self.media_type.strip_prefix("image/").unwrap_or(&self.media_type).to_ascii_uppercase();
        let name = if self.source.is_empty() { "an image" } else { self.source.as_str() };
        format!("{name} ({kind}, {}×{})", self.width, self.height)
    }
}

/// A tool call and what came of it.
#[derive(Clone, Debug, Default)]
pub struct CallEntry {
    pub tool: String,
    /// The command, path or pattern it was about.
    pub target: String,
    /// The arguments, pretty-printed (not shown beside a diff, which says the same better).
    pub arguments: String,
    /// The whole output as stored (not as cut for the model).
    pub output: String,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    pub diff: Option<String>,
    /// What allowed or refused it.
    pub decided_by: Option<String>,
    pub not_run: bool,
    pub duration_ms: u64,
    pub images: Vec<ImageRef>,
    /// No result was stored for it (the session ended mid-call).
    pub unanswered: bool,
}

impl CallEntry {
    /// `exit 0 · 1.2 s`, `error`, `not run`: the call's outcome in a few words.
    pub fn outcome(&self) -> String {
        let mut parts = Vec::new();
        if self.unanswered {
            parts.push("no result".to_string());
        } else if self.not_run {
            parts.push("not run".to_string());
        } else if let Some(code) = self.exit_code {
            parts.push(format!("exit {code}"));
        } else if self.is_error {
            parts.push("error".to_string());
        }
        match self.duration_ms {
            0 => {}
            ms @ 1..1000 => parts.push(format!("{ms} ms")),
            ms => parts.push(format!("{:.1} s", ms as f64 / 1000.0)),
        }
        parts.join(" · ")
    }
}

/// How an attached file starts in a stored user message (as `agent` writes it).
const ATTACHMENT_OPEN: &str = "<attachment path=\"";

/// Read session `info` from `store` into a transcript, every text redacted.
pub fn gather_transcript(
    store: &Store,
    info: &SessionInfo,
    project_root: &str,
    redactor: &Redactor,
) -> Result<Transcript, StoreError> {
    let messages = store.messages(&info.id)?;
    let display = store.tool_display(&info.id)?;
    let rewound = store.rewound_ranges(&info.id)?;
    let compactions = store.compaction_log(&info.id)?;
    let text = |t: &str| clean(redactor, t);
    let mut entries: Vec<(String, Entry)> = Vec::new();
    // Where each call's entry is, so its result lands beside it.
    let mut calls_at: HashMap<String, (usize, usize)> = HashMap::new();
    for stored in &messages {
        let m = &stored.message;
        let was_rewound = crate::store::is_rewound(&rewound, stored.seq);
        match m.role {
            Role::User => {
                let mut prompt = Vec::new();
                let mut attachments = Vec::new();
                let mut images = Vec::new();
                for block in &m.content {
                    match block {
                        Block::Text { text: t } => match attached(t) {
                            Some(path) => attachments.push(Attached { path: text(&path), content: text(t) }),
                            None => prompt.push(text(t)),
                        },
                        Block::Image(image) => images.push(ImageRef::of(image, redactor)),
                        Block::ToolCall(_) | Block::ToolResult(_) | Block::Thinking(_) => {}
                    }
                }
                let entry = Entry::User {
                    text: prompt.join("\n\n"),
                    attachments,
                    images,
                    at: stored.created_at.clone(),
                    rewound: was_rewound,
                };
                entries.push((stored.created_at.clone(), entry));
            }
            Role::Assistant => {
                let thinking: Vec<String> =
                    m.thinking().filter(|t| !t.text.trim().is_empty()).map(|t| text(&t.text)).collect();
                let index = entries.len();
                let calls: Vec<CallEntry> = m
                    .tool_calls()
                    .enumerate()
                    .map(|(k, call)| {
                        calls_at.insert(call.id.clone(), (index, k));
                        let d = display.get(&call.id);
                        CallEntry {
                            tool: call.name.clone(),
                            target: text(&target_of(&call.arguments)),
                            arguments: text(&pretty(&call.arguments)),
                            diff: d.and_then(|d| d.diff.as_deref()).map(text),
                            decided_by: d.and_then(|d| d.decided_by.as_deref()).map(text),
                            not_run: d.is_some_and(|d| d.not_run),
                            duration_ms: d.map(|d| d.duration_ms).unwrap_or(0),
                            unanswered: true,
                            ..CallEntry::default()
                        }
                    })
                    .collect();
                let entry = Entry::Assistant { thinking, text: text(&m.text()), calls, rewound: was_rewound };
                entries.push((stored.created_at.clone(), entry));
            }
            Role::Tool => {
                let Some(result) = m.tool_result() else { continue };
                let Some(&(index, k)) = calls_at.get(&result.call_id) else { continue };
                let full = store.tool_output(&info.id, &result.call_id)?;
                if let Some((_, Entry::Assistant { calls, .. })) = entries.get_mut(index)
                    && let Some(call) = calls.get_mut(k)
                {
                    call.output = shown(&text(full.as_deref().unwrap_or(&result.content)), &info.id);
                    call.is_error = result.is_error;
                    call.exit_code = result.exit_code;
                    call.unanswered = false;
                    call.images = m.images().map(|i| ImageRef::of(i, redactor)).collect();
                }
            }
        }
    }
    for c in compactions {
        // After the last message stored before it.
        let at = entries.iter().rposition(|(t, _)| *t <= c.created_at).map_or(0, |i| i + 1);
        let entry = Entry::Compaction {
            at: c.created_at.clone(),
            trigger: c.trigger.clone(),
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
        };
        entries.insert(at, (c.created_at, entry));
    }
    Ok(Transcript {
        title: text(&info.title),
        session_id: info.id.clone(),
        project_root: text(project_root),
        model: info.model.clone(),
        started: info.created_at.clone(),
        exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        entries: entries.into_iter().map(|(_, e)| e).collect(),
    })
}

/// Most characters of one output a readable file shows; the JSONL export keeps it whole.
const OUTPUT_SHOWN_CHARS: usize = 100_000;

/// `output`, or its start and a line saying where the rest is.
fn shown(output: &str, session: &str) -> String {
    let Some((cut, _)) = output.char_indices().nth(OUTPUT_SHOWN_CHARS) else { return output.to_string() };
    let more = output[cut..].chars().count();
    format!("{}\n[… {more} more characters: `cairn export {session}` (JSONL) has the whole output]", &output[..cut])
}

/// The path of an attachment block (`<attachment path="src/lib.rs" …>`).
fn attached(text: &str) -> Option<String> {
    let rest = text.strip_prefix(ATTACHMENT_OPEN)?;
    rest.split_once('"').map(|(path, _)| path.to_string())
}

/// Arguments as indented JSON; as they came when they are not JSON.
fn pretty(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_string())
}

/// A prompt cairn wrote for a command the user typed (`/init`): the command, and what was sent
/// for it, to show folded.
pub(super) fn expanded_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(crate::prompt::INIT_LINE)?.strip_prefix("\n\n")?;
    Some((crate::prompt::INIT_LINE, rest))
}

/// A fence for `text` in Markdown: longer than any run of backticks in it.
pub(super) fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
