//! Cells to escape sequences for the inline presenter: styles (SGR), rows of cells, and cursor
//! moves *relative* to where the cursor is. The inline viewport never knows its row on the
//! screen — a terminal that reflows on a resize moves the text, and the cursor with it, where no
//! absolute row can follow — so every move here is up, down, or to a column.

use std::io::Write;

use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier};

use super::colour::ColourDepth;

const DEFAULT: (Color, Color, Modifier) = (Color::Reset, Color::Reset, Modifier::empty());

/// Bytes of one frame, built up before they leave in one write.
pub struct Out<'a> {
    pub bytes: &'a mut Vec<u8>,
    pub depth: ColourDepth,
    /// The style last written, so a run of cells alike costs one SGR (every write ends back
    /// at the default).
    style: (Color, Color, Modifier),
}

impl<'a> Out<'a> {
    pub fn new(bytes: &'a mut Vec<u8>, depth: ColourDepth) -> Out<'a> {
        Out { bytes, depth, style: DEFAULT }
    }

    pub fn raw(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Up `n` rows (none for 0: `CSI 0 A` would move one).
    pub fn up(&mut self, n: u16) {
        if n > 0 {
            let _ = write!(self.bytes, "\x1b[{n}A");
        }
    }

    /// Down `n` rows without scrolling (the rows must be there).
    pub fn down(&mut self, n: u16) {
        if n > 0 {
            let _ = write!(self.bytes, "\x1b[{n}B");
        }
    }

    /// To column `x` (0-based) of the cursor's row.
    pub fn column(&mut self, x: u16) {
        let _ = write!(self.bytes, "\x1b[{}G", x + 1);
    }

    /// Back to the terminal's default style.
    pub fn reset_style(&mut self) {
        if self.style != DEFAULT {
            self.raw("\x1b[0m");
            self.style = DEFAULT;
        }
    }

    fn set_style(&mut self, fg: Color, bg: Color, modifier: Modifier) {
        let (fg, bg) = (self.depth.map(fg), self.depth.map(bg));
        if self.style == (fg, bg, modifier) {
            return;
        }
        if (fg, bg, modifier) == DEFAULT {
            self.raw("\x1b[0m");
            self.style = DEFAULT;
            return;
        }
        let mut sgr = String::from("\x1b[0");
        for (m, code) in [
            (Modifier::BOLD, "1"),
            (Modifier::DIM, "2"),
            (Modifier::ITALIC, "3"),
            (Modifier::UNDERLINED, "4"),
            (Modifier::SLOW_BLINK, "5"),
            (Modifier::RAPID_BLINK, "6"),
            (Modifier::REVERSED, "7"),
            (Modifier::HIDDEN, "8"),
            (Modifier::CROSSED_OUT, "9"),
        ] {
            if modifier.contains(m) {
                sgr.push(';');
                sgr.push_str(code);
            }
        }
        colour(&mut sgr, fg, false);
        colour(&mut sgr, bg, true);
        sgr.push('m');
        self.raw(&sgr);
        self.style = (fg, bg, modifier);
    }

    /// One cell: its style, then its symbol.
    pub fn cell(&mut self, cell: &Cell) {
        self.set_style(cell.fg, cell.bg, cell.modifier);
        self.raw(cell.symbol());
    }

    /// A row of cells from the cursor on, without its trailing blanks: plain blanks are left
    /// out (so text copied from the scrollback has no trailing spaces), and a run of blanks
    /// on a background (a code block's band) is drawn by erasing to the end of the row in
    /// that background. Returns the columns written.
    pub fn row(&mut self, cells: &[Cell]) -> u16 {
        let blank = |c: &Cell| c.symbol() == " " && c.modifier.is_empty();
        let mut end = cells.len();
        while end > 0 && blank(&cells[end - 1]) && cells[end - 1].bg == Color::Reset {
            end -= 1;
        }
        // A trailing run of coloured blanks of one background, filled by erasing instead.
        let mut fill_from = end;
        while fill_from > 0 && blank(&cells[fill_from - 1]) && cells[fill_from - 1].bg == cells[end.max(1) - 1].bg {
            fill_from -= 1;
        }
        let fill = (end > 0 && fill_from < end && end == cells.len() && cells[end - 1].bg != Color::Reset)
            .then(|| cells[end - 1].bg);
        let stop = if fill.is_some() { fill_from } else { end };
        let mut x = 0u16;
        let mut i = 0;
        while i < stop {
            let c = &cells[i];
            self.cell(c);
            let w = super::wrap::width(c.symbol()).max(1);
            x += w as u16;
            i += w;
        }
        if let Some(bg) = fill {
            self.set_style(Color::Reset, bg, Modifier::empty());
            self.raw("\x1b[K");
        }
        x
    }
}

/// SGR parameters for a colour (`;38;…` / `;48;…`); nothing for the default.
fn colour(sgr: &mut String, c: Color, background: bool) {
    let base = if background { 40 } else { 30 };
    let code = match c {
        Color::Reset => return,
        Color::Black => base,
        Color::Red => base + 1,
        Color::Green => base + 2,
        Color::Yellow => base + 3,
        Color::Blue => base + 4,
        Color::Magenta => base + 5,
        Color::Cyan => base + 6,
        Color::Gray => base + 7,
        Color::DarkGray => base + 60,
        Color::LightRed => base + 61,
        Color::LightGreen => base + 62,
        Color::LightYellow => base + 63,
        Color::LightBlue => base + 64,
        Color::LightMagenta => base + 65,
        Color::LightCyan => base + 66,
        Color::White => base + 67,
        Color::Indexed(i) => {
            sgr.push_str(&format!(";{};5;{i}", base + 8));
            return;
        }
        Color::Rgb(r, g, b) => {
            sgr.push_str(&format!(";{};2;{r};{g};{b}", base + 8));
            return;
        }
    };
    sgr.push_str(&format!(";{code}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::Style;
    use ratatui::text::{Line, Span};

    fn row_bytes(line: Line<'_>, width: u16, depth: ColourDepth) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, width, 1));
        buf.set_line(0, 0, &line, width);
        let mut bytes = Vec::new();
        let mut out = Out::new(&mut bytes, depth);
        out.row(&buf.content);
        out.reset_style();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn rows_leave_out_trailing_blanks_and_fill_bands_by_erasing() {
        let plain = row_bytes(Line::from("hello"), 20, ColourDepth::TrueColour);
        assert_eq!(plain, "hello", "no trailing spaces, no styles for plain text");
        let band = Line::from(vec![
            Span::styled("code", Style::default().bg(Color::Rgb(1, 2, 3))),
            Span::styled("      ", Style::default().bg(Color::Rgb(1, 2, 3))),
        ]);
        let bytes = row_bytes(band, 10, ColourDepth::TrueColour);
        assert_eq!(bytes, "\x1b[0;48;2;1;2;3mcode\x1b[K\x1b[0m");
    }

    #[test]
    fn colours_are_written_at_the_terminals_depth() {
        let red = Line::from(Span::styled("x", Style::default().fg(Color::Rgb(0xbf, 0x61, 0x6a))));
        assert_eq!(row_bytes(red.clone(), 5, ColourDepth::Ansi16), "\x1b[0;31mx\x1b[0m");
        assert_eq!(row_bytes(red.clone(), 5, ColourDepth::Ansi256), "\x1b[0;38;5;131mx\x1b[0m");
        assert_eq!(row_bytes(red, 5, ColourDepth::TrueColour), "\x1b[0;38;2;191;97;106mx\x1b[0m");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(row_bytes(Line::from("界a"), 6, ColourDepth::TrueColour), "界a");
    }
}
