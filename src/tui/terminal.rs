//! The terminal: raw mode, the alternate screen (full mode; inline mode only for a view that
//! needs the whole screen), bracketed paste, keyboard enhancement (so Shift+Enter is told apart
//! from Enter), mouse wheel; restored on exit, on error and on panic (the panic hook restores
//! before the message is printed).
//!
//! Drawing never clears the screen after start-up: every frame is one synchronized update
//! (DEC 2026) of the cells that changed, and a resize repaints every cell instead of emitting
//! a clear (ratatui's own resize path clears, so the viewport is fixed and rebuilt here).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

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

use super::ansi::Out;
use super::colour::ColourDepth;
use super::inline::Inline;

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

/// Draw one frame on `terminal` as one synchronized update (DEC 2026) sent in one write;
/// `before` goes first inside it (switching to the alternate screen).
pub fn draw_frame<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<FrameWriter<W>>>,
    hold: &Hold,
    before: &[u8],
    f: impl FnOnce(&mut Frame<'_>),
) -> io::Result<()> {
    hold.set(true);
    let begun = queue!(terminal.backend_mut(), BeginSynchronizedUpdate);
    let begun = begun.and_then(|()| terminal.backend_mut().write_all(before));
    let drawn = begun.and_then(|()| terminal.draw(f).map(|_| ()));
    let end = queue!(terminal.backend_mut(), EndSynchronizedUpdate);
    hold.set(false);
    let sent = terminal.backend_mut().flush();
    drawn?;
    end?;
    sent
}

/// How the interface uses the terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScreenMode {
    /// The alternate screen, all of it ours.
    Full,
    /// The terminal's own screen: history into its scrollback, a live viewport at the bottom.
    Inline,
}

pub struct Tui {
    /// The full-screen frame: all of full mode, and inline mode's views on the alternate screen.
    pub(super) terminal: Terminal<CrosstermBackend<FrameWriter<Screen>>>,
    pub(super) hold: Hold,
    pub(super) area: Rect,
    mouse: bool,
    restored: bool,
    pub(super) depth: ColourDepth,
    /// Inline mode's presenter, and whether a view has the alternate screen for the moment.
    pub(super) inline: Option<InlineScreen>,
}

pub(super) struct InlineScreen {
    pub(super) presenter: Inline,
    /// A view (an overlay, the search, the transcript scrolled back) is on the alternate screen.
    pub(super) on_alt: bool,
    /// The terminal was resized while it was: where the text ended on the main screen is not
    /// known for sure when it comes back.
    pub(super) resized_on_alt: bool,
}

impl Tui {
    /// Take over the terminal for `mode`.
    pub fn enter_as(mode: ScreenMode) -> io::Result<Tui> {
        install_panic_hook();
        INLINE.store(mode == ScreenMode::Inline, Ordering::Relaxed);
        take_over(mode == ScreenMode::Full, mode == ScreenMode::Full)?;
        let (w, h) = ratatui::crossterm::terminal::size()?;
        let (terminal, hold) = fixed_terminal(w, h)?;
        let inline = (mode == ScreenMode::Inline).then(|| InlineScreen {
            presenter: Inline::new(w, h),
            on_alt: false,
            resized_on_alt: false,
        });
        let mut tui = Tui {
            terminal,
            hold,
            area: Rect::new(0, 0, w.max(1), h.max(1)),
            mouse: mode == ScreenMode::Full,
            restored: false,
            depth: ColourDepth::detect(),
            inline,
        };
        tui.force_full_repaint();
        Ok(tui)
    }

    pub fn size(&self) -> Rect {
        self.area
    }

    /// Follow a new terminal size without clearing: the next frame repaints every cell (in
    /// inline mode: the viewport, below the history the terminal has reflowed).
    pub fn resize(&mut self, w: u16, h: u16) -> io::Result<()> {
        if Rect::new(0, 0, w, h) == self.size() {
            return Ok(());
        }
        let (fresh, hold) = fixed_terminal(w, h)?;
        self.area = Rect::new(0, 0, w.max(1), h.max(1));
        self.hold = hold;
        let old = std::mem::replace(&mut self.terminal, fresh);
        drop(old);
        if let Some(inline) = &mut self.inline {
            inline.presenter.resize(w, h);
            inline.resized_on_alt |= inline.on_alt;
        }
        self.force_full_repaint();
        Ok(())
    }

    /// Make the next draw write every cell (after a resize, or Ctrl+L).
    pub fn force_full_repaint(&mut self) {
        if let Some(inline) = &mut self.inline {
            inline.presenter.repaint();
        }
        for cell in self.terminal.current_buffer_mut().content.iter_mut() {
            cell.set_symbol(REPAINT_SENTINEL);
        }
        self.terminal.swap_buffers();
    }

    /// One full-screen frame, as one synchronized update in one write.
    pub fn draw(&mut self, f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        self.draw_after(&[], f)
    }

    /// As [`Tui::draw`], with `before` written first inside the frame.
    pub(super) fn draw_after(&mut self, before: &[u8], f: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        let depth = self.depth;
        draw_frame(&mut self.terminal, &self.hold, before, |frame| {
            f(frame);
            depth.apply(frame.buffer_mut());
        })
    }

    /// Report the mouse (wheel scrolling, clicks) or leave it to the terminal (native
    /// selection). Inline mode leaves it to the terminal but on the alternate screen.
    pub fn set_mouse_capture(&mut self, on: bool) -> io::Result<()> {
        let on = on && self.inline.as_ref().is_none_or(|i| i.on_alt);
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

    /// Hand the terminal to another program (the user's editor) until [`Tui::resume`]. Inline,
    /// the viewport goes first, so the editor starts below the history.
    pub fn suspend(&mut self) {
        if let Some(inline) = &mut self.inline
            && !inline.on_alt
        {
            let mut bytes = Vec::new();
            inline.presenter.clear(&mut Out::new(&mut bytes, self.depth));
            let _ = self.write_raw(&String::from_utf8_lossy(&bytes));
        }
        restore();
    }

    /// Take the terminal back after [`Tui::suspend`]; the next frame repaints every cell,
    /// at whatever size the terminal now has.
    pub fn resume(&mut self) -> io::Result<()> {
        let full = self.inline.as_ref().is_none_or(|i| i.on_alt);
        take_over(full, self.mouse)?;
        if let Some(inline) = &mut self.inline {
            inline.presenter.forget();
        }
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

/// Inline mode is on: restoring clears the viewport rather than leaving the alternate screen.
static INLINE: AtomicBool = AtomicBool::new(false);
/// The alternate screen is on.
static ALT_SCREEN: AtomicBool = AtomicBool::new(false);

/// Raw mode, the alternate screen when `alternate`, bracketed paste, the mouse when `mouse`,
/// and keyboard enhancement; on failure the terminal is restored.
fn take_over(alternate: bool, mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    let setup = if alternate { execute!(out, EnterAlternateScreen) } else { Ok(()) }
        .and_then(|()| {
            ALT_SCREEN.store(alternate, Ordering::Relaxed);
            execute!(
                out,
                EnableBracketedPaste,
                // Terminals without the kitty protocol ignore this; querying support first would
                // cost a round trip (or a timeout) before the first frame.
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
                cursor::Hide
            )
        })
        .and_then(|()| if mouse { execute!(out, EnableMouseCapture) } else { Ok(()) });
    if let Err(e) = setup {
        restore();
        return Err(e);
    }
    Ok(())
}

/// The alternate screen on or off, for inline mode's views (written into a frame's bytes).
pub(super) fn alternate_screen(out: &mut Out<'_>, on: bool) {
    ALT_SCREEN.store(on, Ordering::Relaxed);
    out.raw(if on { "\x1b[?1049h" } else { "\x1b[?1049l" });
}

/// Undo everything [`Tui::enter`] did; safe to call more than once. Inline, off the alternate
/// screen, the cursor is parked where the history ends (frames leave it there, and a frame
/// cut short never left its buffer): the viewport below it is cleared and the rest stays.
pub fn restore() {
    let mut out = io::stdout();
    let alternate = ALT_SCREEN.swap(false, Ordering::Relaxed);
    let _ =
        execute!(out, EndSynchronizedUpdate, PopKeyboardEnhancementFlags, DisableMouseCapture, DisableBracketedPaste);
    if alternate {
        let _ = execute!(out, LeaveAlternateScreen);
    } else if INLINE.load(Ordering::Relaxed) {
        let _ = out.write_all(b"\x1b[0m\r\x1b[J");
    }
    // Autowrap back on, in case a frame that turns it off was cut short.
    let _ = out.write_all(b"\x1b[?7h");
    let _ = execute!(out, cursor::Show);
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
