//! A search bar: the query typed into one line, the matches found in what is searched (the
//! transcript, or a tool's output in its view), and the one on screen. Enter or ↑ goes to an
//! older match, ↓ to a newer one; both wrap around.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::keys::{self, Action, SearchAction};
use super::theme::Theme;
use super::wrap::truncate_spans;

/// A match: the row it is on, as the searched view counts rows (a transcript cell and a row in
/// it; a view's row and 0).
pub type Hit = (usize, usize);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchBar {
    pub query: String,
    /// Every match, top to bottom.
    pub hits: Vec<Hit>,
    /// The match on screen.
    pub current: Option<usize>,
}

impl SearchBar {
    /// New matches for a changed query: the newest (bottom-most) is shown first.
    pub fn found(&mut self, hits: Vec<Hit>) {
        self.current = hits.len().checked_sub(1);
        self.hits = hits;
    }

    /// The match shown.
    pub fn hit(&self) -> Option<Hit> {
        self.current.and_then(|i| self.hits.get(i).copied())
    }

    /// An older (higher up) or newer match, wrapping around.
    pub fn step(&mut self, older: bool) -> Option<Hit> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let i = match (self.current, older) {
            (Some(i), true) => (i + n - 1) % n,
            (Some(i), false) => (i + 1) % n,
            (None, true) => n - 1,
            (None, false) => 0,
        };
        self.current = Some(i);
        self.hit()
    }

    /// One line: ` / query   3 of 12 · Enter older · ↓ newer · Esc close `.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        buf.set_style(area, theme.popup);
        let count = match (self.current, self.hits.len(), self.query.is_empty()) {
            (_, _, true) => "type to search".to_string(),
            (_, 0, false) => "no match".to_string(),
            (Some(i), n, false) => format!("{} of {n}", i + 1),
            (None, n, false) => format!("{n} matches"),
        };
        let hint = |a: SearchAction| keys::hint(Action::Search(a));
        let spans = vec![
            Span::styled(" / ", theme.key),
            Span::styled(self.query.clone(), theme.text),
            Span::styled("▏", theme.composer_cursor),
            Span::styled(format!("  {count}"), theme.dim),
            Span::styled(
                format!(
                    " · {} older · {} newer · {} close",
                    hint(SearchAction::Older),
                    hint(SearchAction::Newer),
                    hint(SearchAction::Close)
                ),
                theme.faint,
            ),
        ];
        let line = Line::from(truncate_spans(spans, area.width as usize));
        buf.set_line(area.x, area.y, &line, area.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_match_comes_first_and_steps_wrap_around() {
        let mut bar = SearchBar { query: "x".into(), ..SearchBar::default() };
        bar.found(vec![(1, 0), (4, 2), (9, 0)]);
        assert_eq!(bar.hit(), Some((9, 0)));
        assert_eq!(bar.step(true), Some((4, 2)));
        assert_eq!(bar.step(true), Some((1, 0)));
        assert_eq!(bar.step(true), Some((9, 0)), "wraps to the newest");
        assert_eq!(bar.step(false), Some((1, 0)), "and back");
        bar.found(Vec::new());
        assert_eq!((bar.hit(), bar.step(true)), (None, None));
    }
}
