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
use crate::tui::hints::{self, Hint};
use crate::tui::keys::{self, Action, ApprovalAction, GlobalAction, ReasonAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, width, wrap_paras};

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
    /// Every rule `a` and `p` would save has been on screen: a dialog too tall for the screen
    /// scrolls, and those keys wait until the user has scrolled through them all.
    rules_in_sight: std::cell::Cell<bool>,
    /// The rule rows seen so far, for the layout they were seen in (width, rules shown).
    rules_seen: std::cell::RefCell<((u16, bool), Vec<bool>)>,
}

/// A dialog's rows for a width: what and why (on top), the preview (scrolls), and the rules
/// `a` and `p` would save (below it), each part wrapped — nothing it asks about is cut.
struct DialogRows {
    top: Vec<Line<'static>>,
    body: Vec<Line<'static>>,
    bottom: Vec<Line<'static>>,
}

/// The fewest preview rows worth pinning the parts around; with less room everything scrolls.
const MIN_BODY_ROWS: usize = 3;

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
            rules_in_sight: std::cell::Cell::new(true),
            rules_seen: std::cell::RefCell::new(((0, false), Vec::new())),
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
                d.unified_wrapped(theme, w)
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
        if self.in_background() {
            paras.push(Para::default());
            paras.push(Para {
                spans: vec![Span::styled(
                    "In the background: the call returns at once and the command keeps running until it ends, /stop or bash_stop ends it, or cairn exits.",
                    theme.text,
                )],
                ..Para::default()
            });
        }
        wrap_paras(&paras, w)
    }

    /// A `bash` call with `background: true`.
    fn in_background(&self) -> bool {
        let args = self.arguments.as_deref().and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok());
        args.is_some_and(|a| a.get("background").and_then(|b| b.as_bool()) == Some(true))
    }

    /// Rows the dialog wants at `w` columns (before it is capped by the screen).
    pub fn desired_height(&self, w: u16, theme: &Theme) -> u16 {
        let rows = self.rows(w.saturating_sub(4), theme);
        let reason = if self.reason.is_some() { REASON_ROWS } else { 0 };
        let all = rows.top.len() + rows.body.len() + rows.bottom.len() + reason;
        // And the borders.
        u16::try_from(all + 2).unwrap_or(u16::MAX)
    }

    /// What and why, the preview and the rules to remember, for `w` columns.
    fn rows(&self, w: u16, theme: &Theme) -> DialogRows {
        let r = &self.request;
        let para = |spans: Vec<Span<'static>>| Para { spans, ..Para::default() };
        let mut top = wrap_paras(&[para(self.what(theme))], w);
        top.push(Line::default());
        let narrow = self.side_by_side && r.diff.is_some() && w < SIDE_BY_SIDE_MIN_WIDTH;
        if narrow {
            let note = format!("(side by side needs {SIDE_BY_SIDE_MIN_WIDTH} columns; showing unified)");
            top.extend(wrap_paras(&[para(vec![Span::styled(note, theme.faint)])], w));
        }
        let mut bottom = Vec::new();
        if self.offers_rules() && self.reason.is_none() {
            bottom.push(Line::default());
            bottom.extend(self.rule_rows(w, theme));
        }
        DialogRows { top, body: self.body(w, theme), bottom }
    }

    /// The path with its counts, or why it asks: a command is shown whole below, so for one
    /// only why is said here.
    fn what(&self, theme: &Theme) -> Vec<Span<'static>> {
        let r = &self.request;
        if let Some(diff) = &r.diff {
            let d = Diff::parse(diff);
            return vec![
                Span::styled(r.summary.clone(), theme.text.patch(theme.strong)),
                Span::styled(format!("  +{}", d.added), theme.tool_ok),
                Span::styled(format!(" −{}", d.removed), theme.tool_error),
                Span::styled(format!("  {}", r.reason), theme.dim),
            ];
        }
        match &r.kind {
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
        }
    }

    /// Every rule `a` and `p` would save, one to a row and wrapped under the label, then what
    /// Tab switches to.
    fn rule_rows(&self, w: u16, theme: &Theme) -> Vec<Line<'static>> {
        let r = &self.request;
        let label = format!(
            "{}/{} remember: ",
            keys::hint(Action::Approval(ApprovalAction::ApproveForSession)),
            keys::hint(Action::Approval(ApprovalAction::ApproveForProject))
        );
        // The rules hang under the label, unless the label would leave them no room.
        let indent = " ".repeat(if width(&label) * 2 < w as usize { width(&label) } else { 2 });
        let mut paras: Vec<Para> = self
            .shown_rules()
            .iter()
            .enumerate()
            .map(|(i, rule)| Para {
                first: vec![Span::styled(if i == 0 { label.clone() } else { indent.clone() }, theme.dim)],
                rest: vec![Span::raw(indent.clone())],
                spans: vec![Span::styled(rule.clone(), theme.text.patch(theme.strong))],
                ..Para::default()
            })
            .collect();
        if self.offers_prefix() {
            let other = if self.prefix { r.exact.join(", ") } else { r.prefix.join(", ") };
            let what = if self.prefix { "back to" } else { "broaden to" };
            let tab = keys::hint(Action::Approval(ApprovalAction::TogglePrefix));
            paras.push(Para {
                first: vec![Span::styled(format!("{tab}: {what} "), theme.faint)],
                rest: vec![Span::raw(indent.clone())],
                spans: vec![Span::styled(other, theme.faint)],
                ..Para::default()
            });
        }
        wrap_paras(&paras, w)
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
            // Never a rule the user has not seen: a dialog taller than the screen shows them first.
            Some(ApprovalAction::ApproveForSession | ApprovalAction::ApproveForProject)
                if !self.rules_in_sight.get() =>
            {
                let down = keys::hint(Action::Approval(ApprovalAction::ScrollDown));
                return ViewOutcome::Say(format!("see every rule first ({down}), then a/p"));
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

    /// The footer's hints, the least important left out at a narrow width.
    fn footer(&self) -> Vec<Hint> {
        let r = &self.request;
        let key = |a: Action| keys::hint(a);
        if self.reason.is_some() {
            return vec![
                Hint::new(key(Action::Reason(ReasonAction::Confirm)), "deny with this reason", 9),
                Hint::new(key(Action::Reason(ReasonAction::Cancel)), "back", 8),
            ];
        }
        let once = match r.kind {
            ApprovalKind::Call if self.offers_rules() => "once",
            ApprovalKind::Call => "yes",
            ApprovalKind::OutsideSandbox { .. } => "run it outside the sandbox",
        };
        let answer = |a: ApprovalAction| key(Action::Approval(a));
        let mut hints = vec![Hint::new(answer(ApprovalAction::Approve), once, 10)];
        if self.offers_rules() {
            hints.push(Hint::new(answer(ApprovalAction::ApproveForSession), "this session", 8));
            hints.push(Hint::new(answer(ApprovalAction::ApproveForProject), "this project", 7));
        }
        hints.push(Hint::new(answer(ApprovalAction::Deny), "no", 9));
        if r.diff.is_some() {
            let label = if self.side_by_side { "unified" } else { "side by side" };
            hints.push(Hint::new(answer(ApprovalAction::ToggleDiffView), label, 3));
        }
        hints.push(Hint::new(key(Action::Global(GlobalAction::Interrupt)), "stop the turn", 5));
        hints
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
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.dialog_border)
            .style(theme.overlay)
            .title(Line::from(truncate_spans(title.spans, area.width.saturating_sub(2) as usize)))
            .title_bottom(hints::fit(&self.footer(), area.width.saturating_sub(2) as usize, theme));
        let inner = block.inner(area);
        block.render(area, buf);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        if inner.height == 0 {
            return;
        }
        let reason_h = if self.reason.is_some() { REASON_ROWS } else { 0 };
        let DialogRows { top, body, bottom } = self.rows(inner.width, theme);
        let height = (inner.height as usize).saturating_sub(reason_h);
        let fixed = top.len() + bottom.len();
        let put = |buf: &mut Buffer, y: usize, line: &Line<'_>| {
            buf.set_line(inner.x, inner.y + y as u16, line, inner.width);
        };
        // The rows that scroll, and where they start on screen.
        let (scrolling, at, room) = if fixed + body.len().min(MIN_BODY_ROWS) <= height {
            // What and why stay on top, the rules below; the preview scrolls between them.
            for (y, line) in top.iter().enumerate() {
                put(buf, y, line);
            }
            for (i, line) in bottom.iter().enumerate() {
                put(buf, height - bottom.len() + i, line);
            }
            self.rules_in_sight.set(true);
            (body, top.len(), height - fixed)
        } else {
            // Too tall for the screen: all of it scrolls, and `a`/`p` wait until every rule row
            // has been on screen.
            let first_rule = top.len() + body.len();
            let rule_rows = bottom.len();
            let all: Vec<Line<'static>> = top.into_iter().chain(body).chain(bottom).collect();
            let start = self.scroll.min(all.len().saturating_sub(height));
            let mut seen = self.rules_seen.borrow_mut();
            let layout = (inner.width, self.prefix);
            if seen.0 != layout || seen.1.len() != rule_rows {
                *seen = (layout, vec![false; rule_rows]);
            }
            for row in start..(start + height).min(all.len()) {
                if let Some(i) = row.checked_sub(first_rule) {
                    seen.1[i] = true;
                }
            }
            self.rules_in_sight.set(seen.1.iter().all(|s| *s));
            (all, 0, height)
        };
        let start = self.scroll.min(scrolling.len().saturating_sub(room));
        for (i, line) in scrolling.iter().skip(start).take(room).enumerate() {
            put(buf, at + i, line);
        }
        if let Some(reason) = &self.reason {
            let y = inner.y + height as u16;
            let label = Line::from(Span::styled("Why not? (optional, sent to the model)", theme.dim));
            buf.set_line(inner.x, y + 1, &label, inner.width);
            reason.render(Rect::new(inner.x, y + 2, inner.width, 1), buf);
        }
        if scrolling.len() > start + room || start > 0 {
            let info = format!(
                " {}–{} of {} rows · {}{} scroll ",
                start + 1,
                (start + room).min(scrolling.len()),
                scrolling.len(),
                keys::hint(Action::Approval(ApprovalAction::ScrollUp)),
                keys::hint(Action::Approval(ApprovalAction::ScrollDown))
            );
            let w = width(&info) as u16;
            if w + 4 < area.width {
                let x = area.x + area.width.saturating_sub(w + 2);
                buf.set_line(x, area.y, &Line::from(Span::styled(info, theme.faint)), w);
            }
        }
    }
}

/// Rows the denial reason takes: a blank, its label and its field.
const REASON_ROWS: usize = 3;

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
#[path = "approval_tests.rs"]
mod tests;
