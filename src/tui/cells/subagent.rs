//! A subagent started by a `task` call: one cell with its type and job, live progress while it
//! runs (the tool it is on, its calls and tokens so far), and its report when it is done.
//! Expanded, it shows its transcript — each call it made and what it wrote — then the brief
//! it was given and the whole report.

use std::time::Duration;

use ratatui::text::{Line, Span};

use crate::conversation::format_tokens;
use crate::tui::cells::format_duration;
use crate::tui::keys::{Action, GlobalAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, wrap_para};

/// Report rows shown while collapsed.
const COLLAPSED_REPORT_ROWS: usize = 4;
/// Rows of the transcript and the report shown expanded, each.
const EXPANDED_ROWS: usize = 60;
/// Transcript entries kept per cell: the store has them all.
const KEPT_ENTRIES: usize = 200;
/// Characters kept of the brief, of a text and of the report.
const KEPT_TEXT_CHARS: usize = 16_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubagentStatus {
    /// The parent is still writing the call.
    Preparing,
    Running,
    /// One of its calls waits in the approval dialog.
    AwaitingApproval,
    Done {
        is_error: bool,
        duration: Duration,
    },
    /// Refused, or the turn ended before it could run.
    NotRun,
}

/// One line of a subagent's transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubagentEntry {
    Tool { call_id: String, tool: String, summary: String, state: EntryState },
    Text(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryState {
    Running,
    Ok,
    Failed,
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubagentCell {
    pub call_id: String,
    pub agent_type: String,
    pub description: String,
    /// The job as the parent wrote it.
    pub brief: String,
    pub status: SubagentStatus,
    pub model: Option<String>,
    pub session_id: Option<String>,
    pub entries: Vec<SubagentEntry>,
    /// Tokens processed so far: every request's prompt and output.
    pub tokens: u64,
    pub requests: u32,
    /// What the parent got back: the report, or why there is none.
    pub report: String,
    pub expanded: bool,
    /// When it started here, for its duration once it reports (the `task` call's own result
    /// comes when every call of the message is done).
    pub started: Option<std::time::Instant>,
}

impl SubagentCell {
    pub fn new(call_id: impl Into<String>) -> SubagentCell {
        SubagentCell {
            call_id: call_id.into(),
            agent_type: String::new(),
            description: String::new(),
            brief: String::new(),
            status: SubagentStatus::Preparing,
            model: None,
            session_id: None,
            entries: Vec::new(),
            tokens: 0,
            requests: 0,
            report: String::new(),
            expanded: false,
            started: None,
        }
    }

    /// Type, job and brief from the call's arguments, as far as they parse.
    pub fn take_arguments(&mut self, arguments: &str) {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments) else { return };
        let get = |k: &str| map.get(k).and_then(|v| v.as_str()).map(str::to_string);
        if let Some(d) = get("description") {
            self.description = d;
        }
        if let Some(p) = get("prompt") {
            self.brief = crate::conversation::clip(&p, KEPT_TEXT_CHARS);
        }
        if self.agent_type.is_empty() {
            self.agent_type = get("agent_type").unwrap_or_else(|| crate::prompt::DEFAULT_TYPE.to_string());
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.status, SubagentStatus::Done { .. } | SubagentStatus::NotRun)
    }

    pub fn push(&mut self, entry: SubagentEntry) {
        if self.entries.len() < KEPT_ENTRIES {
            let entry = match entry {
                SubagentEntry::Text(t) => SubagentEntry::Text(crate::conversation::clip(&t, KEPT_TEXT_CHARS)),
                tool @ SubagentEntry::Tool { .. } => tool,
            };
            self.entries.push(entry);
        }
    }

    /// A call of the subagent finished.
    pub fn finish_call(&mut self, call_id: &str, state: EntryState) {
        for entry in self.entries.iter_mut().rev() {
            if let SubagentEntry::Tool { call_id: id, state: s, .. } = entry
                && id == call_id
            {
                *s = state;
                return;
            }
        }
    }

    pub fn set_report(&mut self, report: &str) {
        self.report = crate::conversation::clip(report.trim(), KEPT_TEXT_CHARS);
    }

    fn calls(&self) -> usize {
        self.entries.iter().filter(|e| matches!(e, SubagentEntry::Tool { .. })).count()
    }

    /// The call it is on now.
    fn current(&self) -> Option<(&str, &str)> {
        self.entries.iter().rev().find_map(|e| match e {
            SubagentEntry::Tool { tool, summary, state: EntryState::Running, .. } => {
                Some((tool.as_str(), summary.as_str()))
            }
            SubagentEntry::Tool { .. } | SubagentEntry::Text(_) => None,
        })
    }

    fn header(&self, width: u16, theme: &Theme) -> Line<'static> {
        let (icon, style, outcome) = match &self.status {
            SubagentStatus::Preparing => ("◌", theme.tool_running, "preparing".to_string()),
            SubagentStatus::Running => ("◐", theme.tool_running, "working".to_string()),
            SubagentStatus::AwaitingApproval => ("?", theme.tool_denied, "waiting for your approval".to_string()),
            SubagentStatus::Done { is_error: false, duration } => ("✓", theme.tool_ok, format_duration(*duration)),
            SubagentStatus::Done { is_error: true, duration } => {
                ("✗", theme.tool_error, format!("no report · {}", format_duration(*duration)))
            }
            SubagentStatus::NotRun => ("⊘", theme.tool_denied, "not run".to_string()),
        };
        let kind = if self.agent_type.is_empty() { "task".to_string() } else { self.agent_type.clone() };
        let mut spans =
            vec![Span::styled(format!("{icon} "), style), Span::styled(format!("{kind} agent"), theme.tool_name)];
        if !self.description.is_empty() {
            spans.push(Span::styled(format!("  {}", self.description), theme.tool_summary));
        }
        let mut facts = Vec::new();
        let calls = self.calls();
        if calls > 0 {
            facts.push(format!("{calls} call{}", if calls == 1 { "" } else { "s" }));
        }
        if self.tokens > 0 {
            facts.push(format!("{} tokens", format_tokens(self.tokens)));
        }
        facts.push(outcome);
        spans.push(Span::styled(format!("  {}", facts.join(" · ")), theme.dim));
        Line::from(truncate_spans(spans, width as usize))
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = vec![self.header(width, theme)];
        let gutter = || vec![Span::styled("  │ ", theme.faint)];
        if matches!(self.status, SubagentStatus::Running | SubagentStatus::AwaitingApproval)
            && let Some((tool, summary)) = self.current()
        {
            let spans = vec![
                Span::styled("  ↳ ", theme.faint),
                Span::styled(tool.to_string(), theme.tool_name),
                Span::styled(format!("  {summary}"), theme.tool_summary),
            ];
            out.push(Line::from(truncate_spans(spans, width as usize)));
        }
        if self.expanded {
            self.transcript_lines(width, theme, &mut out);
        }
        if self.report.is_empty() {
            return out;
        }
        let limit = if self.expanded { EXPANDED_ROWS } else { COLLAPSED_REPORT_ROWS };
        let style = match self.status {
            SubagentStatus::Done { is_error: true, .. } | SubagentStatus::NotRun => theme.tool_error,
            SubagentStatus::Preparing
            | SubagentStatus::Running
            | SubagentStatus::AwaitingApproval
            | SubagentStatus::Done { is_error: false, .. } => theme.tool_output,
        };
        let mut rows = Vec::new();
        for line in self.report.lines() {
            let para = Para {
                first: gutter(),
                rest: gutter(),
                spans: vec![Span::styled(line.to_string(), style)],
                fill: None,
                hard: false,
            };
            wrap_para(&para, width as usize, &mut rows);
            if rows.len() > limit {
                break;
            }
        }
        let more = rows.len() > limit;
        out.extend(rows.into_iter().take(limit));
        if more {
            let hint = if self.expanded {
                "  … the rest is in the subagent's session (/sessions lists it under this one)".to_string()
            } else {
                let toggle = crate::tui::keys::hint(Action::Global(GlobalAction::ToggleToolOutput));
                format!("  … {toggle} or click for the whole report and its transcript")
            };
            out.push(Line::from(Span::styled(hint, theme.faint)));
        }
        out
    }

    /// The brief, then each call it made and what it wrote.
    fn transcript_lines(&self, width: u16, theme: &Theme, out: &mut Vec<Line<'static>>) {
        let gutter = || vec![Span::styled("  │ ", theme.faint)];
        let mut rows = Vec::new();
        let mut facts = Vec::new();
        if let Some(model) = &self.model {
            facts.push(model.clone());
        }
        if let Some(session) = &self.session_id {
            facts.push(format!("session {session}"));
        }
        if self.requests > 0 {
            facts.push(format!("{} request{}", self.requests, if self.requests == 1 { "" } else { "s" }));
        }
        if !facts.is_empty() {
            rows.push(Line::from(vec![gutter()[0].clone(), Span::styled(facts.join(" · "), theme.faint)]));
        }
        for line in self.brief.lines() {
            let spans = vec![Span::styled(line.to_string(), theme.dim)];
            wrap_para(
                &Para { first: gutter(), rest: gutter(), spans, fill: None, hard: false },
                width as usize,
                &mut rows,
            );
        }
        // Its last text is its report, shown below once.
        let shown = match self.entries.last() {
            Some(SubagentEntry::Text(t)) if !self.report.is_empty() && t.trim() == self.report.trim() => {
                &self.entries[..self.entries.len() - 1]
            }
            Some(SubagentEntry::Text(_) | SubagentEntry::Tool { .. }) | None => &self.entries[..],
        };
        for entry in shown {
            match entry {
                SubagentEntry::Tool { tool, summary, state, .. } => {
                    let (icon, style) = match state {
                        EntryState::Running => ("◐", theme.tool_running),
                        EntryState::Ok => ("✓", theme.tool_ok),
                        EntryState::Failed => ("✗", theme.tool_error),
                        EntryState::NotRun => ("⊘", theme.tool_denied),
                    };
                    let mut spans = gutter();
                    spans.push(Span::styled(format!("{icon} "), style));
                    spans.push(Span::styled(tool.clone(), theme.tool_name));
                    spans.push(Span::styled(format!("  {summary}"), theme.tool_summary));
                    rows.push(Line::from(truncate_spans(spans, width as usize)));
                }
                SubagentEntry::Text(text) => {
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        let spans = vec![Span::styled(line.to_string(), theme.text)];
                        wrap_para(
                            &Para { first: gutter(), rest: gutter(), spans, fill: None, hard: false },
                            width as usize,
                            &mut rows,
                        );
                    }
                }
            }
        }
        let total = rows.len();
        // The newest part matters most: what it did last.
        out.extend(rows.into_iter().skip(total.saturating_sub(EXPANDED_ROWS)));
        if !self.report.is_empty() {
            out.push(Line::from(vec![gutter()[0].clone(), Span::styled("report:", theme.strong)]));
        }
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

    fn running() -> SubagentCell {
        let mut cell = SubagentCell::new("t1");
        cell.take_arguments(
            r#"{"description": "find the parser", "prompt": "Find where parse_x is used.", "agent_type": "explore"}"#,
        );
        cell.status = SubagentStatus::Running;
        cell.tokens = 12_400;
        cell.push(SubagentEntry::Tool {
            call_id: "c1".into(),
            tool: "grep".into(),
            summary: "parse_x".into(),
            state: EntryState::Ok,
        });
        cell.push(SubagentEntry::Tool {
            call_id: "c2".into(),
            tool: "file_read".into(),
            summary: "src/a.rs".into(),
            state: EntryState::Running,
        });
        cell
    }

    #[test]
    fn a_running_subagent_shows_its_job_progress_and_current_call() {
        let theme = Theme::fallback(true);
        let lines = text(&running().lines(100, &theme));
        assert_eq!(
            lines,
            ["◐ explore agent  find the parser  2 calls · 12k tokens · working", "  ↳ file_read  src/a.rs"]
        );
    }

    #[test]
    fn a_finished_one_shows_its_report_and_expands_to_its_transcript() {
        let theme = Theme::fallback(true);
        let mut cell = running();
        cell.finish_call("c2", EntryState::Ok);
        cell.push(SubagentEntry::Text("Found two uses.".into()));
        cell.status = SubagentStatus::Done { is_error: false, duration: Duration::from_millis(3_200) };
        cell.set_report("parse_x is used in src/a.rs:3 and src/b.rs:9.");
        let lines = text(&cell.lines(100, &theme));
        assert_eq!(
            lines,
            [
                "✓ explore agent  find the parser  2 calls · 12k tokens · 3.2s",
                "  │ parse_x is used in src/a.rs:3 and src/b.rs:9."
            ]
        );
        cell.expanded = true;
        let lines = text(&cell.lines(100, &theme));
        assert!(lines.contains(&"  │ Find where parse_x is used.".to_string()), "{lines:?}");
        assert!(
            lines.contains(&"  │ ✓ grep  parse_x".to_string())
                && lines.contains(&"  │ ✓ file_read  src/a.rs".to_string())
        );
        assert!(lines.contains(&"  │ Found two uses.".to_string()) && lines.contains(&"  │ report:".to_string()));
        assert_eq!(lines.last().unwrap(), "  │ parse_x is used in src/a.rs:3 and src/b.rs:9.");

        // Its last message is its report: shown once, under `report:`.
        cell.push(SubagentEntry::Text("parse_x is used in src/a.rs:3 and src/b.rs:9.".into()));
        let lines = text(&cell.lines(100, &theme));
        let report_rows = lines.iter().filter(|l| l.contains("parse_x is used in")).count();
        assert_eq!(report_rows, 1, "{lines:?}");
    }
}
