//! The inline presenter (`--inline`): no alternate screen. Rows that will not change any more are
//! written once into the terminal's own screen, above a live viewport at the bottom, and from
//! there belong to the terminal's scrollback (its wheel, its search, its selection); the
//! viewport — what still changes — is redrawn in place, as a diff of the cells that changed.
//!
//! Everything is relative to one spot: the cursor, parked between frames at the start of the
//! row after the last history row. A terminal that reflows on a resize moves the text and the
//! cursor with it, so that spot survives any resize where a remembered row number would not
//! (the root of Codex's and Claude Code's duplicated and lost lines after a resize). So:
//! - history rows are written at the parked cursor, each ended by CR LF; only line feeds at the
//!   bottom row scroll, and the whole screen — never a scroll region, which tmux and xterm.js
//!   do not keep in their history — so every row that leaves the top is kept by the terminal;
//! - room for the viewport is made the same way (line feeds, then back up);
//! - the viewport is drawn with autowrap off, so a frame written for a width the terminal has
//!   just left cannot spill into rows it does not own, and it ends by restoring the cursor
//!   saved at the parked spot (its moves down may have stopped at the bottom row of a screen
//!   that just shrank); history rows keep autowrap, so in that race their text wraps rather
//!   than being cut;
//! - after a resize the next frame clears from the parked cursor down (never above it: that is
//!   history, the terminal's to reflow) and draws the viewport anew at the new size;
//! - nothing here ever clears the screen or the scrollback.
//!
//! The caller frames each frame as one synchronized update (DEC 2026) sent in one write.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::ansi::Out;

pub struct Inline {
    width: u16,
    height: u16,
    /// Rows from the parked cursor down to the viewport's bottom edge: the rows the viewport
    /// may use, all on screen. The viewport is drawn at the bottom of them; rows above it (a
    /// taller viewport shrank: a dialog closed) are blank and fill with history first.
    below: u16,
    /// The viewport as it is on screen; `None` repaints it whole next frame.
    shown: Option<Buffer>,
    /// The next frame first clears from the parked cursor down: the size changed, or the
    /// screen was left to something else.
    clear_below: bool,
    /// ... and the rows below stay the viewport's (they are known to be on screen).
    keep_below: bool,
}

impl Inline {
    pub fn new(width: u16, height: u16) -> Inline {
        Inline {
            width: width.max(1),
            height: height.max(1),
            below: 0,
            shown: None,
            clear_below: true,
            keep_below: false,
        }
    }

    pub fn width(&self) -> u16 {
        self.width
    }

    pub fn height(&self) -> u16 {
        self.height
    }

    /// The terminal has a new size. Its text reflowed (the viewport's rows with it, in pieces);
    /// the next frame clears below the parked cursor and draws the viewport at the new size.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.width = width.max(1);
        self.height = height.max(1);
        self.forget();
    }

    /// The next frame draws the viewport whole (Ctrl+L).
    pub fn repaint(&mut self) {
        self.shown = None;
    }

    /// The screen was someone else's for a while (the editor, the alternate screen): nothing
    /// of the viewport is assumed to be there.
    pub fn forget(&mut self) {
        self.clear_below = true;
        self.keep_below = false;
        self.below = 0;
        self.shown = None;
    }

    /// Back from the alternate screen, the size unchanged: the main screen is as it was left
    /// (history, then blank rows where the viewport was cleared), so the viewport is drawn
    /// again where it stood.
    pub fn returned(&mut self) {
        self.shown = None;
        self.clear_below = true;
        self.keep_below = true;
    }

    /// Take the viewport off the screen now (before the alternate screen, the editor, exit):
    /// the cursor stays parked where history continues.
    pub fn clear(&mut self, out: &mut Out<'_>) {
        out.reset_style();
        out.raw("\r\x1b[J");
        self.below = 0;
        self.shown = None;
        self.clear_below = false;
    }

    /// One frame: `history` written above the viewport, for good, then `viewport` drawn below
    /// it. The cursor is parked at the start of the row after the history when it returns.
    pub fn frame(&mut self, out: &mut Out<'_>, history: &[Line<'static>], viewport: &Buffer) {
        if self.clear_below {
            let below = self.below;
            self.clear(out);
            if std::mem::take(&mut self.keep_below) {
                self.below = below;
            }
        }
        if !history.is_empty() {
            let mut row = Buffer::empty(Rect::new(0, 0, self.width, 1));
            for line in history {
                row.reset();
                row.set_line(0, 0, line, self.width);
                out.raw("\r\x1b[2K");
                out.row(&row.content);
                out.reset_style();
                out.raw("\r\n");
            }
            let written = u16::try_from(history.len()).unwrap_or(u16::MAX);
            self.below = self.below.saturating_sub(written);
            self.shown = None;
        }
        let h = viewport.area.height.min(self.height);
        if h > self.below {
            // Line feeds from the parked cursor: where they reach the bottom row the whole
            // screen scrolls, and what leaves its top (history, all of it) is the terminal's.
            for _ in 1..h {
                out.raw("\n");
            }
            out.up(h - 1);
            self.below = h;
            self.shown = None;
        }
        let top = self.below - h;
        // The parked spot is saved and restored rather than counted back to: a frame written
        // for a size the terminal has just left may have its moves down stopped at the bottom
        // row, and counting back up would then land above the spot, in the history.
        out.raw("\x1b7\x1b[?7l");
        let mut cursor = Cursor { row: 0 };
        match &self.shown {
            Some(prev) if prev.area == viewport.area => {
                let mut at: Option<(u16, u16)> = None;
                for (x, y, cell) in prev.diff(viewport) {
                    if y >= h {
                        continue;
                    }
                    if at != Some((x, y)) {
                        cursor.go(out, top + y, x);
                    }
                    out.cell(cell);
                    let w = super::wrap::width(cell.symbol()).max(1) as u16;
                    at = Some((x + w, y));
                }
            }
            Some(_) | None => {
                out.reset_style();
                out.raw("\r\x1b[J");
                let w = usize::from(viewport.area.width);
                for y in 0..h {
                    let cells = &viewport.content[usize::from(y) * w..usize::from(y + 1) * w];
                    cursor.go(out, top + y, 0);
                    out.row(cells);
                }
            }
        }
        out.reset_style();
        out.raw("\x1b8\x1b[?7h");
        self.shown = Some(viewport.clone());
    }
}

/// Where the cursor is, in rows below the parked spot.
struct Cursor {
    row: u16,
}

impl Cursor {
    fn go(&mut self, out: &mut Out<'_>, row: u16, col: u16) {
        if row > self.row {
            out.down(row - self.row);
        } else {
            out.up(self.row - row);
        }
        self.row = row;
        out.column(col);
    }
}

#[cfg(test)]
#[path = "inline_tests.rs"]
mod tests;
