use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::Inline;
use crate::tui::ansi::Out;
use crate::tui::colour::ColourDepth;

/// A terminal with scrollback, fed what the presenter writes.
struct Term {
    parser: vt100::Parser,
    inline: Inline,
    /// Every byte written, to look for what must never be there.
    written: Vec<u8>,
}

impl Term {
    fn new(w: u16, h: u16) -> Term {
        let mut parser = vt100::Parser::new(nz(h), nz(w), 10_000);
        // The shell's line, and the cursor at the start of the next.
        parser.process(b"$ cairn --inline\r\n");
        Term { parser, inline: Inline::new(w, h), written: Vec::new() }
    }

    fn frame(&mut self, history: &[&str], viewport: &[&str]) {
        let w = self.inline.width();
        let mut buf = Buffer::empty(Rect::new(0, 0, w, viewport.len() as u16));
        for (y, row) in viewport.iter().enumerate() {
            buf.set_string(0, y as u16, row, ratatui::style::Style::default());
        }
        let history: Vec<Line<'static>> = history.iter().map(|s| Line::from(s.to_string())).collect();
        let mut bytes = Vec::new();
        self.inline.frame(&mut Out::new(&mut bytes, ColourDepth::TrueColour), &history, &buf);
        self.parser.process(&bytes);
        self.written.extend_from_slice(&bytes);
    }

    fn resize(&mut self, w: u16, h: u16) {
        self.parser.screen_mut().set_size(nz(h), nz(w));
        self.inline.resize(w, h);
    }

    /// The scrollback, oldest first, then the screen: every row, right-trimmed.
    fn everything(&mut self) -> Vec<String> {
        let w = self.inline.width();
        self.parser.screen_mut().set_scrollback(usize::MAX);
        let len = self.parser.screen().scrollback();
        let mut rows = Vec::new();
        for i in 0..len {
            self.parser.screen_mut().set_scrollback(len - i);
            rows.push(self.parser.screen().rows(0, w).next().unwrap_or_default().trim_end().to_string());
        }
        self.parser.screen_mut().set_scrollback(0);
        rows.extend(self.screen());
        rows
    }

    fn screen(&self) -> Vec<String> {
        self.parser.screen().rows(0, self.inline.width()).map(|r| r.trim_end().to_string()).collect()
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

fn numbered(from: usize, to: usize) -> Vec<String> {
    (from..to).map(|i| format!("history row {i}")).collect()
}

fn refs(rows: &[String]) -> Vec<&str> {
    rows.iter().map(String::as_str).collect()
}

#[test]
fn history_goes_into_the_scrollback_once_in_order_above_the_viewport() {
    let mut t = Term::new(30, 8);
    t.frame(&[], &["> prompt", "status"]);
    assert_eq!(
        t.screen()[..3],
        ["$ cairn --inline", "> prompt", "status"],
        "the viewport starts below the shell's line"
    );
    for chunk in 0..6 {
        let rows = numbered(chunk * 5, chunk * 5 + 5);
        t.frame(&refs(&rows), &["> prompt", "status"]);
    }
    let all = t.everything();
    let mut expected = vec!["$ cairn --inline".to_string()];
    expected.extend(numbered(0, 30));
    expected.extend(["> prompt".to_string(), "status".to_string()]);
    assert_eq!(all, expected);
    // At the bottom of the screen once history filled it.
    assert_eq!(t.screen()[6..], ["> prompt", "status"]);
    let text = String::from_utf8_lossy(&t.written);
    assert!(!text.contains("\x1b[2J") && !text.contains("\x1b[3J"), "never a full-screen or scrollback clear");
}

#[test]
fn a_viewport_that_grows_and_shrinks_keeps_its_bottom_and_history_fills_the_gap() {
    let mut t = Term::new(30, 8);
    let rows = numbered(0, 10);
    t.frame(&refs(&rows), &["> prompt", "status"]);
    t.frame(&[], &["dialog 1", "dialog 2", "dialog 3", "dialog 4", "status"]);
    assert_eq!(t.screen()[3..], ["dialog 1", "dialog 2", "dialog 3", "dialog 4", "status"]);
    t.frame(&[], &["> prompt", "status"]);
    assert_eq!(t.screen()[3..], ["", "", "", "> prompt", "status"], "the prompt stays at the bottom");
    t.frame(&["after 1", "after 2"], &["> prompt", "status"]);
    assert_eq!(t.screen()[3..], ["after 1", "after 2", "", "> prompt", "status"]);
    let all = t.everything();
    let mut expected = vec!["$ cairn --inline".to_string()];
    expected.extend(numbered(0, 10));
    expected.extend(["after 1", "after 2", "", "> prompt", "status"].map(String::from));
    assert_eq!(all, expected);
}

#[test]
fn a_resize_redraws_the_viewport_below_the_history_without_touching_it() {
    let mut t = Term::new(40, 10);
    let rows = numbered(0, 12);
    t.frame(&refs(&rows), &["> prompt wide row reaching far right....", "status"]);
    // Shorter: the terminal pushes rows into its scrollback; the cursor goes with its text.
    t.resize(40, 6);
    t.frame(&[], &["> prompt", "status"]);
    let rows = numbered(12, 15);
    t.frame(&refs(&rows), &["> prompt", "status"]);
    // Taller again: the terminal pulls rows back from its scrollback.
    t.resize(40, 12);
    t.frame(&["last"], &["> prompt", "status"]);
    let all = t.everything();
    let mut expected = vec!["$ cairn --inline".to_string()];
    expected.extend(numbered(0, 15));
    expected.extend(["last", "> prompt", "status"].map(String::from));
    assert_eq!(all, expected, "every history row once, in order, the viewport only at the end");
}

#[test]
fn only_the_cells_that_changed_are_written_between_frames() {
    let mut t = Term::new(30, 8);
    t.frame(&[], &["> prompt", "status 1"]);
    let before = t.written.len();
    t.frame(&[], &["> prompt", "status 2"]);
    let frame = String::from_utf8_lossy(&t.written[before..]).to_string();
    assert!(frame.contains('2') && !frame.contains("prompt"), "{frame:?}");
    assert_eq!(t.screen()[1..3], ["> prompt", "status 2"]);
}

#[test]
fn a_frame_written_for_the_size_the_terminal_just_left_cannot_reach_the_history() {
    let mut t = Term::new(30, 10);
    let rows = numbered(0, 12);
    t.frame(&refs(&rows), &["viewport 1", "viewport 2", "viewport 3", "> prompt", "status 1"]);
    // The terminal shrinks, and a frame drawn for the old size is already on its way: its moves
    // down stop at the new bottom row.
    t.parser.screen_mut().set_size(nz(6), nz(30));
    t.frame(&[], &["viewport 1", "viewport 2", "viewport 3", "> prompt", "status 2"]);
    // Then cairn hears of the resize.
    t.inline.resize(30, 6);
    t.frame(&["after"], &["> prompt", "status 3"]);
    let all = t.everything();
    let mut expected = vec!["$ cairn --inline".to_string()];
    expected.extend(numbered(0, 12));
    expected.extend(["after", "> prompt", "status 3"].map(String::from));
    assert_eq!(all, expected);
}
