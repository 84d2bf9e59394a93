//! `/rewind`: the session's turns (prompt, time, files changed), newest last; Enter on one
//! offers what to take back — code and conversation, conversation only, code only — and, when
//! files were changed by someone else since, whether to skip or overwrite them. The agent does
//! the work; this view only asks.

use std::collections::BTreeSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, age, footer, frame, moved, step_of, view_area, window};
use crate::agent::{RewindPreview, RewindScope};
use crate::checkpoint::Overwrite;
use crate::conversation::TurnInfo;
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate, truncate_spans, wrap_paras};

const SCOPES: [(RewindScope, &str); 3] = [
    (RewindScope::Both, "restore the files, and take the turn out of the conversation"),
    (RewindScope::Conversation, "take the turn out of the conversation; the files stay as they are"),
    (RewindScope::Code, "restore the files; the model still sees the whole conversation"),
];

/// Where the view is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewindStep {
    /// Choosing the turn.
    Turn,
    /// Choosing what to take back.
    Scope { choice: usize },
    /// Waiting for the agent: checking the files, or rewinding.
    Working(&'static str),
    /// Files changed by someone else since cairn did: skip them or overwrite them.
    Conflicts { preview: RewindPreview, choice: usize },
}

pub struct RewindView {
    pub turns: Vec<TurnInfo>,
    pub selected: usize,
    pub step: RewindStep,
    pub now: chrono::DateTime<chrono::Utc>,
    pub error: Option<String>,
    /// Waiting for the list.
    pub loading: bool,
}

impl RewindView {
    pub fn new(now: chrono::DateTime<chrono::Utc>) -> RewindView {
        RewindView { turns: Vec::new(), selected: 0, step: RewindStep::Turn, now, error: None, loading: true }
    }

    /// The list arrived: start on the latest turn, the one most often taken back.
    pub fn show(&mut self, turns: Vec<TurnInfo>) {
        self.loading = false;
        self.selected = turns.len().saturating_sub(1);
        self.turns = turns;
    }

    fn turn(&self) -> Option<&TurnInfo> {
        self.turns.get(self.selected)
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        let step = std::mem::replace(&mut self.step, RewindStep::Turn);
        let (step, outcome) = self.step_key(step, key);
        self.step = step;
        outcome
    }

    fn step_key(&mut self, step: RewindStep, key: ViewKey) -> (RewindStep, ViewOutcome) {
        let close = ViewKey::Action(OverlayAction::Close);
        let open = ViewKey::Action(OverlayAction::Open);
        match step {
            RewindStep::Turn => match key {
                k if k == close => (RewindStep::Turn, ViewOutcome::Close),
                k if k == open => match self.turn() {
                    Some(_) => (RewindStep::Scope { choice: 0 }, ViewOutcome::Stay),
                    None => (RewindStep::Turn, ViewOutcome::Close),
                },
                other => {
                    self.move_by(step_of(other));
                    (RewindStep::Turn, ViewOutcome::Stay)
                }
            },
            RewindStep::Scope { choice } => match key {
                k if k == close => (RewindStep::Turn, ViewOutcome::Stay),
                k if k == open => {
                    let Some(turn) = self.turn() else { return (RewindStep::Turn, ViewOutcome::Close) };
                    let (user_seq, scope) = (turn.user_seq, SCOPES[choice].0);
                    if scope.code() {
                        (RewindStep::Working("checking the files…"), ViewOutcome::PlanRewind { user_seq, scope })
                    } else {
                        let overwrite = Overwrite::Nothing;
                        (RewindStep::Working("rewinding…"), ViewOutcome::Rewind { user_seq, scope, overwrite })
                    }
                }
                other => (RewindStep::Scope { choice: moved(choice, step_of(other), SCOPES.len()) }, ViewOutcome::Stay),
            },
            // Keys wait while the agent works; closing leaves it to finish and say what it did.
            RewindStep::Working(what) => match key {
                k if k == close => (RewindStep::Working(what), ViewOutcome::Close),
                _ => (RewindStep::Working(what), ViewOutcome::Stay),
            },
            RewindStep::Conflicts { preview, choice } => match key {
                k if k == close => (RewindStep::Scope { choice: scope_index(preview.scope) }, ViewOutcome::Stay),
                k if k == open => {
                    let overwrite = if choice == 1 {
                        Overwrite::Only(preview.conflicts.iter().map(|c| c.path.clone()).collect::<BTreeSet<_>>())
                    } else {
                        Overwrite::Nothing
                    };
                    let (user_seq, scope) = (preview.turn.user_seq, preview.scope);
                    (RewindStep::Working("rewinding…"), ViewOutcome::Rewind { user_seq, scope, overwrite })
                }
                other => {
                    (RewindStep::Conflicts { preview, choice: moved(choice, step_of(other), 2) }, ViewOutcome::Stay)
                }
            },
        }
    }

    /// The agent checked the files: with no conflict the rewind goes ahead at once.
    pub fn planned(&mut self, preview: RewindPreview) -> Option<ViewOutcome> {
        if preview.conflicts.is_empty() {
            self.step = RewindStep::Working("rewinding…");
            let (user_seq, scope) = (preview.turn.user_seq, preview.scope);
            return Some(ViewOutcome::Rewind { user_seq, scope, overwrite: Overwrite::Nothing });
        }
        self.step = RewindStep::Conflicts { preview, choice: 0 };
        None
    }

    pub fn move_by(&mut self, by: isize) {
        match &mut self.step {
            RewindStep::Turn => self.selected = moved(self.selected, by, self.turns.len()),
            RewindStep::Scope { choice } => *choice = moved(*choice, by, SCOPES.len()),
            RewindStep::Conflicts { choice, .. } => *choice = moved(*choice, by, 2),
            RewindStep::Working(_) => {}
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = match &self.step {
            RewindStep::Turn => self.turns.len() * 2,
            RewindStep::Scope { .. } => 4 + SCOPES.len() * 3,
            RewindStep::Working(_) => 4,
            RewindStep::Conflicts { preview, .. } => 8 + preview.conflicts.len() + preview.unrestorable.len(),
        };
        let area = view_area(area, rows.max(3));
        let (title, open_label) = match &self.step {
            RewindStep::Turn => (format!("Rewind: choose a turn ({})", self.turns.len()), "choose"),
            RewindStep::Scope { .. } => ("Rewind: what to take back".to_string(), "rewind"),
            RewindStep::Working(_) => ("Rewind".to_string(), "wait"),
            RewindStep::Conflicts { .. } => ("Rewind: files changed since".to_string(), "go ahead"),
        };
        let back = if self.step == RewindStep::Turn { "close" } else { "back" };
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Open), open_label),
                (Action::Overlay(OverlayAction::Next), "select"),
                (Action::Overlay(OverlayAction::Close), back),
            ],
            theme,
        );
        let inner = frame(area, buf, theme, &title, foot);
        let w = inner.width.saturating_sub(2);
        let x = inner.x + 1;
        let put = |buf: &mut Buffer, y: u16, line: Line<'_>| {
            if y < inner.y + inner.height {
                buf.set_line(x, y, &line, w);
            }
        };
        if let Some(e) = &self.error {
            put(buf, inner.y, Line::from(Span::styled(e.clone(), theme.notice_error)));
            return;
        }
        if self.loading {
            put(buf, inner.y + 1, Line::from(Span::styled("reading the turns…", theme.dim)));
            return;
        }
        if self.turns.is_empty() {
            put(buf, inner.y + 1, Line::from(Span::styled("No turns yet: there is nothing to rewind.", theme.dim)));
            return;
        }
        match &self.step {
            RewindStep::Turn => self.render_turns(inner, buf, theme),
            RewindStep::Scope { choice } => {
                let mut y = inner.y;
                if let Some(turn) = self.turn() {
                    put(buf, y, self.turn_line(turn, false, w as usize, theme));
                    y += 2;
                }
                for (i, (scope, what)) in SCOPES.iter().enumerate() {
                    let selected = i == *choice;
                    let base = if selected { theme.selected } else { theme.text };
                    let bottom = inner.y + inner.height;
                    if selected && y < bottom {
                        buf.set_style(Rect::new(x, y, w, 2.min(bottom - y)), base);
                    }
                    let marker = if selected { "▸ " } else { "  " };
                    let label = capitalise(scope.label());
                    put(
                        buf,
                        y,
                        Line::from(vec![
                            Span::styled(marker, theme.accent.patch(base)),
                            Span::styled(label, theme.title.patch(base)),
                        ]),
                    );
                    put(
                        buf,
                        y + 1,
                        Line::from(vec![
                            Span::styled("    ", base),
                            Span::styled(truncate(what, w as usize - 4), theme.dim.patch(base)),
                        ]),
                    );
                    y += 3;
                }
            }
            RewindStep::Working(what) => {
                put(buf, inner.y + 1, Line::from(Span::styled(*what, theme.dim)));
            }
            RewindStep::Conflicts { preview, choice } => {
                let n = preview.conflicts.len();
                let intro = format!(
                    "{n} file{} changed by someone else after cairn last wrote {}:",
                    if n == 1 { " was" } else { "s were" },
                    if n == 1 { "it" } else { "them" }
                );
                let mut lines = wrap_paras(&[Para::plain(vec![Span::styled(intro, theme.text)])], w);
                for c in &preview.conflicts {
                    lines.push(Line::from(vec![
                        Span::styled("  • ", theme.notice_warning),
                        Span::styled(c.path.clone(), theme.text),
                    ]));
                }
                let unrestorable: Vec<Para> = preview
                    .unrestorable
                    .iter()
                    .map(|u| {
                        Para::prefixed(
                            vec![Span::styled("  – ", theme.faint)],
                            vec![Span::raw("    ")],
                            vec![Span::styled(u.reason.clone(), theme.dim)],
                        )
                    })
                    .collect();
                lines.extend(wrap_paras(&unrestorable, w));
                lines.push(Line::default());
                let options = [
                    "Skip them: restore everything else and leave these as they are",
                    "Overwrite them with what they held before the turn",
                ];
                for (i, option) in options.iter().enumerate() {
                    let selected = i == *choice;
                    let base = if selected { theme.selected } else { theme.text };
                    let marker = if selected { "▸ " } else { "  " };
                    lines.push(Line::from(truncate_spans(
                        vec![Span::styled(marker, theme.accent.patch(base)), Span::styled(option.to_string(), base)],
                        w as usize,
                    )));
                }
                for (i, line) in lines.into_iter().enumerate() {
                    put(buf, inner.y + i as u16, line);
                }
            }
        }
    }

    fn render_turns(&self, inner: Rect, buf: &mut Buffer, theme: &Theme) {
        let w = inner.width.saturating_sub(2);
        let per_item = 2usize;
        let visible = (inner.height as usize / per_item).max(1);
        let mut y = inner.y;
        for i in window(self.turns.len(), self.selected, visible) {
            let selected = i == self.selected;
            if selected {
                buf.set_style(Rect::new(inner.x + 1, y, w, 1), theme.selected);
            }
            buf.set_line(inner.x + 1, y, &self.turn_line(&self.turns[i], selected, w as usize, theme), w);
            y += per_item as u16;
            if y >= inner.y + inner.height {
                break;
            }
        }
    }

    /// `▸ 3  fix the parser · 2m ago · 4 files changed`
    fn turn_line(&self, t: &TurnInfo, selected: bool, w: usize, theme: &Theme) -> Line<'static> {
        let base = if selected { theme.selected } else { theme.text };
        let marker = if selected { "▸ " } else { "  " };
        let prompt = if t.prompt.is_empty() { "(no text)".to_string() } else { t.prompt.clone() };
        let files = match (t.files_changed, t.files_reverted) {
            (0, 0) => "no file changes".to_string(),
            (0, r) => format!("{r} file{} put back", if r == 1 { "" } else { "s" }),
            (c, 0) => format!("{c} file{} changed", if c == 1 { "" } else { "s" }),
            (c, r) => format!("{c} file{} changed, {r} put back", if c == 1 { "" } else { "s" }),
        };
        Line::from(truncate_spans(
            vec![
                Span::styled(marker, theme.accent.patch(base)),
                Span::styled(format!("{:>3}  ", t.number), theme.dim.patch(base)),
                Span::styled(prompt, theme.title.patch(base)),
                Span::styled(format!("  · {} · {files}", age(&t.created_at, self.now)), theme.dim.patch(base)),
            ],
            w,
        ))
    }
}

fn scope_index(scope: RewindScope) -> usize {
    SCOPES.iter().position(|(s, _)| *s == scope).unwrap_or(0)
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
#[path = "rewind_tests.rs"]
mod tests;
