//! A scrollable text: a tool call's whole output (Alt+O) or the `/usage` report. `/` searches
//! it; matches are highlighted and Enter and ↓ jump between them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, footer, frame};
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::search::SearchBar;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

#[derive(Default)]
pub struct TextView {
    pub title: String,
    /// The call whose output this is (`None`: the usage report).
    pub call_id: Option<String>,
    /// `None` while the agent reads it.
    pub text: Option<Result<String, String>>,
    /// The first row shown.
    pub scroll: usize,
    pub search: Option<SearchBar>,
    /// Rows of the last draw: its width, and how many rows fit (for paging and search).
    last: std::cell::Cell<(u16, usize)>,
}

impl TextView {
    pub fn loading(title: impl Into<String>) -> TextView {
        TextView { title: title.into(), ..TextView::default() }
    }

    /// The view of a call's whole output, waiting for it.
    pub fn output(title: impl Into<String>, call_id: String) -> TextView {
        TextView { title: title.into(), call_id: Some(call_id), ..TextView::default() }
    }

    /// The text's rows at `width`, wrapped as it came.
    fn rows(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let Some(Ok(text)) = &self.text else { return Vec::new() };
        let paras: Vec<Para> = text
            .lines()
            .map(|l| Para {
                spans: vec![Span::styled(l.replace('\t', "    "), theme.text)],
                hard: true,
                ..Para::default()
            })
            .collect();
        wrap_paras(&paras, width)
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        match key {
            ViewKey::Action(OverlayAction::Next) => self.scroll_by(1),
            ViewKey::Action(OverlayAction::Prev) => self.scroll_by(-1),
            ViewKey::Page(by) => self.scroll_by(by.signum() * self.last.get().1.max(1) as isize),
            ViewKey::Action(OverlayAction::Search) => self.search = Some(SearchBar::default()),
            ViewKey::Action(
                OverlayAction::Close
                | OverlayAction::Open
                | OverlayAction::TogglePin
                | OverlayAction::ToggleGlobal
                | OverlayAction::Delete,
            )
            | ViewKey::Other => {}
        }
        ViewOutcome::Stay
    }

    pub fn scroll_by(&mut self, by: isize) {
        self.scroll = self.scroll.saturating_add_signed(by);
    }

    /// The query changed: find it and show the newest match.
    pub fn search_changed(&mut self, theme: &Theme) {
        let width = self.last.get().0.max(10);
        let rows = self.rows(width, theme);
        let Some(bar) = &mut self.search else { return };
        let query = bar.query.to_lowercase();
        let hits = rows
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                !query.is_empty()
                    && l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().to_lowercase().contains(&query)
            })
            .map(|(i, _)| (i, 0))
            .collect();
        bar.found(hits);
        self.show_hit();
    }

    /// Scroll to the search's current match, a third of the way down.
    pub fn show_hit(&mut self) {
        if let Some((row, _)) = self.search.as_ref().and_then(|s| s.hit()) {
            self.scroll = row.saturating_sub(self.last.get().1 / 3);
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let w = if area.width > 100 { area.width * 9 / 10 } else { area.width.saturating_sub(2) };
        let h = area.height.saturating_sub(2).max(6).min(area.height);
        let area = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Next), "scroll"),
                (Action::Overlay(OverlayAction::Search), "search"),
                (Action::Overlay(OverlayAction::Close), "close"),
            ],
            theme,
        );
        let inner = frame(area, buf, theme, &self.title, foot);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        let text_h = inner.height.saturating_sub(u16::from(self.search.is_some())) as usize;
        self.last.set((inner.width, text_h));
        let rows = match &self.text {
            None => vec![Line::from(Span::styled("reading…", theme.dim))],
            Some(Err(e)) => vec![Line::from(Span::styled(e.clone(), theme.notice_error))],
            Some(Ok(_)) => self.rows(inner.width, theme),
        };
        let start = self.scroll.min(rows.len().saturating_sub(text_h));
        let hit = self.search.as_ref().and_then(|s| s.hit()).map(|h| h.0);
        for (y, (index, line)) in (inner.y..).zip(rows.iter().enumerate().skip(start).take(text_h)) {
            let line = if Some(index) == hit {
                line.clone().patch_style(Style::default().add_modifier(Modifier::REVERSED))
            } else {
                line.clone()
            };
            buf.set_line(inner.x, y, &line, inner.width);
        }
        if rows.len() > text_h {
            let info = format!(" {}–{} of {} rows ", start + 1, (start + text_h).min(rows.len()), rows.len());
            let iw = info.chars().count() as u16;
            buf.set_line(
                area.x + area.width.saturating_sub(iw + 2),
                area.y,
                &Line::from(Span::styled(info, theme.faint)),
                iw,
            );
        }
        if let Some(bar) = &self.search {
            bar.render(Rect::new(inner.x, inner.y + text_h as u16, inner.width, 1), buf, theme);
        }
    }
}
