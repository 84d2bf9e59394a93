//! The real `cairn` in a pseudo-terminal read by a terminal emulator that keeps its scrollback
//! and reflows it when the width changes, as the terminals people use do: alacritty's own
//! (`alacritty_terminal`). The vt100 emulator of `pty.rs` cuts rows off when the terminal
//! narrows, so it cannot show what a reflowing terminal holds after a resize — which is what
//! inline mode has to get right. Synchronized updates (DEC 2026) are honoured: a frame shows
//! whole or not at all.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

use super::pty::PATIENCE;

struct Emulated {
    term: Term<VoidListener>,
    parser: Processor,
}

pub struct ReflowScreen {
    emulated: Arc<Mutex<Emulated>>,
    /// Every byte cairn wrote.
    pub raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn portable_pty::MasterPty + Send>,
}

impl ReflowScreen {
    /// `cmd` in a `cols` × `rows` terminal whose screen already shows `before` (a shell's line).
    pub fn spawn(cmd: CommandBuilder, cols: u16, rows: u16, before: &str) -> ReflowScreen {
        let pty = native_pty_system()
            .openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal");
        let config = Config { scrolling_history: 100_000, ..Config::default() };
        let mut emulated = Emulated {
            term: Term::new(config, &TermSize::new(cols.into(), rows.into()), VoidListener),
            parser: Processor::new(),
        };
        emulated.parser.advance(&mut emulated.term, before.as_bytes());
        let emulated = Arc::new(Mutex::new(emulated));
        let child = pty.slave.spawn_command(cmd).expect("cairn starts");
        drop(pty.slave);
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pty.master.try_clone_reader().expect("a pty reader");
        let (e, r) = (emulated.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut guard = e.lock().unwrap();
                let Emulated { term, parser } = &mut *guard;
                parser.advance(term, &buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pty.master.take_writer().expect("a pty writer");
        ReflowScreen { emulated, raw, writer, child, master: pty.master }
    }

    /// The screen as it shows now, row by row.
    pub fn text(&self) -> String {
        let e = self.emulated.lock().unwrap();
        let grid = e.term.grid();
        (0..grid.screen_lines() as i32)
            .map(|l| row_text(&e.term, Line(l)).trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The scrollback and the screen as lines: rows the terminal wrapped joined again,
    /// trailing blanks trimmed, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let e = self.emulated.lock().unwrap();
        let grid = e.term.grid();
        let mut lines = Vec::new();
        let mut current = String::new();
        for l in grid.topmost_line().0..=grid.bottommost_line().0 {
            current.push_str(&row_text(&e.term, Line(l)));
            let last = &grid[Line(l)][Column(grid.columns() - 1)];
            if !last.flags.contains(Flags::WRAPLINE) {
                lines.push(std::mem::take(&mut current).trim_end().to_string());
            }
        }
        if !current.is_empty() {
            lines.push(current.trim_end().to_string());
        }
        lines
    }

    pub fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// A new size: the emulator reflows first, then cairn is told (as a terminal does it, so
    /// what cairn wrote for the old size may still arrive after the reflow).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.emulated.lock().unwrap().term.resize(TermSize::new(cols.into(), rows.into()));
        self.master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Type text, then wait for it to show (so the next key does not race it).
    pub fn type_text(&mut self, text: &str) {
        self.send(text);
        self.wait(&format!("the prompt to show {text:?}"), |s| s.contains(text));
    }

    pub fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if ok(&text) {
                return text;
            }
            if start.elapsed() > PATIENCE {
                let raw = self.raw.lock().unwrap();
                let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(1500)..]).escape_debug().to_string();
                panic!("timed out waiting for {what}; the screen was:\n{text}\nthe last bytes cairn wrote:\n{tail}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What it wrote last reaches the emulator.
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            if start.elapsed() > PATIENCE {
                let _ = self.child.kill();
                panic!("cairn did not exit; the screen was:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ReflowScreen {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn row_text(term: &Term<VoidListener>, line: Line) -> String {
    let grid = term.grid();
    let row = &grid[line];
    let mut s = String::new();
    for c in 0..grid.columns() {
        let cell = &row[Column(c)];
        if cell.flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER) {
            continue;
        }
        s.push(cell.c);
        for z in cell.zerowidth().into_iter().flatten() {
            s.push(*z);
        }
    }
    s
}
