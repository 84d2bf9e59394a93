//! `/diff`: what the session (or a turn) changed, file by file — a header with the counts,
//! then each file's name and its rows, drawn like an edit's diff. Lines that are not a text
//! diff (a binary file, a mode change, a content not kept) are shown as they are.

use ratatui::text::{Line, Span};

use crate::tui::diff::Diff;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, wrap_paras};

/// One file's part of the diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilePart {
    Text {
        path: String,
        diff: Diff,
        created: bool,
        deleted: bool,
    },
    /// A change that is no text diff — a binary file, a mode, a symbolic link, a content not
    /// kept — in words.
    Other {
        path: String,
        what: String,
    },
    /// A line about the whole diff ("a code rewind has since taken back some of these").
    Note(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangesCell {
    /// What the diff covers: "this session", "turn 3 (“fix it”)".
    pub title: String,
    pub parts: Vec<FilePart>,
}

impl ChangesCell {
    /// The words a transcript search finds: the title, each file's name and its rows.
    pub fn search_text(&self) -> String {
        let mut text = self.title.clone();
        for part in &self.parts {
            text.push('\n');
            match part {
                FilePart::Text { path, diff, .. } => {
                    text.push_str(path);
                    for row in &diff.rows {
                        text.push('\n');
                        text.push_str(&row.text);
                    }
                }
                FilePart::Other { path, what } => text.push_str(&format!("{path} {what}")),
                FilePart::Note(note) => text.push_str(note),
            }
        }
        text
    }

    /// Split a multi-file diff (as `/diff` gets it: unified diffs, `Binary files … differ`,
    /// and cairn's `# path: what` lines) into files.
    pub fn new(title: impl Into<String>, text: &str) -> ChangesCell {
        let mut parts = Vec::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some(old) = line.strip_prefix("--- ")
                && let Some(new) = lines.peek().and_then(|l| l.strip_prefix("+++ "))
            {
                let (old, new) = (old.to_string(), new.to_string());
                let mut chunk = format!("{line}\n{}\n", lines.next().unwrap_or_default());
                while let Some(next) = lines.peek() {
                    if next.starts_with("--- ") || next.starts_with("# ") || next.starts_with("Binary files ") {
                        break;
                    }
                    chunk.push_str(next);
                    chunk.push('\n');
                    lines.next();
                }
                let created = old == "/dev/null";
                let deleted = new == "/dev/null";
                let path = if deleted { old.trim_start_matches("a/") } else { new.trim_start_matches("b/") };
                let mut diff = Diff::parse(&chunk);
                diff.path = path.to_string();
                parts.push(FilePart::Text { path: path.to_string(), diff, created, deleted });
            } else if let Some(part) = binary(line) {
                parts.push(part);
            } else if let Some((path, what)) = line.strip_prefix("# ").and_then(|l| l.split_once(": ")) {
                parts.push(FilePart::Other { path: path.to_string(), what: what.to_string() });
            } else if !line.trim().is_empty() {
                parts.push(FilePart::Note(line.trim_start_matches("# ").to_string()));
            }
        }
        ChangesCell { title: title.into(), parts }
    }

    fn files(&self) -> usize {
        self.parts.iter().filter(|p| matches!(p, FilePart::Text { .. } | FilePart::Other { .. })).count()
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (added, removed) = self.parts.iter().fold((0, 0), |(a, r), p| match p {
            FilePart::Text { diff, .. } => (a + diff.added, r + diff.removed),
            FilePart::Other { .. } | FilePart::Note(_) => (a, r),
        });
        let mut head =
            vec![Span::styled("± ", theme.accent), Span::styled(format!("Changes of {}", self.title), theme.title)];
        if self.parts.is_empty() {
            head.push(Span::styled("  no file changes", theme.dim));
            return vec![Line::from(truncate_spans(head, width as usize))];
        }
        let files = self.files();
        head.push(Span::styled(format!("  {files} file{}", if files == 1 { "" } else { "s" }), theme.dim));
        head.push(Span::styled(format!("  +{added}"), theme.tool_ok));
        head.push(Span::styled(format!(" −{removed}"), theme.tool_error));
        let mut out = vec![Line::from(truncate_spans(head, width as usize))];
        let inner = width.saturating_sub(4).max(4);
        for part in &self.parts {
            match part {
                FilePart::Text { path, diff, created, deleted } => {
                    let mut spans =
                        vec![Span::styled("  ", theme.faint), Span::styled(path.clone(), theme.diff_header)];
                    if *created {
                        spans.push(Span::styled("  (new)", theme.dim));
                    } else if *deleted {
                        spans.push(Span::styled("  (deleted)", theme.dim));
                    }
                    spans.push(Span::styled(format!("  +{}", diff.added), theme.tool_ok));
                    spans.push(Span::styled(format!(" −{}", diff.removed), theme.tool_error));
                    out.push(Line::from(truncate_spans(spans, width as usize)));
                    for row in diff.unified(theme, inner) {
                        let mut spans = vec![Span::styled("  │ ", theme.faint)];
                        spans.extend(row.spans);
                        out.push(Line::from(spans));
                    }
                }
                FilePart::Other { path, what } => {
                    let para = Para::prefixed(
                        vec![Span::styled("  ", theme.faint), Span::styled(format!("{path}  "), theme.diff_header)],
                        vec![Span::styled("    ", theme.faint)],
                        vec![Span::styled(what.clone(), theme.dim)],
                    );
                    out.extend(wrap_paras(&[para], width));
                }
                FilePart::Note(text) => {
                    let para = Para::prefixed(
                        vec![Span::styled("  ", theme.faint)],
                        vec![Span::styled("    ", theme.faint)],
                        vec![Span::styled(text.clone(), theme.dim)],
                    );
                    out.extend(wrap_paras(&[para], width));
                }
            }
        }
        out
    }
}

/// git's `Binary files a/x and b/x differ`, as a file's part.
fn binary(line: &str) -> Option<FilePart> {
    let (old, new) = line.strip_prefix("Binary files ")?.strip_suffix(" differ")?.split_once(" and ")?;
    let (path, what) = match (old, new) {
        ("/dev/null", new) => (new.trim_start_matches("b/"), "new binary file"),
        (old, "/dev/null") => (old.trim_start_matches("a/"), "binary file deleted"),
        (_, new) => (new.trim_start_matches("b/"), "binary file changed"),
    };
    Some(FilePart::Other { path: path.to_string(), what: what.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = "--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,3 +1,3 @@\n pub fn b() -> i32 {\n-    2\n+    20\n }\n\
--- /dev/null\n+++ b/src/gen/c.rs\n@@ -0,0 +1 @@\n+pub fn c() {}\n\
Binary files a/data/keep.bin and /dev/null differ\n\
# scripts/run.sh: mode 100755 → 100644\n\
# current: symbolic link to src/a.rs now points to src/b.rs\n\
--- a/made.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made\n\
# target/: changed inside an ignored folder (not checkpointed)\n";

    fn text(cell: &ChangesCell, width: u16) -> Vec<String> {
        cell.lines(width, &Theme::fallback(true))
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
            .collect()
    }

    #[test]
    fn a_session_diff_is_split_into_files_with_counts() {
        let cell = ChangesCell::new("this session", SESSION);
        let paths: Vec<String> = cell
            .parts
            .iter()
            .map(|p| match p {
                FilePart::Text { path, .. } => path.clone(),
                FilePart::Other { path, what } => format!("{path}: {what}"),
                FilePart::Note(n) => format!("note: {n}"),
            })
            .collect();
        assert_eq!(
            paths,
            [
                "src/b.rs",
                "src/gen/c.rs",
                "data/keep.bin: binary file deleted",
                "scripts/run.sh: mode 100755 → 100644",
                "current: symbolic link to src/a.rs now points to src/b.rs",
                "made.txt",
                "target/: changed inside an ignored folder (not checkpointed)",
            ]
        );
        let lines = text(&cell, 80);
        assert_eq!(lines[0], "± Changes of this session  7 files  +2 −2");
        assert_eq!(lines[1], "  src/b.rs  +1 −1");
        assert!(lines.iter().any(|l| l == "  src/gen/c.rs  (new)  +1 −0"), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "  made.txt  (deleted)  +0 −1"), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "  data/keep.bin  binary file deleted"), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "  scripts/run.sh  mode 100755 → 100644"), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("+     20")), "{lines:#?}");
        assert!(!lines.iter().any(|l| l.contains("Binary files") || l.contains("old mode")), "{lines:#?}");
    }

    #[test]
    fn nothing_changed_says_so() {
        assert_eq!(
            text(&ChangesCell::new("turn 2 (“look”)", ""), 80),
            ["± Changes of turn 2 (“look”)  no file changes"]
        );
    }
}
