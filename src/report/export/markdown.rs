//! The transcript as Markdown: prompts and answers as they were written, thinking and tool
//! calls folded in `<details>` (GitHub, GitLab and most previews fold them; elsewhere they read
//! as plain text), outputs and diffs in fences no text of theirs can close.

use std::fmt::Write;

use super::{CallEntry, Entry, Transcript, fence_for};

/// Text bound for a `<summary>` line: no markup of its own, on one line.
fn inline(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn fenced(out: &mut String, lang: &str, text: &str) {
    let fence = fence_for(text);
    let _ = writeln!(out, "{fence}{lang}\n{}\n{fence}\n", text.trim_end_matches('\n'));
}

fn call(out: &mut String, c: &CallEntry) {
    let outcome = c.outcome();
    let target = if c.target.is_empty() { String::new() } else { format!(" — {}", inline(&c.target)) };
    let outcome = if outcome.is_empty() { String::new() } else { format!(" ({outcome})") };
    let _ = writeln!(out, "<details><summary>{}{target}{outcome}</summary>\n", inline(&c.tool));
    if c.diff.as_deref().is_none_or(|d| d.trim().is_empty()) {
        out.push_str("Arguments:\n\n");
        fenced(out, "json", &c.arguments);
    }
    if let Some(why) = &c.decided_by {
        let _ = writeln!(out, "Decided by: {}\n", inline(why));
    }
    if let Some(diff) = c.diff.as_deref().filter(|d| !d.trim().is_empty()) {
        out.push_str("Change:\n\n");
        fenced(out, "diff", diff);
    }
    if !c.unanswered {
        out.push_str(if c.is_error { "Result (error):\n\n" } else { "Result:\n\n" });
        fenced(out, "", if c.output.is_empty() { "(no output)" } else { &c.output });
    }
    for image in &c.images {
        let _ = writeln!(out, "Image returned: {}\n", inline(&image.label()));
    }
    out.push_str("</details>\n\n");
}

/// The whole file.
pub fn render_markdown(t: &Transcript) -> String {
    let mut out = String::new();
    let title = if t.title.trim().is_empty() { "Untitled session" } else { t.title.trim() };
    let _ = writeln!(out, "# {}\n", title.replace('\n', " "));
    let _ = writeln!(
        out,
        "Session `{}` · project `{}` · model `{}` · started {} · exported {}\n",
        t.session_id, t.project_root, t.model, t.started, t.exported_at
    );
    out.push_str("_Written by `cairn export`. Secrets (keys, tokens, passwords) are redacted._\n\n");
    let mut rewound_note = false;
    for entry in &t.entries {
        match entry {
            Entry::User { text, attachments, images, at, rewound } => {
                if *rewound && !rewound_note {
                    out.push_str("> The messages marked *(rewound)* were taken back with `/rewind`: the model no longer sees them.\n\n");
                    rewound_note = true;
                }
                let mark = if *rewound { " *(rewound)*" } else { "" };
                let _ = writeln!(out, "---\n\n## You{mark}\n\n<sub>{at}</sub>\n");
                match super::expanded_command(text) {
                    Some((command, sent)) => {
                        let _ = writeln!(out, "{command}\n");
                        out.push_str("<details><summary>What cairn sent the model for it</summary>\n\n");
                        fenced(&mut out, "", sent);
                        out.push_str("</details>\n\n");
                    }
                    None => {
                        let _ = writeln!(out, "{}\n", text.trim_end());
                    }
                }
                for image in images {
                    let _ = writeln!(out, "Image attached: {}\n", inline(&image.label()));
                }
                for a in attachments {
                    let _ = writeln!(out, "<details><summary>Attached: {}</summary>\n", inline(&a.path));
                    fenced(&mut out, "", &a.content);
                    out.push_str("</details>\n\n");
                }
            }
            Entry::Assistant { thinking, text, calls, rewound } => {
                let mark = if *rewound { " *(rewound)*" } else { "" };
                let _ = writeln!(out, "## cairn{mark}\n");
                for thought in thinking {
                    out.push_str("<details><summary>Thinking</summary>\n\n");
                    let _ = writeln!(out, "{}\n", thought.trim_end());
                    out.push_str("</details>\n\n");
                }
                if !text.trim().is_empty() {
                    let _ = writeln!(out, "{}\n", text.trim_end());
                }
                for c in calls {
                    call(&mut out, c);
                }
            }
            Entry::Compaction { at, trigger, tokens_before, tokens_after } => {
                let _ = writeln!(
                    out,
                    "> **Compaction** ({trigger}, {at}): the older messages were summarised for the model, {tokens_before} → {tokens_after} tokens. They are all shown here.\n"
                );
            }
        }
    }
    out
}
