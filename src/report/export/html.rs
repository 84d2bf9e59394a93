//! The transcript as one HTML page, the report's kind: styled inline, no script, nothing
//! fetched. Answers and thinking are Markdown rendered to HTML with any raw HTML in them shown
//! as text (a model's `<script>` is words on the page, never code); tool calls and thinking fold
//! in `<details>`; diffs are coloured line by line.

use std::fmt::Write;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{CallEntry, Entry, Transcript};
use crate::report::page::head_with;
use crate::report::svg::esc;

const STYLE: &str = r#"
main { max-width: 980px; }
.msg { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 8px 14px 10px; margin: 12px 0; }
.msg.user { background: #eef2ff; border-color: #c7d2fe; }
.msg.rewound { opacity: .55; }
.who { font-weight: 600; color: #374151; font-size: 13px; margin-bottom: 2px; }
.who time, .who .tag { font-weight: 400; color: #6b7280; margin-left: 8px; }
.prompt { white-space: pre-wrap; margin: 4px 0; }
.md p { margin: 6px 0; }
.md pre, pre.out, pre.args, pre.diff { background: #f9fafb; border: 1px solid #e5e7eb; border-radius: 4px; padding: 6px 8px; overflow-x: auto; }
.md code { background: #f3f4f6; border-radius: 3px; padding: 0 3px; font: 12.5px ui-monospace, monospace; }
.md pre code { background: none; padding: 0; }
details.call, details.thinking, details.attached { margin: 6px 0; padding: 4px 10px; }
details.thinking { background: #fafaf9; color: #44403c; font-style: italic; }
details.call.error summary .outcome { color: #b91c1c; }
summary code.tool { font-weight: 600; color: #1f2937; background: #e5e7eb; border-radius: 3px; padding: 0 4px; }
summary .target { font-family: ui-monospace, monospace; font-size: 12.5px; color: #111827; margin-left: 6px; overflow-wrap: anywhere; }
summary .outcome, summary .counts { color: #6b7280; font-size: 12px; margin-left: 8px; }
.counts .add { color: #15803d; } .counts .del { color: #b91c1c; }
.label { color: #6b7280; font-size: 12px; margin-top: 6px; }
pre.diff .add { color: #166534; background: #dcfce7; display: block; }
pre.diff .del { color: #991b1b; background: #fee2e2; display: block; }
pre.diff .hunk { color: #1d4ed8; display: block; }
pre.diff .file { color: #374151; font-weight: 600; display: block; }
.compaction { color: #6d28d9; border-left: 3px solid #a78bfa; padding: 2px 10px; margin: 12px 0; font-size: 13px; }
.img { color: #4b5563; font-size: 13px; }
"#;

/// Markdown to HTML, raw HTML shown as text, an image named rather than fetched, and a link
/// kept only to the web or mail (a `javascript:` link would be code after all).
fn markdown(text: &str) -> String {
    let parser =
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            Event::Start(Tag::Image { dest_url, .. }) => Event::Text(format!("[image {dest_url}: ").into()),
            Event::End(TagEnd::Image) => Event::Text("]".into()),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let safe = ["http://", "https://", "mailto:", "#"].iter().any(|p| dest_url.starts_with(p));
                let dest_url = if safe { dest_url } else { "".into() };
                Event::Start(Tag::Link { link_type, dest_url, title, id })
            }
            other => other,
        });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// A unified diff, each line in the class of what it is.
fn diff(text: &str) -> String {
    let mut out = String::from("<pre class=\"diff\">");
    for line in text.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            "file"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            ""
        };
        if class.is_empty() {
            let _ = writeln!(out, "{}", esc(line));
        } else {
            // Block spans carry their own line break.
            let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(line));
        }
    }
    out.push_str("</pre>");
    out
}

/// `+3 −1` of a diff, for the folded line.
fn counts(text: &str) -> String {
    let added = text.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
    let removed = text.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count();
    format!("<span class=\"counts\"><span class=\"add\">+{added}</span> <span class=\"del\">−{removed}</span></span>")
}

fn call(s: &mut String, c: &CallEntry) {
    let error = if c.is_error && !c.unanswered { " error" } else { "" };
    let _ = write!(
        s,
        "<details class=\"call{error}\"><summary><code class=\"tool\">{}</code><span class=\"target\">{}</span>",
        esc(&c.tool),
        esc(&crate::conversation::clip(&c.target, 160))
    );
    if let Some(d) = c.diff.as_deref().filter(|d| !d.trim().is_empty()) {
        s.push_str(&counts(d));
    }
    let _ = write!(s, "<span class=\"outcome\">{}</span></summary>", esc(&c.outcome()));
    if c.diff.as_deref().is_none_or(|d| d.trim().is_empty()) {
        let _ = write!(s, "<div class=\"label\">Arguments</div><pre class=\"args\">{}</pre>", esc(&c.arguments));
    }
    if let Some(why) = &c.decided_by {
        let _ = write!(s, "<div class=\"label\">Decided by: {}</div>", esc(why));
    }
    if let Some(d) = c.diff.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = write!(s, "<div class=\"label\">Change</div>{}", diff(d));
    }
    if !c.unanswered {
        let label = if c.is_error { "Result (error)" } else { "Result" };
        let output = if c.output.is_empty() { "(no output)" } else { c.output.as_str() };
        let _ = write!(s, "<div class=\"label\">{label}</div><pre class=\"out\">{}</pre>", esc(output));
    }
    for image in &c.images {
        let _ = write!(s, "<p class=\"img\">Image returned: {}</p>", esc(&image.label()));
    }
    s.push_str("</details>\n");
}

/// The whole page.
pub fn render_html(t: &Transcript) -> String {
    let title = if t.title.trim().is_empty() { "Untitled session" } else { t.title.trim() };
    let mut s = head_with(&format!("cairn session: {title}"), STYLE);
    let _ = writeln!(
        s,
        "<h1>{}</h1><p class=\"sub\">session {} · project {} · model {}<br>started {} · exported {} · secrets (keys, tokens, passwords) redacted</p>",
        esc(title),
        esc(&t.session_id),
        esc(&t.project_root),
        esc(&t.model),
        esc(&t.started),
        esc(&t.exported_at)
    );
    for entry in &t.entries {
        match entry {
            Entry::User { text, attachments, images, at, rewound } => {
                let (class, tag) = rewound_tag(*rewound);
                let _ = write!(
                    s,
                    "<section class=\"msg user{class}\"><div class=\"who\">You<time>{}</time>{tag}</div>",
                    esc(at)
                );
                match super::expanded_command(text) {
                    Some((command, sent)) => {
                        let _ = write!(
                            s,
                            "<div class=\"prompt\">{}</div><details class=\"attached\"><summary>What cairn sent the model for it</summary><pre class=\"out\">{}</pre></details>",
                            esc(command),
                            esc(sent)
                        );
                    }
                    None => {
                        let _ = write!(s, "<div class=\"prompt\">{}</div>", esc(text.trim_end()));
                    }
                }
                for image in images {
                    let _ = write!(s, "<p class=\"img\">Image attached: {}</p>", esc(&image.label()));
                }
                for a in attachments {
                    let _ = write!(
                        s,
                        "<details class=\"attached\"><summary>Attached: {}</summary><pre class=\"out\">{}</pre></details>",
                        esc(&a.path),
                        esc(&a.content)
                    );
                }
                s.push_str("</section>\n");
            }
            Entry::Assistant { thinking, text, calls, rewound } => {
                let (class, tag) = rewound_tag(*rewound);
                let _ = write!(s, "<section class=\"msg assistant{class}\"><div class=\"who\">cairn{tag}</div>");
                for thought in thinking {
                    let _ = write!(
                        s,
                        "<details class=\"thinking\"><summary>Thinking</summary><div class=\"md\">{}</div></details>",
                        markdown(thought)
                    );
                }
                if !text.trim().is_empty() {
                    let _ = write!(s, "<div class=\"md\">{}</div>", markdown(text));
                }
                for c in calls {
                    call(&mut s, c);
                }
                s.push_str("</section>\n");
            }
            Entry::Compaction { at, trigger, tokens_before, tokens_after } => {
                let _ = writeln!(
                    s,
                    "<p class=\"compaction\">Compaction ({}, {}): the older messages were summarised for the model, {} → {} tokens. They are all shown here.</p>",
                    esc(trigger),
                    esc(at),
                    tokens_before,
                    tokens_after
                );
            }
        }
    }
    s.push_str("<p class=\"sub\">Written by cairn export. No script, nothing fetched: this file is the whole conversation.</p></main></body></html>\n");
    s
}

fn rewound_tag(rewound: bool) -> (&'static str, &'static str) {
    if rewound { (" rewound", "<span class=\"tag\">taken back with /rewind</span>") } else { ("", "") }
}
