//! `/memories`: this project's memories (and global ones) — list, view, pin or unpin, make global
//! or project-only, delete.
//! Until memories are written the list is empty, and the view says how they come to be.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{ViewKey, ViewOutcome, age, footer, frame, moved, view_area, window};
use crate::agent::LibraryRequest;
use crate::conversation::MemoryRecord;
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::truncate_spans;

pub const EMPTY: &str = "No memories yet — cairn saves them when you ask it to remember something, and at compaction.";

pub struct MemoriesView {
    pub items: Vec<MemoryRecord>,
    pub selected: usize,
    /// Narrow screens: the selected memory fills the view.
    pub viewing: bool,
    /// `d` was pressed once on this memory; a second press deletes it.
    pub confirm_delete: Option<i64>,
    pub now: chrono::DateTime<chrono::Utc>,
    pub error: Option<String>,
    /// Waiting for the agent's answer.
    pub loading: bool,
}

impl MemoriesView {
    pub fn selected(&self) -> Option<&MemoryRecord> {
        self.items.get(self.selected)
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        // A delete waits for a second `d`; any other key keeps the memory.
        let confirming = self.confirm_delete.take();
        let selected = self.selected().map(|m| (m.id, m.pinned, m.global));
        match (key, selected) {
            (ViewKey::Action(OverlayAction::Next), _) => self.move_by(1),
            (ViewKey::Action(OverlayAction::Prev), _) => self.move_by(-1),
            (ViewKey::Page(by), _) => self.move_by(by),
            (ViewKey::Action(OverlayAction::Open), _) => self.viewing = !self.viewing,
            (ViewKey::Action(OverlayAction::TogglePin), Some((id, pinned, _))) => {
                return ViewOutcome::Ask(LibraryRequest::Pin { id, pinned: !pinned });
            }
            (ViewKey::Action(OverlayAction::ToggleGlobal), Some((id, _, global))) => {
                return ViewOutcome::Ask(LibraryRequest::SetGlobal { id, global: !global });
            }
            (ViewKey::Action(OverlayAction::Delete), Some((id, _, _))) if confirming == Some(id) => {
                return ViewOutcome::Ask(LibraryRequest::Forget(id.to_string()));
            }
            (ViewKey::Action(OverlayAction::Delete), Some((id, _, _))) => self.confirm_delete = Some(id),
            (
                ViewKey::Action(
                    OverlayAction::TogglePin
                    | OverlayAction::ToggleGlobal
                    | OverlayAction::Delete
                    | OverlayAction::Close
                    | OverlayAction::Search,
                ),
                _,
            )
            | (ViewKey::Other, _) => {}
        }
        ViewOutcome::Stay
    }

    pub fn move_by(&mut self, by: isize) {
        self.selected = moved(self.selected, by, self.items.len());
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        // Room for the list, or for a memory read in full beside it.
        let rows = if self.items.is_empty() { 8 } else { self.items.len().max(16) };
        let area = view_area(area, rows);
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Open), "view"),
                (Action::Overlay(OverlayAction::TogglePin), "pin/unpin"),
                (Action::Overlay(OverlayAction::ToggleGlobal), "global/project"),
                (Action::Overlay(OverlayAction::Delete), "delete"),
                (Action::Overlay(OverlayAction::Close), "close"),
            ],
            theme,
        );
        let title = format!("Memories ({})", self.items.len());
        let inner = frame(area, buf, theme, &title, foot);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        if let Some(e) = &self.error {
            buf.set_line(inner.x, inner.y, &Line::from(Span::styled(e.clone(), theme.notice_error)), inner.width);
            return;
        }
        if self.loading {
            let line = Line::from(Span::styled("reading the memories…", theme.dim));
            buf.set_line(inner.x, inner.y + 1, &line, inner.width);
            return;
        }
        if self.items.is_empty() {
            let text = vec![
                Line::default(),
                Line::from(Span::styled(EMPTY, theme.text)),
                Line::default(),
                Line::from(Span::styled(
                    "Memories are short notes (decisions, preferences, facts about this project) that cairn gives the model in every session. They are listed here to review, pin or delete; `cairn memories` lists them too.",
                    theme.dim,
                )),
            ];
            Paragraph::new(text).wrap(Wrap { trim: false }).render(inner, buf);
            return;
        }
        let wide = inner.width >= 90;
        let (list, detail) = if wide {
            let lw = inner.width * 2 / 5;
            (
                Rect::new(inner.x, inner.y, lw, inner.height),
                Some(Rect::new(inner.x + lw + 2, inner.y, inner.width - lw - 2, inner.height)),
            )
        } else if self.viewing {
            (Rect::default(), Some(inner))
        } else {
            (inner, None)
        };
        if list.width > 0 {
            for (row, i) in window(self.items.len(), self.selected, list.height as usize).enumerate() {
                let m = &self.items[i];
                let selected = i == self.selected;
                let base = if selected { theme.selected } else { theme.text };
                let pin = if m.pinned { "★" } else { "  " };
                let spans = vec![
                    Span::styled(if selected { "▸ " } else { "  " }, theme.accent.patch(base)),
                    Span::styled(format!("{pin} "), base),
                    Span::styled(format!("#{} ", m.id), theme.dim.patch(base)),
                    Span::styled(crate::conversation::strip_terminal_controls(&m.title), base),
                    Span::styled(
                        if m.quarantined.is_some() && !m.pinned { "  ⚠ quarantined" } else { "" },
                        theme.notice_warning.patch(base),
                    ),
                    Span::styled(
                        format!("  {}{}", m.kind, if m.global { " · global" } else { "" }),
                        theme.faint.patch(base),
                    ),
                ];
                let y = list.y + row as u16;
                if selected {
                    buf.set_style(Rect::new(list.x, y, list.width, 1), theme.selected);
                }
                buf.set_line(list.x, y, &Line::from(truncate_spans(spans, list.width as usize)), list.width);
            }
        }
        if let (Some(d), Some(m)) = (detail, self.selected()) {
            self.render_detail(m, d, buf, theme);
        }
    }

    fn render_detail(&self, m: &MemoryRecord, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let scope = if m.global { "global" } else { "this project" };
        let mut lines = vec![
            Line::from(Span::styled(crate::conversation::strip_terminal_controls(&m.title), theme.heading2)),
            Line::from(Span::styled(
                format!(
                    "#{} · {} · {} · {}{} · saved {}",
                    m.id,
                    m.kind,
                    m.class,
                    scope,
                    if m.pinned { " · pinned" } else { "" },
                    age(&m.created_at, self.now)
                ),
                theme.dim,
            )),
            Line::from(Span::styled(crate::agent::memory_origin(m), theme.dim)),
            Line::default(),
        ];
        if let Some(why) = &m.quarantined {
            let text = if m.pinned {
                format!("Pinned by you, so given to the model despite: {why}.")
            } else {
                format!("Quarantined ({why}): not given to the model; pin it (p) to let it in.")
            };
            lines.insert(3, Line::from(Span::styled(text, theme.notice_warning)));
        }
        // Escapes and hidden characters are shown as nothing, never sent to the terminal.
        let content = crate::conversation::strip_terminal_controls(&m.content);
        lines.extend(content.lines().map(|l| Line::from(Span::styled(l.to_string(), theme.text))));
        if self.confirm_delete == Some(m.id) {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "Press d again to delete this memory, any other key to keep it.",
                theme.notice_warning,
            )));
        }
        Paragraph::new(lines).wrap(Wrap { trim: false }).render(area, buf);
    }
}
