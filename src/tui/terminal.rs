//! The terminal: raw mode, alternate screen, bracketed paste, keyboard enhancement (so
//! Shift+Enter is told apart from Enter), mouse wheel; restored on exit, on error and on panic
//! (the panic hook restores before the message is printed).
//!
//! Drawing never clears the screen after start-up: every frame is one synchronized update
//! (DEC 2026) of the cells that changed, and a resize repaints every cell instead of emitting
//! a clear (ratatui's own resize path clears, so the viewport is fixed and rebuilt here).

use std::io::{self, Stdout, Write};

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
use ratatui::crossterm::{cursor, execute};
use ratatui::layout::Rect;
use ratatui::{Frame, TerminalOptions, Viewport};

/// A symbol no widget draws: cells holding it differ from anything, so the next frame writes
/// every cell.
const REPAINT_SENTINEL: &str = "\u{FFFF}";

pub struct Tui {
    terminal: Terminal<CrosstermBackend<Stdout>>,
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
        let terminal = fixed_terminal(w, h)?;
        let mut tui = Tui { terminal, area: Rect::new(0, 0, w.max(1), h.max(1)), mouse: true, restored: false };
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
        let fresh = fixed_terminal(w, h)?;
        self.area = Rect::new(0, 0, w.max(1), h.max(1));
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

    /// One frame, as one synchronized update.
    pub fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        execute!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        let drawn = self.terminal.draw(f).map(|_| ());
        let end = execute!(self.terminal.backend_mut(), EndSynchronizedUpdate);
        drawn?;
        end?;
        self.terminal.backend_mut().flush()
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

fn fixed_terminal(w: u16, h: u16) -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
    Terminal::with_options(
        CrosstermBackend::new(io::stdout()),
        TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, w.max(1), h.max(1))) },
    )
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
