//! The terminal: raw mode, alternate screen, bracketed paste, keyboard enhancement (so
//! Shift+Enter is told apart from Enter), mouse wheel; restored on exit, on error and on panic
//! (the panic hook restores before the message is printed).
//!
//! Drawing never clears the screen after start-up: every frame is one synchronized update
//! (DEC 2026) of the cells that changed, and a resize repaints every cell instead of emitting
//! a clear (ratatui's own resize path clears, so the viewport is fixed and rebuilt here).

use std::io::{self, Write};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::clipboard::CopyToClipboard;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode,
    enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute, queue};
use ratatui::layout::Rect;
use ratatui::{Frame, TerminalOptions, Viewport};

/// A symbol no widget draws: cells holding it differ from anything, so the next frame writes
/// every cell.
const REPAINT_SENTINEL: &str = "\u{FFFF}";

/// Where frames go: the terminal's file descriptor written directly, so a frame held by
/// [`FrameWriter`] leaves in one `write` (std's `Stdout` would cut it into 1 KiB pieces).
#[cfg(unix)]
type Screen = std::fs::File;
#[cfg(not(unix))]
type Screen = io::Stdout;

#[cfg(unix)]
fn screen() -> io::Result<Screen> {
    use std::os::fd::AsFd;
    Ok(std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

#[cfg(not(unix))]
fn screen() -> io::Result<Screen> {
    Ok(io::stdout())
}

/// Holds everything a frame writes and sends it as one write when the frame ends, so the
/// terminal never shows half a frame (tmux 3.3a drew the pieces of 1 KiB writes) and a frame
/// costs one system call. Outside a frame every flush goes out at once.
pub struct FrameWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
    /// Set while a frame is being written; shared with the one drawing it, since ratatui keeps
    /// the writer inside its backend.
    holding: Hold,
}

/// The switch of a [`FrameWriter`]: while on, flushes are held.
#[derive(Clone, Debug, Default)]
pub struct Hold(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Hold {
    fn set(&self, on: bool) {
        self.0.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn is_on(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<W: Write> FrameWriter<W> {
    pub fn new(inner: W) -> (FrameWriter<W>, Hold) {
        let hold = Hold::default();
        (FrameWriter { inner, buf: Vec::with_capacity(64 * 1024), holding: hold.clone() }, hold)
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.holding.is_on() {
            return Ok(());
        }
        if !self.buf.is_empty() {
            let sent = self.inner.write_all(&self.buf);
            self.buf.clear();
            // A big frame's buffer is not kept for ever: an idle screen holds little.
            self.buf.shrink_to(64 * 1024);
            sent?;
        }
        self.inner.flush()
    }
}

/// Draw one frame on `terminal` as one synchronized update (DEC 2026) sent in one write.
pub fn draw_frame<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<FrameWriter<W>>>,
    hold: &Hold,
    f: impl FnOnce(&mut Frame<'_>),
) -> io::Result<()> {
    hold.set(true);
    let begun = queue!(terminal.backend_mut(), BeginSynchronizedUpdate);
    let drawn = begun.and_then(|()| terminal.draw(f).map(|_| ()));
    let end = queue!(terminal.backend_mut(), EndSynchronizedUpdate);
    hold.set(false);
    let sent = terminal.backend_mut().flush();
    drawn?;
    end?;
    sent
}

pub struct Tui {
    terminal: Terminal<CrosstermBackend<FrameWriter<Screen>>>,
    hold: Hold,
    area: Rect,
    mouse: bool,
    restored: bool,
}

impl Tui {
    /// Take over the terminal.
    pub fn enter() -> io::Result<Tui> {
        install_panic_hook();
        take_over(true)?;
        let (w, h) = ratatui::crossterm::terminal::size()?;
        let (terminal, hold) = fixed_terminal(w, h)?;
        let mut tui = Tui { terminal, hold, area: Rect::new(0, 0, w.max(1), h.max(1)), mouse: true, restored: false };
        tui.force_full_repaint();
        Ok(tui)
    }

    pub fn size(&self) -> Rect {
        self.area
    }

    /// Follow a new terminal size without clearing: the next frame repaints every cell.
    pub fn resize(&mut self, w: u16, h: u16) -> io::Result<()> {
        if Rect::new(0, 0, w, h) == self.size() {
            return Ok(());
        }
        let (fresh, hold) = fixed_terminal(w, h)?;
        self.area = Rect::new(0, 0, w.max(1), h.max(1));
        self.hold = hold;
        let old = std::mem::replace(&mut self.terminal, fresh);
        drop(old);
        self.force_full_repaint();
        Ok(())
    }

    /// Make the next draw write every cell (after a resize, or Ctrl+L).
    pub fn force_full_repaint(&mut self) {
        for cell in self.terminal.current_buffer_mut().content.iter_mut() {
            cell.set_symbol(REPAINT_SENTINEL);
        }
        self.terminal.swap_buffers();
    }

    /// One frame, as one synchronized update in one write.
    pub fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        draw_frame(&mut self.terminal, &self.hold, f)
    }

    /// Report the mouse (wheel scrolling, clicks) or leave it to the terminal (native selection).
    pub fn set_mouse_capture(&mut self, on: bool) -> io::Result<()> {
        if on != self.mouse {
            self.mouse = on;
            if on {
                execute!(self.terminal.backend_mut(), EnableMouseCapture)?;
            } else {
                execute!(self.terminal.backend_mut(), DisableMouseCapture)?;
            }
        }
        Ok(())
    }

    /// Put `text` on the system clipboard through the terminal (OSC 52), which also works over
    /// SSH and inside tmux with `set-clipboard on`.
    pub fn copy(&mut self, text: &str) -> io::Result<()> {
        execute!(self.terminal.backend_mut(), CopyToClipboard::to_clipboard_from(text))
    }

    /// Bytes for the terminal itself, between frames: the bell, a notification (OSC 9/777).
    pub fn write_raw(&mut self, bytes: &str) -> io::Result<()> {
        use std::io::Write;
        let out = self.terminal.backend_mut();
        out.write_all(bytes.as_bytes())?;
        out.flush()
    }

    /// Hand the terminal to another program (the user's editor) until [`Tui::resume`].
    pub fn suspend(&mut self) {
        restore();
    }

    /// Take the terminal back after [`Tui::suspend`]; the next frame repaints every cell,
    /// at whatever size the terminal now has.
    pub fn resume(&mut self) -> io::Result<()> {
        take_over(self.mouse)?;
        let (w, h) = ratatui::crossterm::terminal::size()?;
        if Rect::new(0, 0, w.max(1), h.max(1)) != self.area {
            return self.resize(w, h);
        }
        self.force_full_repaint();
        Ok(())
    }

    /// Give the terminal back.
    pub fn leave(&mut self) {
        if !self.restored {
            self.restored = true;
            restore();
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.leave();
    }
}

fn fixed_terminal(w: u16, h: u16) -> io::Result<(Terminal<CrosstermBackend<FrameWriter<Screen>>>, Hold)> {
    let (writer, hold) = FrameWriter::new(screen()?);
    let terminal = Terminal::with_options(
        CrosstermBackend::new(writer),
        TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, w.max(1), h.max(1))) },
    )?;
    Ok((terminal, hold))
}

/// Raw mode, the alternate screen, bracketed paste, the mouse when `mouse`, and keyboard
/// enhancement; on failure the terminal is restored.
fn take_over(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    let setup = execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        // Terminals without the kitty protocol ignore this; querying support first would
        // cost a round trip (or a timeout) before the first frame.
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
        cursor::Hide
    )
    .and_then(|()| if mouse { execute!(out, EnableMouseCapture) } else { Ok(()) });
    if let Err(e) = setup {
        restore();
        return Err(e);
    }
    Ok(())
}

/// Undo everything [`Tui::enter`] did; safe to call more than once.
pub fn restore() {
    let mut out = io::stdout();
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;
