//! `@path` in a prompt attaches what it names: a file as the model would read it with
//! `file_read` (numbered lines, cut to the same caps, the read recorded so an edit may follow
//! at once), a folder (`@dir/`) as `glob` would list it. Attachments travel as extra text
//! blocks of the user's message: every provider accepts them, they sit after the cached
//! prefix, and the stored message keeps them for a resume.

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::saved_outputs;
use crate::agent::calls::CutLimits;
use crate::agent::events::Attachment;
use crate::agent::recap::ATTACHMENT_OPEN as OPEN;
use crate::conversation::tool_names::{FILE_READ, GLOB};
use crate::conversation::{Block, ToolCall};
use crate::tools::{ToolContext, resolve_path};

/// Mentions attached from one prompt at most: a prompt naming more is better served by a glob.
const MAX_ATTACHMENTS: usize = 10;

/// The `@path` tokens of `prompt`: an `@` at the start or after whitespace, up to the next
/// whitespace.
fn mentions(prompt: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut previous = ' ';
    for (i, c) in prompt.char_indices() {
        if c == '@' && previous.is_whitespace() {
            let rest = &prompt[i + 1..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if end > 0 && !out.contains(&&rest[..end]) {
                out.push(&rest[..end]);
            }
        }
        previous = c;
    }
    out
}

impl Worker {
    /// What the prompt's mentions attach: the blocks to send after the prompt, and what to tell
    /// the user (including mentions that could not be attached, and why).
    pub(super) async fn attach_mentions(
        &mut self,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> (Vec<Block>, Vec<Attachment>) {
        let found = mentions(prompt);
        if found.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let root = self.place.root().to_path_buf();
        let mut blocks = Vec::new();
        let mut shown = Vec::new();
        let registry = self.tools.registry().clone();
        let ctx = ToolContext {
            root: root.clone(),
            config: self.place.config().tools.clone(),
            files: self.tools.files().clone(),
            cancel: cancel.clone(),
            memory: None,
            subagents: None,
            task_list: None,
            editor: self.tools.editor(),
            denied: Default::default(),
            background: None,
        };
        // All attachments of a prompt together stay within what one reply's results may take.
        let CutLimits { each: limits, reply: cap } = self.cut_limits();
        let saved = saved_outputs(&self.place, &self.session);
        let mut sent_total = 0usize;
        for raw in found {
            // "@src/main.rs," ends a sentence: the mark is not part of the path.
            let Some(path) = [raw, raw.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\''])]
                .into_iter()
                .map(|p| resolve_path(&root, p))
                .find(|p| p.absolute.exists())
            else {
                continue;
            };
            // An image is attached as itself, beside the prompt (`agent::attachments`).
            if crate::tools::image::is_image_path(&path.absolute) {
                continue;
            }
            if shown.len() >= MAX_ATTACHMENTS {
                shown.push(not_attached(&path.display, "more than 10 mentions; ask the model to read it"));
                continue;
            }
            if !path.inside_project {
                shown.push(not_attached(&path.display, "outside the project; ask the model to read it"));
                continue;
            }
            let folder = path.absolute.is_dir();
            let (tool, args) = if folder {
                (GLOB, serde_json::json!({"pattern": "*", "path": path.display}))
            } else {
                (FILE_READ, serde_json::json!({"path": path.display}))
            };
            let shown_path = path.display.replace('"', "'");
            let label = if folder { format!("{}/", shown_path.trim_end_matches('/')) } else { shown_path };
            let Some(tool_impl) = registry.get(tool) else { continue };
            let output = match tool_impl.prepare(&args, &ctx) {
                Ok(prepared) => tool_impl.execute(&args, prepared, &ctx).await.map_err(|e| e.0),
                Err(e) => Err(e.0),
            };
            let content = match output {
                Ok(out) if !out.is_error => out.content,
                Ok(out) => {
                    shown.push(not_attached(&label, &out.content));
                    continue;
                }
                Err(why) => {
                    shown.push(not_attached(&label, &why));
                    continue;
                }
            };
            let call = ToolCall::new(format!("attach-{}", blocks.len() + 1), tool, args.to_string());
            let (sent, cut) = saved.cut(&call.id, &call.name, &call.arguments, &content, &limits);
            if sent_total + sent.len() > cap {
                shown.push(not_attached(
                    &label,
                    "the prompt's attachments reached their size limit; ask the model to read it",
                ));
                continue;
            }
            sent_total += sent.len();
            let count = content.lines().count();
            let detail = match (folder, cut) {
                (true, _) => format!("{count} file{}", if count == 1 { "" } else { "s" }),
                (false, false) => format!("{count} lines"),
                (false, true) => format!("{count} lines, cut to the reading limits"),
            };
            blocks.push(Block::Text {
                text: format!("{OPEN}{label}\" detail=\"{detail}\" how=\"as {tool} shows it\">\n{sent}\n</attachment>"),
            });
            shown.push(Attachment { path: label, detail, attached: true });
        }
        (blocks, shown)
    }
}

fn not_attached(path: &str, why: &str) -> Attachment {
    Attachment {
        path: path.to_string(),
        detail: crate::conversation::clip(why.lines().next().unwrap_or(why), 100),
        attached: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_start_at_an_at_sign_after_whitespace() {
        assert_eq!(mentions("look at @src/main.rs, and @docs/ please"), ["src/main.rs,", "docs/"]);
        assert_eq!(mentions("@a.txt mail me at me@example.com or @ alone"), ["a.txt"]);
        assert_eq!(mentions("@a @a"), ["a"]);
    }
}
