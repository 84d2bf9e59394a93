//! `/model`: the models to switch to — those the provider lists and the catalog's — with their
//! window and price; Enter switches.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, footer, frame, moved, view_area, window};
use crate::agent::ModelList;
use crate::conversation::format_tokens;
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::truncate_spans;

#[derive(Default)]
pub struct ModelsView {
    /// `None` until the agent answers.
    pub list: Option<ModelList>,
    pub selected: usize,
}

impl ModelsView {
    /// The agent's answer: the current model is selected.
    pub fn fill(&mut self, list: ModelList) {
        self.selected = list.models.iter().position(|m| m.name == list.current).unwrap_or(0);
        self.list = Some(list);
    }

    fn len(&self) -> usize {
        self.list.as_ref().map_or(0, |l| l.models.len())
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        match key {
            ViewKey::Action(OverlayAction::Next) => self.move_by(1),
            ViewKey::Action(OverlayAction::Prev) => self.move_by(-1),
            ViewKey::Page(by) => self.move_by(by),
            ViewKey::Action(OverlayAction::Open) => {
                let Some(list) = &self.list else { return ViewOutcome::Stay };
                return match list.models.get(self.selected) {
                    Some(m) if m.name == list.current => ViewOutcome::CloseSaying("that is the model in use"),
                    Some(m) => ViewOutcome::SetModel(m.name.clone()),
                    None => ViewOutcome::Close,
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
        self.selected = moved(self.selected, by, self.len());
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let local_line = self.list.as_ref().map_or(0, |l| usize::from(l.local_server.is_some()));
        let area = view_area(area, self.len().max(3) + 2 + local_line);
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Open), "switch"),
                (Action::Overlay(OverlayAction::Next), "select"),
                (Action::Overlay(OverlayAction::Close), "close"),
            ],
            theme,
        );
        let inner = frame(area, buf, theme, "Models", foot);
        let w = inner.width.saturating_sub(2) as usize;
        let x = inner.x + 1;
        let Some(list) = &self.list else {
            let line = Line::from(Span::styled("asking the provider for its models…", theme.dim));
            buf.set_line(x, inner.y + 1, &line, w as u16);
            return;
        };
        let mut y = inner.y;
        if let Some(s) = &list.local_server {
            let window = s.window.map_or("window not reported".into(), |w| format!("{} window", format_tokens(w)));
            let slots = s.slots.map(|n| format!(" · {n} slots")).unwrap_or_default();
            let line = Line::from(Span::styled(
                format!("llama-server {} · {} · {window}{slots}", s.base_url, s.model),
                theme.dim,
            ));
            buf.set_line(x, y, &Line::from(truncate_spans(line.spans, w)), w as u16);
            y += 1;
        }
        if let Some(e) = &list.provider_error {
            let line = Line::from(Span::styled(format!("the provider's list is missing: {e}"), theme.notice_warning));
            buf.set_line(x, y, &Line::from(truncate_spans(line.spans, w)), w as u16);
            y += 1;
        }
        let name_w = list.models.iter().map(|m| m.name.chars().count()).max().unwrap_or(10).min(40);
        let rows = (inner.y + inner.height).saturating_sub(y) as usize;
        for i in window(list.models.len(), self.selected, rows.max(1)) {
            let m = &list.models[i];
            let selected = i == self.selected;
            let base = if selected { theme.selected } else { theme.text };
            let window = if m.window_assumed {
                format!("{:>5} window?", format_tokens(m.window))
            } else {
                format!("{:>5} window ", format_tokens(m.window))
            };
            let price = match &m.prices {
                Some(p) => format!("${} in · ${} out per Mtok", trim(p.input), trim(p.output)),
                None => "no price (tokens only)".to_string(),
            };
            let source = match (m.listed, m.name == list.current) {
                (_, true) => "in use",
                (true, false) => "listed by the provider",
                (false, false) => "catalog",
            };
            let spans = vec![
                Span::styled(if selected { "▸ " } else { "  " }, theme.accent.patch(base)),
                Span::styled(format!("{:<name_w$}  ", m.name), theme.title.patch(base)),
                Span::styled(format!("{window}  "), theme.dim.patch(base)),
                Span::styled(format!("{price:<32}  "), theme.dim.patch(base)),
                Span::styled(source, theme.faint.patch(base)),
            ];
            if selected {
                buf.set_style(Rect::new(x, y, w as u16, 1), theme.selected);
            }
            buf.set_line(x, y, &Line::from(truncate_spans(spans, w)), w as u16);
            y += 1;
            if y >= inner.y + inner.height {
                break;
            }
        }
    }
}

/// `3`, `0.25`, `1.1`: a price without trailing zeros.
fn trim(price: f64) -> String {
    let s = format!("{price:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
