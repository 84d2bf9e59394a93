//! `/sessions` and `/resume`: this project's sessions, newest first, with title, age, message
//! count, context size and the last message; Enter resumes the selected one.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, age, footer, frame, moved, view_area, window};
use crate::conversation::{SessionSummary, format_tokens};
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{truncate, truncate_spans};

pub struct SessionsView {
    pub items: Vec<SessionSummary>,
    pub selected: usize,
    /// The session on screen now (marked, and not resumed again).
    pub current: Option<String>,
    pub now: chrono::DateTime<chrono::Utc>,
    pub error: Option<String>,
    /// Waiting for the agent's answer.
    pub loading: bool,
}

impl SessionsView {
    pub fn selected(&self) -> Option<&SessionSummary> {
        self.items.get(self.selected)
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        match key {
            ViewKey::Action(OverlayAction::Next) => self.move_by(1),
            ViewKey::Action(OverlayAction::Prev) => self.move_by(-1),
            ViewKey::Page(by) => self.move_by(by),
            ViewKey::Action(OverlayAction::Open) => {
                return match self.selected() {
                    None => ViewOutcome::Close,
                    Some(s) if Some(&s.id) == self.current.as_ref() => ViewOutcome::CloseSaying("that is this session"),
                    Some(s) => ViewOutcome::Resume(s.id.clone()),
                };
            }
            ViewKey::Action(
                OverlayAction::Close
                | OverlayAction::TogglePin
                | OverlayAction::ToggleGlobal
                | OverlayAction::Delete
                | OverlayAction::Search,
            )
            | ViewKey::Other => {}
        }
        ViewOutcome::Stay
    }

    pub fn move_by(&mut self, by: isize) {
        self.selected = moved(self.selected, by, self.items.len());
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = view_area(area, (self.items.len() * 4).max(3));
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Open), "resume"),
                (Action::Overlay(OverlayAction::Next), "select"),
                (Action::Overlay(OverlayAction::Close), "close"),
            ],
            theme,
        );
        let title = format!("Sessions of this project ({})", self.items.len());
        let inner = frame(area, buf, theme, &title, foot);
        let w = inner.width.saturating_sub(2) as usize;
        let x = inner.x + 1;
        let mut y = inner.y;
        if let Some(e) = &self.error {
            buf.set_line(x, y, &Line::from(Span::styled(e.clone(), theme.notice_error)), w as u16);
            return;
        }
        if self.loading {
            buf.set_line(x, y + 1, &Line::from(Span::styled("reading the sessions…", theme.dim)), w as u16);
            return;
        }
        if self.items.is_empty() {
            let line = Line::from(Span::styled(
                "No sessions yet — this one is saved as soon as you send a prompt.",
                theme.dim,
            ));
            buf.set_line(x, y + 1, &line, w as u16);
            return;
        }
        let per_item = 4usize;
        let visible = (inner.height as usize / per_item).max(1);
        for i in window(self.items.len(), self.selected, visible) {
            let s = &self.items[i];
            let selected = i == self.selected;
            let marker = if selected { "▸ " } else { "  " };
            let title = if s.title.trim().is_empty() { "(untitled)".to_string() } else { s.title.clone() };
            // A subagent's session, right under the session that started it.
            let title = match &s.agent_type {
                Some(agent) if s.parent.is_some() => format!("↳ {agent} agent: {title}"),
                Some(_) | None => title,
            };
            let current = if self.current.as_deref() == Some(s.id.as_str()) { "  (this session)" } else { "" };
            let meta = format!(
                "{} · {} message{} · {} tokens · {} · {}",
                age(&s.last_active_at, self.now),
                s.message_count,
                if s.message_count == 1 { "" } else { "s" },
                format_tokens(s.tokens),
                s.mode,
                s.id
            );
            let base = if selected { theme.selected } else { theme.text };
            let title_line = Line::from(truncate_spans(
                vec![
                    Span::styled(marker, theme.accent.patch(base)),
                    Span::styled(title, theme.title.patch(base)),
                    Span::styled(current, theme.dim.patch(base)),
                ],
                w,
            ));
            if selected {
                buf.set_style(Rect::new(x, y, w as u16, 3), theme.selected);
            }
            buf.set_line(x, y, &title_line, w as u16);
            let meta_line = Line::from(vec![Span::styled("  ", base), Span::styled(meta, theme.dim.patch(base))]);
            buf.set_line(x, y + 1, &Line::from(truncate_spans(meta_line.spans, w)), w as u16);
            let preview = if s.last_message.is_empty() { "(no messages)".to_string() } else { s.last_message.clone() };
            let preview = Line::from(vec![
                Span::styled("  ", base),
                Span::styled(truncate(&preview, w.saturating_sub(2)), theme.faint.patch(base)),
            ]);
            buf.set_line(x, y + 2, &preview, w as u16);
            y += per_item as u16;
            if y >= inner.y + inner.height {
                break;
            }
        }
    }
}
