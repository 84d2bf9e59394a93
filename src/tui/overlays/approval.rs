//! The approval dialog for file writes, edits and commands: what will happen (the diff, unified
//! or side by side, with syntax colours; or the full command), why it asks, and the answers: `y`
//! once, `a` for the session or `p` for the project — each for the exact rule the dialog shows,
//! which Tab switches to its prefix before it is taken — and `n`. A denial can carry a typed
//! reason back to the model. The same dialog asks whether to run a command the sandbox stopped
//! again outside it.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};
use ratatui_textarea::TextArea;

use super::ViewOutcome;
use crate::agent::{ApprovalDecision, ApprovalKind, ApprovalRequest, UserCommand};
use crate::conversation::tool_names::BASH;
use crate::tui::diff::Diff;
use crate::tui::highlight;
use crate::tui::keys::{self, Action, ApprovalAction, GlobalAction, ReasonAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, wrap_paras};

/// Side by side needs room for two readable halves.
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 100;

pub struct ApprovalDialog {
    pub request: ApprovalRequest,
    /// The call's raw arguments, when known (a command is shown whole, not as its summary).
    pub arguments: Option<String>,
    pub side_by_side: bool,
    /// The rule shown (and taken by `a` / `p`) is the prefix, not the exact call.
    pub prefix: bool,
    pub scroll: usize,
    /// Typing a reason for a denial.
    pub reason: Option<TextArea<'static>>,
    /// The dialog opened while the user was typing: until then its answer keys are ignored, so
    /// a `y` or `n` meant for the prompt cannot answer it.
    pub guard_until: Option<std::time::Instant>,
}

impl ApprovalDialog {
    pub fn new(request: ApprovalRequest) -> ApprovalDialog {
        let arguments = Some(request.arguments.clone());
        ApprovalDialog {
            request,
            arguments,
            side_by_side: false,
            prefix: false,
            scroll: 0,
            reason: None,
            guard_until: None,
        }
    }

    /// Whether `a` and `p` are offered: there is a rule to remember.
    pub fn offers_rules(&self) -> bool {
        !self.request.exact.is_empty() && self.request.kind == ApprovalKind::Call
    }

    /// Whether Tab can switch to a broader rule.
    pub fn offers_prefix(&self) -> bool {
        self.offers_rules() && !self.request.prefix.is_empty()
    }

    /// The rules `a` and `p` would take now.
    pub fn shown_rules(&self) -> &[String] {
        if self.prefix && self.offers_prefix() { &self.request.prefix } else { &self.request.exact }
    }

    /// The command of a `bash` call, whole.
    fn command(&self) -> Option<String> {
        let args: serde_json::Value = serde_json::from_str(self.arguments.as_deref()?).ok()?;
        args.get("command").and_then(|c| c.as_str()).map(String::from)
    }

    /// The preview's rows for `w` columns.
    pub fn body(&self, w: u16, theme: &Theme) -> Vec<Line<'static>> {
        if let Some(diff) = &self.request.diff {
            let d = Diff::parse(diff);
            return if self.side_by_side && w >= SIDE_BY_SIDE_MIN_WIDTH {
                d.side_by_side(theme, w)
            } else {
                d.unified(theme, w)
            };
        }
        let Some(command) = self.command() else {
            // A read outside the project, a memory: say what it is, not as a command.
            let paras: Vec<Para> = self
                .request
                .summary
                .lines()
                .map(|line| Para { spans: vec![Span::styled(line.to_string(), theme.text)], ..Para::default() })
                .collect();
            return wrap_paras(&paras, w);
        };
        let highlighted = highlight::highlight(&command, "bash", theme.syntax.as_deref());
        let fill = theme.code_block;
        // Why the sandbox is to be lifted comes first, wrapped: it is the question.
        let mut paras: Vec<Para> = match &self.request.kind {
            ApprovalKind::Call => Vec::new(),
            ApprovalKind::OutsideSandbox { why } => vec![
                Para {
                    spans: vec![Span::styled(format!("Stopped by the sandbox: {why}."), theme.text)],
                    ..Para::default()
                },
                Para::default(),
            ],
        };
        let command_paras = command.lines().enumerate().map(|(i, line)| {
            let mut spans = vec![Span::styled(if i == 0 { "$ " } else { "  " }, theme.dim.patch(fill))];
            match highlighted.as_ref().and_then(|h| h.get(i)) {
                Some(h) => spans.extend(h.iter().map(|s| Span::styled(s.content.clone(), fill.patch(s.style)))),
                None => spans.push(Span::styled(line.to_string(), theme.text.patch(fill))),
            }
            Para { spans, fill: Some(fill), hard: true, ..Para::default() }
        });
        paras.extend(command_paras);
        wrap_paras(&paras, w)
    }

    /// Rows the dialog wants at `w` columns (before it is capped by the screen).
    pub fn desired_height(&self, w: u16, theme: &Theme) -> u16 {
        let body = self.body(w.saturating_sub(4), theme).len() as u16;
        // Borders, the line saying why, a blank, the body, and a blank or the rule line last.
        body + 6 + u16::from(self.reason.is_some()) * 2
    }

    pub fn scroll_by(&mut self, delta: isize) {
        self.scroll = self.scroll.saturating_add_signed(delta);
    }

    /// A key while the dialog is on screen. The dialog handles its own keys — the answers, the
    /// rule shown, the preview, the reason being typed — and says what the app is to do: an
    /// answer closes it and sends the agent the decision; the keys that stop, quit, switch
    /// the mode or repaint are the app's.
    pub fn on_key(&mut self, key: KeyEvent, global: Option<GlobalAction>, now: Instant, theme: &Theme) -> ViewOutcome {
        if let Some(reason) = &mut self.reason {
            match keys::reason(&key) {
                Some(ReasonAction::Confirm) => {
                    let text = reason.lines().join(" ").trim().to_string();
                    let reason = (!text.is_empty()).then_some(text);
                    return self.answer(ApprovalDecision::Deny { reason });
                }
                Some(ReasonAction::Cancel) => self.reason = None,
                None if global == Some(GlobalAction::ClearOrQuit) => self.reason = None,
                None => {
                    reason.input(key);
                }
            }
            return ViewOutcome::Stay;
        }
        let action = keys::approval(&key);
        let answering = matches!(
            action,
            Some(
                ApprovalAction::Approve
                    | ApprovalAction::ApproveForSession
                    | ApprovalAction::ApproveForProject
                    | ApprovalAction::Deny
            )
        );
        if answering && self.guard_until.is_some_and(|until| now < until) {
            return ViewOutcome::Say(
                "this dialog opened while you were typing; press the key again to answer it".into(),
            );
        }
        match action {
            Some(ApprovalAction::Approve) => return self.answer(ApprovalDecision::Approve),
            // Nothing to remember (a global memory, a re-run outside the sandbox): not offered.
            Some(ApprovalAction::ApproveForSession | ApprovalAction::ApproveForProject) if !self.offers_rules() => {
                return ViewOutcome::Say("nothing to remember for this call: y approves it once".into());
            }
            Some(ApprovalAction::ApproveForSession) => {
                return self.answer(ApprovalDecision::ApproveForSession { prefix: self.prefix });
            }
            Some(ApprovalAction::ApproveForProject) => {
                return self.answer(ApprovalDecision::ApproveForProject { prefix: self.prefix });
            }
            Some(ApprovalAction::TogglePrefix) if self.offers_prefix() => self.prefix = !self.prefix,
            Some(ApprovalAction::TogglePrefix) => {}
            Some(ApprovalAction::Deny) => self.reason = Some(reason_editor(theme)),
            Some(ApprovalAction::ToggleDiffView) => self.side_by_side = !self.side_by_side,
            Some(ApprovalAction::ScrollUp) => self.scroll_by(-1),
            Some(ApprovalAction::ScrollDown) => self.scroll_by(1),
            None => match global {
                Some(GlobalAction::PageUp) => self.scroll_by(-10),
                Some(GlobalAction::PageDown) => self.scroll_by(10),
                Some(
                    a @ (GlobalAction::Interrupt
                    | GlobalAction::ClearOrQuit
                    | GlobalAction::CycleMode
                    | GlobalAction::Redraw),
                ) => return ViewOutcome::Global(a),
                // The transcript stays put while a dialog is up.
                Some(
                    GlobalAction::LineUp
                    | GlobalAction::LineDown
                    | GlobalAction::Top
                    | GlobalAction::FollowTail
                    | GlobalAction::ToggleToolOutput
                    | GlobalAction::ToggleTaskList
                    | GlobalAction::CopyAnswer
                    | GlobalAction::ToggleMouse
                    | GlobalAction::SearchTranscript
                    | GlobalAction::ShowToolOutput,
                )
                | None => {}
            },
        }
        ViewOutcome::Stay
    }

    /// Text pasted while the dialog is up: into the reason being typed, on one line.
    pub fn on_paste(&mut self, text: &str) {
        if let Some(reason) = &mut self.reason {
            reason.insert_str(text.replace(['\n', '\r'], " "));
        }
    }

    /// The answer: the dialog closes, the agent gets the decision, the status line says it.
    fn answer(&self, decision: ApprovalDecision) -> ViewOutcome {
        let (r, rules) = (&self.request, self.shown_rules().join(", "));
        let saying = match &decision {
            ApprovalDecision::Approve => format!("approved {} {}", r.tool, r.summary),
            ApprovalDecision::ApproveForSession { .. } => format!("approved; for this session: {rules}"),
            ApprovalDecision::ApproveForProject { .. } => {
                format!("approved; saving {rules} to .cairn/settings.local.toml")
            }
            ApprovalDecision::Deny { .. } | ApprovalDecision::Unanswered { .. } => {
                format!("denied {} {}", r.tool, r.summary)
            }
        };
        ViewOutcome::CloseSending { command: UserCommand::Approval { id: r.id, decision }, saying }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let r = &self.request;
        let mut title = match &r.kind {
            ApprovalKind::Call => Line::from(vec![
                Span::styled(" Allow ", theme.title),
                Span::styled(r.tool.clone(), theme.tool_name),
                Span::styled("? ", theme.title),
            ]),
            ApprovalKind::OutsideSandbox { .. } => Line::from(Span::styled(" Run outside the sandbox? ", theme.title)),
        };
        // A subagent's call says whose it is.
        if let Some(agent) = &r.agent {
            title.spans.push(Span::styled(format!("asked by {agent} "), theme.accent));
        }
        let hint = |a: ApprovalAction| Span::styled(keys::hint(Action::Approval(a)), theme.key);
        let footer = if self.reason.is_some() {
            Line::from(vec![
                Span::raw(" "),
                Span::styled(keys::hint(Action::Reason(ReasonAction::Confirm)), theme.key),
                Span::styled(" deny with this reason · ", theme.dim),
                Span::styled(keys::hint(Action::Reason(ReasonAction::Cancel)), theme.key),
                Span::styled(" back ", theme.dim),
            ])
        } else {
            let once = match r.kind {
                ApprovalKind::Call if self.offers_rules() => " once · ",
                ApprovalKind::Call => " yes · ",
                ApprovalKind::OutsideSandbox { .. } => " run it outside the sandbox · ",
            };
            let mut spans = vec![Span::raw(" "), hint(ApprovalAction::Approve), Span::styled(once, theme.dim)];
            if self.offers_rules() {
                spans.push(hint(ApprovalAction::ApproveForSession));
                spans.push(Span::styled(" this session · ", theme.dim));
                spans.push(hint(ApprovalAction::ApproveForProject));
                spans.push(Span::styled(" this project · ", theme.dim));
            }
            spans.push(hint(ApprovalAction::Deny));
            spans.push(Span::styled(" no", theme.dim));

            if r.diff.is_some() {
                spans.push(Span::styled(" · ", theme.dim));
                spans.push(hint(ApprovalAction::ToggleDiffView));
                let label = if self.side_by_side { " unified" } else { " side by side" };
                spans.push(Span::styled(label, theme.dim));
            }
            spans.push(Span::styled(" · ", theme.dim));
            spans.push(Span::styled(keys::hint(Action::Global(GlobalAction::Interrupt)), theme.key));
            spans.push(Span::styled(" stop the turn ", theme.dim));
            Line::from(spans)
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.dialog_border)
            .style(theme.overlay)
            .title(title)
            .title_bottom(Line::from(truncate_spans(footer.spans, area.width.saturating_sub(2) as usize)));
        let inner = block.inner(area);
        block.render(area, buf);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        if inner.height == 0 {
            return;
        }
        // What and why.
        // A path with its counts; a command is shown whole below, so only why is said here.
        let what = match &r.diff {
            Some(diff) => {
                let d = Diff::parse(diff);
                vec![
                    Span::styled(r.summary.clone(), theme.text.patch(theme.strong)),
                    Span::styled(format!("  +{}", d.added), theme.tool_ok),
                    Span::styled(format!(" −{}", d.removed), theme.tool_error),
                    Span::styled(format!("  {}", r.reason), theme.dim),
                ]
            }
            None => match &r.kind {
                // A command's reason is about its parts (`git push` is not read-only); a file
                // tool's is what it does (creates notes.txt).
                ApprovalKind::Call if r.tool == BASH => {
                    vec![Span::styled(format!("Asks because {}.", r.reason), theme.dim)]
                }
                ApprovalKind::Call => vec![Span::styled(format!("This call {}.", r.reason), theme.dim)],
                ApprovalKind::OutsideSandbox { .. } => vec![Span::styled(
                    "This command failed inside the sandbox. Run it again without the sandbox?",
                    theme.dim,
                )],
            },
        };
        buf.set_line(inner.x, inner.y, &Line::from(truncate_spans(what, inner.width as usize)), inner.width);
        let top = inner.y + 2;
        let mut bottom = inner.y + inner.height;
        if self.offers_rules() && self.reason.is_none() && inner.height > 4 {
            // The rule `a` and `p` would take, in full, before either is pressed.
            bottom = bottom.saturating_sub(1);
            let mut spans = vec![
                Span::styled(
                    format!(
                        "{}/{} remember: ",
                        keys::hint(Action::Approval(ApprovalAction::ApproveForSession)),
                        keys::hint(Action::Approval(ApprovalAction::ApproveForProject))
                    ),
                    theme.dim,
                ),
                Span::styled(self.shown_rules().join(", "), theme.text.patch(theme.strong)),
            ];
            if self.offers_prefix() {
                let other = if self.prefix { r.exact.join(", ") } else { r.prefix.join(", ") };
                let what = if self.prefix { "back to" } else { "broaden to" };
                spans.push(Span::styled(
                    format!("   {}: {what} {other}", keys::hint(Action::Approval(ApprovalAction::TogglePrefix))),
                    theme.faint,
                ));
            }
            buf.set_line(inner.x, bottom, &Line::from(truncate_spans(spans, inner.width as usize)), inner.width);
            // A blank row between the preview and the rule.
            bottom = bottom.saturating_sub(1);
        }
        if let Some(reason) = &self.reason {
            bottom = bottom.saturating_sub(2);
            let label = Line::from(Span::styled("Why not? (optional, sent to the model)", theme.dim));
            buf.set_line(inner.x, bottom, &label, inner.width);
            let field = Rect::new(inner.x, bottom + 1, inner.width, 1);
            reason.render(field, buf);
        }
        let narrow = self.side_by_side && r.diff.is_some() && inner.width < SIDE_BY_SIDE_MIN_WIDTH;
        if narrow && top < bottom {
            let note = Line::from(Span::styled(
                format!("(side by side needs {SIDE_BY_SIDE_MIN_WIDTH} columns; showing unified)"),
                theme.faint,
            ));
            buf.set_line(inner.x, top - 1, &note, inner.width);
        }
        let rows = self.body(inner.width, theme);
        let height = bottom.saturating_sub(top) as usize;
        let start = self.scroll.min(rows.len().saturating_sub(height));
        let more_below = rows.len() > start + height;
        for (y, line) in (top..).zip(rows.iter().skip(start).take(height)) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        if more_below || start > 0 {
            let info = format!(
                " {}–{} of {} rows · {}{} scroll ",
                start + 1,
                (start + height).min(rows.len()),
                rows.len(),
                keys::hint(Action::Approval(ApprovalAction::ScrollUp)),
                keys::hint(Action::Approval(ApprovalAction::ScrollDown))
            );
            let w = info.chars().count() as u16;
            let x = area.x + area.width.saturating_sub(w + 2);
            buf.set_line(x, area.y, &Line::from(Span::styled(info, theme.faint)), w);
        }
    }
}

/// A one-line editor for the denial reason.
pub fn reason_editor(theme: &Theme) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_style(theme.composer_text);
    t.set_cursor_line_style(Style::default());
    t.set_cursor_style(theme.composer_cursor);
    t.set_placeholder_text("e.g. use the existing helper instead");
    t.set_placeholder_style(theme.composer_placeholder);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()).collect()
    }

    #[test]
    fn a_read_outside_the_project_shows_its_path_not_a_command() {
        let theme = Theme::fallback(true);
        let dialog = ApprovalDialog::new(ApprovalRequest {
            id: 1,
            call_id: "c1".into(),
            tool: "file_read".into(),
            summary: "/etc/hostname".into(),
            arguments: r#"{"path":"/etc/hostname"}"#.into(),
            reason: "reads outside the project: /etc/hostname".into(),
            diff: None,
            asked_by: "mode: edit".into(),
            exact: vec!["file_read(/etc/hostname)".into()],
            prefix: vec!["file_read(/etc/)".into()],
            kind: ApprovalKind::Call,
            agent: None,
            task: None,
        });
        assert_eq!(text(&dialog.body(60, &theme)), ["/etc/hostname"]);
    }
}
