//! The real `cairn` binary in a pseudo-terminal (120×40), read through a vt100 emulator. Waits
//! poll the screen (a noisy two-core CI box can be slow), never sleep a fixed time to assume
//! progress.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

use super::cairn::{KEY, Sandbox};
use super::mock_llm::MockLlm;

pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;
/// Generous: the first run of a debug binary on a loaded box can take seconds.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Screen {
    pub parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte cairn wrote, for checking escape sequences.
    pub raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Screen {
    /// `cairn ARGS` in the sandbox's project, talking to `mock`.
    pub fn start(sandbox: &Sandbox, mock: &MockLlm, args: &[&str]) -> Screen {
        let mut cmd = bare_command(sandbox, args);
        cmd.env("ANTHROPIC_API_KEY", KEY);
        cmd.env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
        Screen::spawn(cmd)
    }

    pub fn spawn(cmd: CommandBuilder) -> Screen {
        let pty = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal");
        let child = pty.slave.spawn_command(cmd).expect("cairn starts");
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(nonzero(ROWS), nonzero(COLS), 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pty.master.try_clone_reader().expect("a pty reader");
        let (p, r) = (parser.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                p.lock().unwrap().process(&buf[..n]);
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pty.master.take_writer().expect("a pty writer");
        Screen { parser, raw, writer, child, master: pty.master }
    }

    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    pub fn bottom_row(&self) -> String {
        self.text().lines().last().unwrap_or_default().to_string()
    }

    /// The cairn process's id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a pid")
    }

    /// User and system CPU time of the cairn process so far, in clock ticks (Linux).
    pub fn cpu_ticks(&self) -> u64 {
        let pid = self.child.process_id().expect("a pid");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's stat");
        // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
        let after = &stat[stat.rfind(')').expect("a command name") + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    pub fn raw_len(&self) -> usize {
        self.raw.lock().unwrap().len()
    }

    /// Resize the terminal (and the emulator reading it).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.lock().unwrap().set_size(nonzero(rows), nonzero(cols));
        self.master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Type text, then wait for it to show in the prompt (so the next key does not race it).
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
                panic!("timed out waiting for {what}; the screen was:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
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

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// `cairn ARGS` with an empty environment but for the sandbox's home and a terminal type.
pub fn bare_command(sandbox: &Sandbox, args: &[&str]) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args);
    cmd.cwd(sandbox.project.path());
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", sandbox.home.path());
    cmd.env("CAIRN_HOME", sandbox.home.path());
    cmd.env("TERM", "xterm-256color");
    cmd
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal has rows and columns")
}
