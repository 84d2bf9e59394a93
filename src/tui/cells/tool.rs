//! A tool call: one compact line (status, tool, what it touched, outcome, duration), the line
//! saying what allowed or refused it (a rule, the user, the sandbox), the diff of an edit, and —
//! expanded — the output as the model saw it, cut to a screenful (the whole of it opens in a
//! scrollable view).

use std::time::Duration;

use ratatui::text::{Line, Span};

use crate::tui::diff::Diff;
use crate::tui::keys::{Action, GlobalAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, spans_width, truncate_spans, wrap_para, wrap_paras};

/// Output rows shown when a call is expanded.
const EXPANDED_OUTPUT_ROWS: usize = 40;
/// Diff rows shown under a finished edit before "… N more".
const COLLAPSED_DIFF_ROWS: usize = 12;
const EXPANDED_DIFF_ROWS: usize = 400;
/// Rows of an error shown without expanding: the reason matters.
const ERROR_ROWS: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    /// The model is still writing the call's arguments.
    Preparing,
    /// Waiting for the user's answer in the approval dialog.
    AwaitingApproval,
    Running,
    Done {
        is_error: bool,
        exit_code: Option<i32>,
        duration: Duration,
    },
    /// Refused by the mode, denied by the user, or its arguments did not parse.
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCell {
    pub call_id: String,
    pub tool: String,
    /// The path or command, as the tool summarises it.
    pub summary: String,
    pub status: ToolStatus,
    /// The start of the output, as much as the cell can ever show; set with `set_output`.
    pub output: String,
    /// Lines of the output beyond `output` (counted, not kept).
    pub hidden_lines: usize,
    pub diff: Option<String>,
    pub expanded: bool,
    /// What allowed or refused the call: `allowed by rule: …`, `approved by you for this
    /// session: …`, `stopped by the sandbox: …`. None where the mode's defaults let it through.
    pub approval: Option<String>,
}

/// Output kept per cell: more than an expanded cell shows, so long sessions do not hold every
/// result twice (the store has them whole).
const KEPT_OUTPUT_LINES: usize = 200;
const KEPT_OUTPUT_BYTES: usize = 32_000;

impl ToolCell {
    pub fn new(call_id: impl Into<String>, tool: impl Into<String>) -> ToolCell {
        ToolCell {
            call_id: call_id.into(),
            tool: tool.into(),
            summary: String::new(),
            status: ToolStatus::Preparing,
            output: String::new(),
            hidden_lines: 0,
            diff: None,
            expanded: false,
            approval: None,
        }
    }

    /// Keep the start of `text` for display and count the rest.
    pub fn set_output(&mut self, text: &str) {
        let mut kept = String::new();
        let mut lines = 0;
        let mut total = 0;
        for line in text.lines() {
            total += 1;
            if lines < KEPT_OUTPUT_LINES && kept.len() + line.len() < KEPT_OUTPUT_BYTES {
                kept.push_str(line);
                kept.push('\n');
                lines += 1;
            }
        }
        self.output = kept;
        self.hidden_lines = total - lines;
    }

    /// A best guess at the summary from raw arguments, until the tool's own arrives.
    pub fn summary_from_arguments(arguments: &str) -> String {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments) else {
            return String::new();
        };
        ["path", "command", "pattern", "query", "title"]
            .iter()
            .find_map(|k| map.get(*k).and_then(|v| v.as_str()))
            .map(|s| s.lines().next().unwrap_or("").to_string())
            .unwrap_or_default()
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.status, ToolStatus::Done { .. } | ToolStatus::NotRun)
    }

    fn header(&self, width: u16, theme: &Theme) -> Line<'static> {
        let (icon, icon_style, outcome) = match &self.status {
            ToolStatus::Preparing => ("◌", theme.tool_running, "preparing".to_string()),
            ToolStatus::AwaitingApproval => ("?", theme.tool_denied, "waiting for your approval".to_string()),
            ToolStatus::Running => ("◐", theme.tool_running, "running".to_string()),
            ToolStatus::Done { is_error, exit_code, duration } => {
                let mut parts = Vec::new();
                if let Some(code) = exit_code {
                    parts.push(format!("exit {code}"));
                } else if *is_error {
                    parts.push("failed".to_string());
                }
                parts.push(format_duration(*duration));
                if *is_error {
                    ("✗", theme.tool_error, parts.join(" · "))
                } else {
                    ("✓", theme.tool_ok, parts.join(" · "))
                }
            }
            ToolStatus::NotRun => ("⊘", theme.tool_denied, "not run".to_string()),
        };
        let head = vec![Span::styled(format!("{icon} "), icon_style), Span::styled(self.tool.clone(), theme.tool_name)];
        // How it ended (and a diff's counts) always shows: a long summary is what gets cut.
        let mut tail = Vec::new();
        if let Some(diff) = &self.diff {
            let d = Diff::parse(diff);
            tail.push(Span::styled(format!("  +{}", d.added), theme.tool_ok));
            tail.push(Span::styled(format!(" −{}", d.removed), theme.tool_error));
        }
        tail.push(Span::styled(format!("  {outcome}"), theme.dim));
        let room = (width as usize).saturating_sub(spans_width(&head) + spans_width(&tail));
        let mut spans = head;
        if !self.summary.is_empty() && room > 3 {
            spans.extend(truncate_spans(vec![Span::styled(format!("  {}", self.summary), theme.tool_summary)], room));
        }
        spans.extend(tail);
        Line::from(truncate_spans(spans, width as usize))
    }

    /// Whether rows show under the header (a diff, output): a blank row then separates the
    /// next call from them.
    pub fn shows_body(&self) -> bool {
        let failed = matches!(self.status, ToolStatus::Done { is_error: true, .. } | ToolStatus::NotRun);
        self.diff.is_some() || ((self.expanded || failed) && !self.output.trim().is_empty())
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = vec![self.header(width, theme)];
        if let Some(approval) = &self.approval {
            let spans = vec![Span::styled(format!("  ↳ {approval}"), theme.faint)];
            out.push(Line::from(truncate_spans(spans, width as usize)));
        }
        let gutter = || vec![Span::styled("  │ ", theme.faint)];
        let inner = width.saturating_sub(4).max(4);
        if let Some(diff) = &self.diff {
            let d = Diff::parse(diff);
            let rows = d.unified(theme, inner);
            let limit = if self.expanded { EXPANDED_DIFF_ROWS } else { COLLAPSED_DIFF_ROWS };
            let total = rows.len();
            for row in rows.into_iter().take(limit) {
                let mut spans = gutter();
                spans.extend(row.spans);
                out.push(Line::from(spans));
            }
            if total > limit {
                out.push(more_line(total - limit, self.expanded, theme));
            }
            return out;
        }
        let failed = matches!(self.status, ToolStatus::Done { is_error: true, .. } | ToolStatus::NotRun);
        let limit = if self.expanded {
            EXPANDED_OUTPUT_ROWS
        } else if failed {
            ERROR_ROWS
        } else {
            0
        };
        if limit == 0 || self.output.trim().is_empty() {
            return out;
        }
        let style = if failed && !self.expanded { theme.tool_error } else { theme.tool_output };
        // Output is wrapped as it came (logs, code); a call that never ran carries cairn's own
        // prose, which reads better wrapped at words.
        let prose = matches!(self.status, ToolStatus::NotRun);
        let mut rows = Vec::new();
        let source: Vec<&str> = self.output.trim_end().lines().collect();
        let mut complete = true;
        for line in &source {
            let para = Para {
                first: gutter(),
                rest: gutter(),
                spans: vec![Span::styled(line.replace('\t', "    "), style)],
                fill: None,
                hard: !prose,
            };
            wrap_para(&para, width as usize, &mut rows);
            if rows.len() > limit {
                complete = false;
                break;
            }
        }
        let total_rows = if complete { rows.len() } else { estimate_rows(&source, inner) } + self.hidden_lines;
        out.extend(rows.into_iter().take(limit));
        if total_rows > limit {
            out.push(more_line(total_rows - limit, self.expanded, theme));
        }
        out
    }
}

/// Rows the whole output would take (wrapped lines counted by width).
fn estimate_rows(lines: &[&str], width: u16) -> usize {
    lines.iter().map(|l| (crate::tui::wrap::width(l) / width.max(1) as usize) + 1).sum()
}

fn more_line(hidden: usize, expanded: bool, theme: &Theme) -> Line<'static> {
    let hint = if expanded {
        let whole = crate::tui::keys::hint(Action::Global(GlobalAction::ShowToolOutput));
        format!("  … {hidden} more rows · {whole} shows the whole output, scrollable")
    } else {
        let toggle = crate::tui::keys::hint(Action::Global(GlobalAction::ToggleToolOutput));
        format!("  … {hidden} more rows · {toggle} or click to expand")
    };
    wrap_paras(&[Para::plain(vec![Span::styled(hint, theme.faint)])], u16::MAX).remove(0)
}

/// `840ms`, `3.2s`, `2m05s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms / 1_000) % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
            .collect()
    }

    fn done(output: &str, is_error: bool) -> ToolCell {
        ToolCell {
            summary: "cargo test".into(),
            status: ToolStatus::Done {
                is_error,
                exit_code: Some(if is_error { 101 } else { 0 }),
                duration: Duration::from_millis(1234),
            },
            output: output.into(),
            ..ToolCell::new("c1", "bash")
        }
    }

    #[test]
    fn a_finished_call_is_one_line_until_expanded() {
        let theme = Theme::fallback(true);
        let mut cell = done("line 1\nline 2\n", false);
        assert_eq!(text(&cell.lines(60, &theme)), ["✓ bash  cargo test  exit 0 · 1.2s"]);
        cell.expanded = true;
        assert_eq!(text(&cell.lines(60, &theme)), ["✓ bash  cargo test  exit 0 · 1.2s", "  │ line 1", "  │ line 2"]);
    }

    #[test]
    fn failures_show_their_first_rows_and_count_the_rest() {
        let theme = Theme::fallback(true);
        let out: String = (1..=10).map(|i| format!("error {i}\n")).collect();
        let lines = text(&done(&out, true).lines(60, &theme));
        assert_eq!(lines[0], "✗ bash  cargo test  exit 101 · 1.2s");
        assert_eq!(&lines[1..4], ["  │ error 1", "  │ error 2", "  │ error 3"]);
        assert!(lines[4].contains("7 more rows"), "{lines:?}");
    }

    #[test]
    fn a_refusal_wraps_at_words_and_output_wraps_as_it_came() {
        let theme = Theme::fallback(true);
        let message = "There is no tool named `edit`. The available tools are: file_read, memory_save.";
        let refused = ToolCell {
            summary: "main.rs".into(),
            status: ToolStatus::NotRun,
            output: message.into(),
            ..ToolCell::new("c1", "edit")
        };
        let lines = text(&refused.lines(40, &theme));
        assert_eq!(lines[0], "⊘ edit  main.rs  not run");
        assert_eq!(
            &lines[1..],
            ["  │ There is no tool named `edit`. The", "  │ available tools are: file_read,", "  │ memory_save."]
        );
        let failed = done(message, true);
        let lines = text(&failed.lines(40, &theme));
        assert_eq!(lines[1], "  │ There is no tool named `edit`. The a", "{lines:?}");
    }

    #[test]
    fn edits_show_their_diff_and_counts() {
        let theme = Theme::fallback(true);
        let cell = ToolCell {
            summary: "a.txt".into(),
            diff: Some("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into()),
            ..done("", false)
        };
        let lines = text(&cell.lines(60, &theme));
        assert_eq!(lines[0], "✓ bash  a.txt  +1 −1  exit 0 · 1.2s");
        assert_eq!(&lines[2..], ["  │  1 - old", "  │  1 + new"]);
    }

    #[test]
    fn the_approval_line_says_what_decided_under_the_header() {
        let theme = Theme::fallback(true);
        let cell = ToolCell {
            approval: Some(
                "allowed by rule: allow bash(git log *) (project-local, .cairn/settings.local.toml:2)".into(),
            ),
            ..done("", false)
        };
        let lines = text(&cell.lines(120, &theme));
        assert_eq!(
            lines,
            [
                "✓ bash  cargo test  exit 0 · 1.2s",
                "  ↳ allowed by rule: allow bash(git log *) (project-local, .cairn/settings.local.toml:2)"
            ]
        );
        assert_eq!(text(&cell.lines(30, &theme))[1].chars().count(), 30, "cut to the width, never wrapped");
    }

    #[test]
    fn a_long_command_never_pushes_how_it_ended_off_the_line() {
        let theme = Theme::fallback(true);
        let command = format!("$ cargo build --release && {}", "./scripts/check-everything --verbose ".repeat(4));
        let cell = ToolCell { summary: command, ..done("boom", true) };
        for width in [60, 80, 120] {
            let header = text(&cell.lines(width, &theme)).remove(0);
            assert!(header.ends_with("exit 101 · 1.2s"), "{header}");
            assert!(header.contains("$ cargo build") && header.contains('…'), "{header}");
            assert!(header.chars().count() <= width as usize, "{header}");
        }
    }

    #[test]
    fn summaries_come_from_arguments_until_the_tool_gives_one() {
        assert_eq!(ToolCell::summary_from_arguments(r#"{"path":"src/a.rs","content":"x"}"#), "src/a.rs");
        assert_eq!(ToolCell::summary_from_arguments(r#"{"command":"ls\nrm"}"#), "ls");
        assert_eq!(ToolCell::summary_from_arguments("{\"path\": "), "");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(840)), "840ms");
        assert_eq!(format_duration(Duration::from_millis(3_240)), "3.2s");
        assert_eq!(format_duration(Duration::from_secs(125)), "2m05s");
    }
}
