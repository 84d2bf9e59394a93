//! The transcript: its cells, their per-width line cache, and the scroll position. Drawing is
//! virtualised: only the cells that reach the viewport are laid out (a cached layout is reused
//! until the cell or the width changes), so a frame costs the same at 20 messages or 20,000.
//!
//! The scroll position is either the live tail, or an anchor (a cell and a row in it) at the
//! top of the viewport, which stays put while new output arrives below.
//!
//! In inline mode the transcript also knows how much of it the terminal's scrollback already
//! holds ([`Committed`]): those rows were written once and are never written again.

use std::cell::RefCell;
use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::cells::Cell;
use super::theme::Theme;

type Lines = Rc<Vec<Line<'static>>>;

struct Entry {
    cell: Cell,
    /// A blank row before the cell.
    gap: bool,
    /// Lines for the width they were laid out at.
    cache: RefCell<Option<(u16, Lines)>>,
}

impl Entry {
    fn height(&self, width: u16, theme: &Theme) -> usize {
        self.lines(width, theme).len() + usize::from(self.gap)
    }

    fn lines(&self, width: u16, theme: &Theme) -> Lines {
        if let Some((w, lines)) = &*self.cache.borrow()
            && *w == width
        {
            return lines.clone();
        }
        let lines = Rc::new(self.cell.lines(width, theme));
        *self.cache.borrow_mut() = Some((width, lines.clone()));
        lines
    }

    /// Row `i` of the cell including its gap row.
    fn row(&self, i: usize, width: u16, theme: &Theme) -> Option<Line<'static>> {
        if self.gap {
            if i == 0 {
                return Some(Line::default());
            }
            self.lines(width, theme).get(i - 1).cloned()
        } else {
            self.lines(width, theme).get(i).cloned()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scroll {
    /// Follow the newest output.
    Tail,
    /// The top row of the viewport is row `row` of cell `cell`.
    Anchored { cell: usize, row: usize },
}

/// What of the transcript has been written to the terminal's scrollback (inline mode): the
/// first `cells` cells whole, and of the next one (an answer still streaming) the rows of its
/// first `bytes` bytes of text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    pub cells: usize,
    pub bytes: usize,
}

pub struct Transcript {
    entries: Vec<Entry>,
    committed: Committed,
    /// Rows of the committed part of a streaming answer, as (cell, width, bytes, rows).
    prefix_rows: std::cell::Cell<Option<(usize, u16, usize, usize)>>,
    scroll: Scroll,
    /// Size of the last draw, so keys can scroll by a page.
    viewport: std::cell::Cell<(u16, u16)>,
    /// Which cell each drawn row belongs to (for clicks), from the last draw.
    rows: RefCell<Vec<(u16, usize)>>,
    /// A row to show highlighted: the search match on screen (a cell and a row in it).
    highlight: Option<(usize, usize)>,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript::new()
    }
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript {
            entries: Vec::new(),
            committed: Committed::default(),
            prefix_rows: std::cell::Cell::new(None),
            scroll: Scroll::Tail,
            viewport: std::cell::Cell::new((80, 20)),
            rows: RefCell::new(Vec::new()),
            highlight: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.committed = Committed::default();
        self.prefix_rows.set(None);
        self.scroll = Scroll::Tail;
        self.highlight = None;
    }

    /// Empties the transcript, handing back its cells.
    pub fn take(&mut self) -> Vec<Cell> {
        let cells = std::mem::take(&mut self.entries).into_iter().map(|e| e.cell).collect();
        self.clear();
        cells
    }

    /// Every row that contains `query` (ignoring case), top to bottom, as (cell, row); a cell
    /// whose text matches but no single row does (the words wrap apart, the output is
    /// folded) is found at its first row. Only matching cells are laid out.
    pub fn find(&self, query: &str, theme: &Theme) -> Vec<(usize, usize)> {
        let needle = query.trim().to_lowercase();
        if needle.is_empty() {
            return Vec::new();
        }
        let w = self.viewport.get().0;
        let mut hits = Vec::new();
        for (i, entry) in self.entries.iter().enumerate() {
            if !entry.cell.search_text().to_lowercase().contains(&needle) {
                continue;
            }
            let gap = usize::from(entry.gap);
            let before = hits.len();
            for (row, line) in entry.lines(w, theme).iter().enumerate() {
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                if text.to_lowercase().contains(&needle) {
                    hits.push((i, row + gap));
                }
            }
            if hits.len() == before {
                hits.push((i, gap));
            }
        }
        hits
    }

    /// Scroll so the row (a cell and a row in it) is on screen, a third of the way down, and
    /// highlight it.
    pub fn reveal(&mut self, cell: usize, row: usize, theme: &Theme) {
        if cell >= self.entries.len() {
            return;
        }
        self.highlight = Some((cell, row));
        self.scroll = Scroll::Anchored { cell, row };
        let third = (self.viewport.get().1 as usize) / 3;
        self.scroll_up(third, theme);
    }

    /// No row highlighted any more.
    pub fn clear_highlight(&mut self) {
        self.highlight = None;
    }

    /// The cells with a row on screen in the last frame, top to bottom.
    pub fn cells_on_screen(&self) -> Vec<usize> {
        let mut cells: Vec<usize> = self.rows.borrow().iter().map(|(_, c)| *c).collect();
        cells.dedup();
        cells
    }

    pub fn push(&mut self, cell: Cell) {
        let gap = self.entries.last().is_some_and(|prev| cell.gap_after(&prev.cell));
        self.entries.push(Entry { cell, gap, cache: RefCell::new(None) });
    }

    pub fn cells(&self) -> impl DoubleEndedIterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    pub fn get(&self, index: usize) -> Option<&Cell> {
        self.entries.get(index).map(|e| &e.cell)
    }

    /// Change a cell; its layout is recomputed at the next draw.
    pub fn update(&mut self, index: usize, f: impl FnOnce(&mut Cell)) {
        if let Some(entry) = self.entries.get_mut(index) {
            f(&mut entry.cell);
            *entry.cache.borrow_mut() = None;
        }
        // Whether the next cell keeps its distance can change with this one (a call's diff).
        if index + 1 < self.entries.len() {
            let gap = self.entries[index + 1].cell.gap_after(&self.entries[index].cell);
            self.entries[index + 1].gap = gap;
        }
    }

    /// Index of the last cell that matches.
    pub fn rposition(&self, f: impl Fn(&Cell) -> bool) -> Option<usize> {
        self.entries.iter().rposition(|e| f(&e.cell))
    }

    pub fn remove(&mut self, index: usize) {
        if index >= self.entries.len() {
            return;
        }
        // Rows already in the scrollback stay there; the watermark keeps pointing at the
        // first cell that is not.
        if index < self.committed.cells {
            self.committed.cells -= 1;
        } else if index == self.committed.cells {
            self.committed.bytes = 0;
        }
        self.prefix_rows.set(None);
        self.entries.remove(index);
        if index < self.entries.len() {
            let gap = index > 0 && self.entries[index].cell.gap_after(&self.entries[index - 1].cell);
            self.entries[index].gap = gap;
        }
        if let Scroll::Anchored { cell, .. } = self.scroll
            && cell >= self.entries.len()
        {
            self.scroll = Scroll::Tail;
        }
    }

    /// How much of the transcript the terminal's scrollback holds (inline mode).
    pub fn committed(&self) -> Committed {
        self.committed
    }

    /// The first uncommitted cell is now in the scrollback whole.
    pub fn commit_cell(&mut self) {
        self.committed = Committed { cells: (self.committed.cells + 1).min(self.entries.len()), bytes: 0 };
    }

    /// The rows of the first `bytes` bytes of the first uncommitted cell (an answer still
    /// streaming) are in the scrollback.
    pub fn commit_bytes(&mut self, bytes: usize) {
        self.committed.bytes = bytes;
    }

    /// Every cell counts as written (a session reloaded after a rewind: the scrollback already
    /// shows it, and more).
    pub fn commit_all(&mut self) {
        self.committed = Committed { cells: self.entries.len(), bytes: 0 };
    }

    /// Cell `index` laid out for `width`, its gap row first: what the transcript draws of it.
    pub fn entry_rows(&self, index: usize, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let Some(entry) = self.entries.get(index) else { return Vec::new() };
        let mut rows = Vec::with_capacity(entry.height(width, theme));
        if entry.gap {
            rows.push(Line::default());
        }
        rows.extend(entry.lines(width, theme).iter().cloned());
        rows
    }

    /// Rows (gap included) of the first `bytes` of cell `index` at `width`, if remembered.
    pub fn remembered_prefix_rows(&self, index: usize, width: u16, bytes: usize) -> Option<usize> {
        self.prefix_rows.get().filter(|&(i, w, b, _)| (i, w, b) == (index, width, bytes)).map(|(.., rows)| rows)
    }

    pub fn remember_prefix_rows(&self, index: usize, width: u16, bytes: usize, rows: usize) {
        self.prefix_rows.set(Some((index, width, bytes, rows)));
    }

    /// Whether cell `index` has a gap row before it.
    pub fn has_gap(&self, index: usize) -> bool {
        self.entries.get(index).is_some_and(|e| e.gap)
    }

    pub fn is_following(&self) -> bool {
        self.scroll == Scroll::Tail
    }

    pub fn page(&self) -> usize {
        (self.viewport.get().1 as usize).saturating_sub(2).max(1)
    }

    /// The anchor of the top row when following the tail.
    fn tail_anchor(&self, theme: &Theme) -> (usize, usize) {
        let (w, h) = self.viewport.get();
        let mut need = h as usize;
        for (i, e) in self.entries.iter().enumerate().rev() {
            let height = e.height(w, theme);
            if height >= need {
                return (i, height - need);
            }
            need -= height;
        }
        (0, 0)
    }

    pub fn scroll_up(&mut self, rows: usize, theme: &Theme) {
        if self.entries.is_empty() {
            return;
        }
        let w = self.viewport.get().0;
        let (mut cell, mut row) = match self.scroll {
            Scroll::Tail => self.tail_anchor(theme),
            Scroll::Anchored { cell, row } => (cell, row),
        };
        let mut left = rows;
        while left > 0 {
            if row >= left {
                row -= left;
                left = 0;
            } else if cell == 0 {
                row = 0;
                left = 0;
            } else {
                left -= row + 1;
                cell -= 1;
                row = self.entries[cell].height(w, theme).saturating_sub(1);
            }
        }
        self.scroll = Scroll::Anchored { cell, row };
        self.settle(theme);
    }

    pub fn scroll_down(&mut self, rows: usize, theme: &Theme) {
        let Scroll::Anchored { mut cell, mut row } = self.scroll else { return };
        let w = self.viewport.get().0;
        row += rows;
        while cell < self.entries.len() {
            let h = self.entries[cell].height(w, theme);
            if row < h {
                break;
            }
            row -= h;
            cell += 1;
        }
        if cell >= self.entries.len() {
            self.scroll = Scroll::Tail;
            return;
        }
        self.scroll = Scroll::Anchored { cell, row };
        self.settle(theme);
    }

    pub fn scroll_to_top(&mut self, theme: &Theme) {
        if !self.entries.is_empty() {
            self.scroll = Scroll::Anchored { cell: 0, row: 0 };
            self.settle(theme);
        }
    }

    pub fn follow(&mut self) {
        self.scroll = Scroll::Tail;
    }

    /// Back to the tail once everything below the anchor fits on screen.
    fn settle(&mut self, theme: &Theme) {
        if let Scroll::Anchored { cell, row } = self.scroll {
            let (tail_cell, tail_row) = self.tail_anchor(theme);
            if (cell, row) >= (tail_cell, tail_row) {
                self.scroll = Scroll::Tail;
            }
        }
    }

    /// The cell drawn at screen row `y` in the last frame.
    pub fn cell_at_row(&self, y: u16) -> Option<usize> {
        self.rows.borrow().iter().find(|(row, _)| *row == y).map(|(_, cell)| *cell)
    }

    pub fn view<'a>(&'a self, theme: &'a Theme) -> TranscriptView<'a> {
        TranscriptView { transcript: self, theme }
    }
}

/// The per-frame widget.
pub struct TranscriptView<'a> {
    transcript: &'a Transcript,
    theme: &'a Theme,
}

impl Widget for TranscriptView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.transcript;
        t.viewport.set((area.width, area.height));
        let mut drawn = t.rows.borrow_mut();
        drawn.clear();
        if area.height == 0 || t.entries.is_empty() {
            return;
        }
        let (start_cell, start_row) = match t.scroll {
            Scroll::Tail => t.tail_anchor(self.theme),
            Scroll::Anchored { cell, row } => (cell, row),
        };
        let mut y = area.y;
        let bottom = area.y + area.height;
        let mut cell = start_cell;
        let mut row = start_row;
        while y < bottom && cell < t.entries.len() {
            let entry = &t.entries[cell];
            match entry.row(row, area.width, self.theme) {
                Some(line) => {
                    let line = if t.highlight == Some((cell, row)) {
                        line.patch_style(
                            ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::REVERSED),
                        )
                    } else {
                        line
                    };
                    buf.set_line(area.x, y, &line, area.width);
                    drawn.push((y, cell));
                    y += 1;
                    row += 1;
                }
                None => {
                    cell += 1;
                    row = 0;
                }
            }
        }
        // Scrolled back with more below: say so on the last row.
        if t.scroll != Scroll::Tail && (cell < t.entries.len()) {
            let hint =
                Line::from(vec![Span::styled(" ↓ more below · End returns to the live tail ", self.theme.popup_hint)]);
            let w = hint.width() as u16;
            let x = area.x + area.width.saturating_sub(w);
            buf.set_line(x, bottom - 1, &hint, w.min(area.width));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::cells::{NoticeCell, NoticeKind, UserCell};

    #[test]
    fn a_call_showing_its_diff_is_set_apart_from_the_next_call() {
        use crate::tui::cells::{ToolCell, ToolStatus};
        let theme = Theme::fallback(true);
        let mut t = Transcript::new();
        t.push(Cell::Tool(ToolCell::new("c1", "file_edit")));
        t.push(Cell::Tool(ToolCell::new("c2", "bash")));
        // The diff arrives when the first call finishes, after the second was shown.
        t.update(0, |c| {
            if let Cell::Tool(tool) = c {
                tool.diff = Some("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into());
                tool.status = ToolStatus::Done { is_error: false, exit_code: None, duration: Default::default() };
            }
        });
        let rows = draw(&t, &theme, 60, 8);
        let next = rows.iter().position(|r| r.contains("bash")).expect("the second call");
        assert!(rows[next - 1].is_empty(), "no blank row before the next call: {rows:#?}");
        assert!(rows[next - 2].contains("1 + new"), "{rows:#?}");
    }

    fn filled(n: usize) -> Transcript {
        let mut t = Transcript::new();
        for i in 0..n {
            t.push(Cell::User(UserCell::new(format!("message {i}"))));
        }
        t
    }

    fn draw(t: &Transcript, theme: &Theme, w: u16, h: u16) -> Vec<String> {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        t.view(theme).render(buf.area, &mut buf);
        (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>().trim_end().to_string()).collect()
    }

    #[test]
    fn the_tail_shows_the_newest_cells() {
        let theme = Theme::fallback(true);
        let t = filled(100);
        let rows = draw(&t, &theme, 30, 5);
        assert_eq!(rows, ["› message 97", "", "› message 98", "", "› message 99"]);
    }

    #[test]
    fn scrolling_up_anchors_and_new_output_does_not_move_the_view() {
        let theme = Theme::fallback(true);
        let mut t = filled(100);
        draw(&t, &theme, 30, 5);
        t.scroll_up(4, &theme);
        let before = draw(&t, &theme, 30, 5);
        assert_eq!(before[0], "› message 95");
        t.push(Cell::Notice(NoticeCell::new(NoticeKind::Info, "new")));
        assert_eq!(draw(&t, &theme, 30, 5)[..4], before[..4]);
        assert!(draw(&t, &theme, 30, 5)[4].contains("more below"));
        t.scroll_down(100, &theme);
        assert!(t.is_following());
    }

    #[test]
    fn scrolling_stops_at_the_top() {
        let theme = Theme::fallback(true);
        let mut t = filled(3);
        draw(&t, &theme, 30, 2);
        t.scroll_up(1_000, &theme);
        assert_eq!(t.scroll, Scroll::Anchored { cell: 0, row: 0 });
        assert_eq!(draw(&t, &theme, 30, 2)[0], "› message 0");
    }

    #[test]
    fn only_visible_cells_are_laid_out() {
        let theme = Theme::fallback(true);
        let t = filled(10_000);
        draw(&t, &theme, 40, 10);
        let laid_out = t.entries.iter().filter(|e| e.cache.borrow().is_some()).count();
        assert!(laid_out <= 6, "{laid_out} cells laid out for a 10-row view");
    }

    #[test]
    fn search_finds_rows_and_reveals_them_highlighted() {
        let theme = Theme::fallback(true);
        let mut t = filled(100);
        draw(&t, &theme, 30, 6);
        let hits = t.find("MESSAGE 4", &theme);
        let cells: Vec<usize> = hits.iter().map(|h| h.0).collect();
        assert_eq!(cells[..2], [4, 40], "{hits:?}");
        assert_eq!(hits[1], (40, 1), "the row after the gap");
        t.reveal(40, 1, &theme);
        let rows = draw(&t, &theme, 30, 6);
        assert!(rows.iter().any(|r| r == "› message 40"), "{rows:?}");
        assert!(!t.is_following());
        assert!(t.find("  ", &theme).is_empty());
    }

    #[test]
    fn clicks_find_their_cell() {
        let theme = Theme::fallback(true);
        let t = filled(3);
        draw(&t, &theme, 30, 10);
        assert_eq!(t.cell_at_row(0), Some(0));
        assert_eq!(t.cell_at_row(4), Some(2));
    }
}
