//! Each frame on the terminal, in the mode the interface runs in: full mode draws the whole
//! screen; inline mode writes what became final into the scrollback and draws the viewport,
//! and takes the alternate screen for the moment a view needs the whole screen (an overlay,
//! the transcript's search, the transcript scrolled back, the setup screen), coming back to
//! the viewport after it with nothing in the scrollback redrawn or lost.

use std::io::{self, Write};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::ansi::Out;
use super::app::App;
use super::terminal::{Tui, alternate_screen};
use super::{render, viewport};

const BEGIN_FRAME: &str = "\x1b[?2026h";
const END_FRAME: &str = "\x1b[?2026l";

impl Tui {
    /// Draw `app` as it is now: one synchronized update, in one write.
    pub fn present(&mut self, app: &mut App) -> io::Result<()> {
        // The size is asked each frame (an ioctl): crossterm can drop a resize that comes in
        // the same instant as a key, and a frame drawn for a size the terminal has left would
        // stay wrong until the next resize.
        if let Ok((w, h)) = ratatui::crossterm::terminal::size()
            && Rect::new(0, 0, w.max(1), h.max(1)) != self.size()
        {
            self.resize(w, h)?;
        }
        let depth = self.depth;
        let Some(inline) = self.inline.as_mut() else {
            return self.draw(|f| render::draw(app, f));
        };
        let full = app.wants_full_view();
        let mut switch = Vec::new();
        if full != inline.on_alt {
            let mut out = Out::new(&mut switch, depth);
            if full {
                // The viewport goes first, so the main screen keeps nothing but history.
                inline.presenter.clear(&mut out);
                alternate_screen(&mut out, true);
                inline.resized_on_alt = false;
            } else {
                alternate_screen(&mut out, false);
                if inline.resized_on_alt {
                    // The terminal put the cursor back where it was saved, which a reflow may
                    // have moved off the end of the history: start afresh on a new row at the
                    // bottom (the main screen holds no viewport to leave behind).
                    out.raw("\x1b[9999B\r\n");
                    inline.presenter.forget();
                } else {
                    inline.presenter.returned();
                }
            }
            inline.on_alt = full;
            if full {
                self.force_full_repaint();
            }
            self.set_mouse_capture(app.mouse_capture())?;
        }
        if full {
            return self.draw_after(&switch, |f| render::draw(app, f));
        }
        let Some(inline) = self.inline.as_mut() else { return Ok(()) };
        let (width, height) = (inline.presenter.width(), inline.presenter.height());
        let history = app.take_settled(width, false);
        let plan = viewport::plan(app, width, height);
        let mut buf = Buffer::empty(Rect::new(0, 0, width, plan.height().min(height)));
        viewport::render(app, &plan, &mut buf);
        let mut frame = Vec::with_capacity(4096);
        frame.extend_from_slice(BEGIN_FRAME.as_bytes());
        frame.extend_from_slice(&switch);
        inline.presenter.frame(&mut Out::new(&mut frame, depth), &history, &buf);
        frame.extend_from_slice(END_FRAME.as_bytes());
        self.send(&frame)
    }

    /// Inline mode, closing: everything not yet in the scrollback goes there as it is now,
    /// and the viewport goes, so the transcript stays whole in the terminal.
    pub fn finish(&mut self, app: &mut App) -> io::Result<()> {
        let depth = self.depth;
        let Some(inline) = self.inline.as_mut() else { return Ok(()) };
        let mut frame = Vec::new();
        frame.extend_from_slice(BEGIN_FRAME.as_bytes());
        let mut out = Out::new(&mut frame, depth);
        if inline.on_alt {
            alternate_screen(&mut out, false);
            if inline.resized_on_alt {
                out.raw("\x1b[9999B\r\n");
            }
            inline.presenter.forget();
            inline.on_alt = false;
        }
        let width = inline.presenter.width();
        let history = app.take_settled(width, true);
        inline.presenter.frame(&mut out, &history, &Buffer::empty(Rect::new(0, 0, width, 0)));
        frame.extend_from_slice(END_FRAME.as_bytes());
        self.send(&frame)
    }

    /// One frame's bytes, in one write.
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        let out = self.terminal.backend_mut();
        out.write_all(frame)?;
        out.flush()
    }
}
