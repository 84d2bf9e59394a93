use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::{FrameWriter, Hold, draw_frame};
use crate::tui::app::fixture::conversation;
use crate::tui::render;

/// Records each `write` call it gets, as the terminal's file descriptor would see them.
#[derive(Clone, Default)]
struct Writes(Arc<Mutex<Vec<Vec<u8>>>>);

impl Write for Writes {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().push(bytes.to_vec());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn terminal(w: u16, h: u16) -> (Terminal<CrosstermBackend<FrameWriter<Writes>>>, Hold, Writes) {
    let writes = Writes::default();
    let (writer, hold) = FrameWriter::new(writes.clone());
    let options = TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, w, h)) };
    (Terminal::with_options(CrosstermBackend::new(writer), options).unwrap(), hold, writes)
}

#[test]
fn each_frame_goes_out_in_one_write_framed_as_one_synchronized_update() {
    let mut app = conversation();
    let (mut term, hold, writes) = terminal(200, 60);
    draw_frame(&mut term, &hold, &[], |f| render::draw(&app, f)).unwrap();
    app.on_key(ratatui::crossterm::event::KeyEvent::from(ratatui::crossterm::event::KeyCode::Char('x')));
    draw_frame(&mut term, &hold, &[], |f| render::draw(&app, f)).unwrap();
    let writes = writes.0.lock().unwrap();
    assert_eq!(writes.len(), 2, "one write per frame");
    let first = &writes[0];
    // The whole first frame (every cell of 200×60) is more than the old 1 KiB pieces many times.
    assert!(first.len() > 8 * 1024, "{} bytes", first.len());
    for frame in writes.iter() {
        assert!(frame.starts_with(b"\x1b[?2026h"), "a frame starts its synchronized update");
        assert!(frame.windows(8).any(|w| w == b"\x1b[?2026l"), "and ends it in the same write");
    }
}

#[test]
fn outside_a_frame_a_flush_goes_out_at_once() {
    let (mut term, _hold, writes) = terminal(20, 5);
    term.backend_mut().write_all(b"\x07").unwrap();
    term.backend_mut().flush().unwrap();
    assert_eq!(writes.0.lock().unwrap().as_slice(), &[b"\x07".to_vec()]);
}
