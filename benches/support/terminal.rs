//! The real (release) binary in a pseudo-terminal, for the interface's benches: when each
//! frame ends (the end of a synchronized update, `ESC[?2026l`), keys written and the frame that
//! follows them, a session of 2,000 messages to resume, and strace's count of writes per frame.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn::conversation::{Block, Message, ToolCall, ToolResult};
use cairn::store::{NewSession, Store};
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

pub const END_OF_FRAME: &[u8] = b"\x1b[?2026l";

pub struct Running {
    pub child: Box<dyn Child + Send + Sync>,
    pub writer: Box<dyn Write + Send>,
    /// When each frame ended, in order.
    pub frames: Receiver<Instant>,
    pub seen: Arc<Mutex<Vec<u8>>>,
    pub started: Instant,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Running {
    pub fn start(home: &Path, project: &Path, args: &[&str]) -> Running {
        Running::start_traced(home, project, args, None)
    }

    /// As `start`, under `strace -e trace=write` writing to `trace` when given.
    pub fn start_traced(home: &Path, project: &Path, args: &[&str], trace: Option<&Path>) -> Running {
        // A configured provider that is never called: no prompt is sent.
        Running::start_with(home, project, args, trace, "http://127.0.0.1:9")
    }

    /// As `start_traced`, the provider at `base_url` (a mock model).
    pub fn start_with(home: &Path, project: &Path, args: &[&str], trace: Option<&Path>, base_url: &str) -> Running {
        let pty = native_pty_system()
            .openpty(PtySize { rows: 40, cols: 120, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal");
        let mut cmd = match trace {
            Some(file) => {
                let mut cmd = CommandBuilder::new("strace");
                // Only the writes stop the process (seccomp-bpf), so tracing barely slows it.
                cmd.args(["-f", "--seccomp-bpf", "-qq", "-e", "trace=write", "-s", "1048576", "-o"]);
                cmd.arg(file);
                cmd.arg(env!("CARGO_BIN_EXE_cairn"));
                cmd
            }
            None => CommandBuilder::new(env!("CARGO_BIN_EXE_cairn")),
        };
        cmd.args(args);
        cmd.cwd(project);
        cmd.env_clear();
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("CAIRN_HOME", home);
        cmd.env("TERM", "xterm-256color");
        cmd.env("ANTHROPIC_API_KEY", "bench");
        cmd.env("ANTHROPIC_BASE_URL", base_url);
        let started = Instant::now();
        let child = pty.slave.spawn_command(cmd).expect("cairn starts");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("a reader");
        let (tx, frames) = mpsc::channel();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let now = Instant::now();
                let mut seen = sink.lock().unwrap();
                // Search from a little before the new bytes, so a marker split across reads counts.
                let from = seen.len().saturating_sub(END_OF_FRAME.len() - 1);
                seen.extend_from_slice(&buf[..n]);
                let ends = seen[from..].windows(END_OF_FRAME.len()).filter(|w| *w == END_OF_FRAME).count();
                for _ in 0..ends {
                    let _ = tx.send(now);
                }
            }
        });
        let writer = pty.master.take_writer().expect("a writer");
        Running { child, writer, frames, seen, started, _master: pty.master }
    }

    pub fn first_frame(&self) -> Duration {
        let at = self.frames.recv_timeout(Duration::from_secs(20)).expect("a first frame within 20 s");
        at - self.started
    }

    pub fn wait_for(&self, marker: &[u8]) -> Duration {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if self.seen.lock().unwrap().windows(marker.len()).any(|w| w == marker) {
                return self.started.elapsed();
            }
            assert!(Instant::now() < deadline, "{:?} never appeared", String::from_utf8_lossy(marker));
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A field of /proc/PID/status, in MB.
    pub fn status_mib(&self, field: &str) -> f64 {
        let pid = self.child.process_id().expect("a pid");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find(|l| l.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }

    /// Resident memory: all of it, and the part that is cairn's own (anonymous: heap, stacks),
    /// not the pages of the binary and libraries mapped from disk.
    pub fn rss(&self) -> String {
        format!("{:.1} MB ({:.1} MB anonymous)", self.status_mib("VmRSS"), self.status_mib("RssAnon"))
    }

    /// Write one key and wait for the frame that follows it.
    pub fn keystroke(&mut self, key: &[u8]) -> Duration {
        while self.frames.try_recv().is_ok() {}
        let sent = Instant::now();
        self.writer.write_all(key).expect("a key");
        self.writer.flush().expect("a flush");
        let drawn = self.frames.recv_timeout(Duration::from_secs(5)).expect("a frame after the key");
        drawn.saturating_duration_since(sent)
    }

    pub fn quit(mut self) {
        let _ = self.writer.write_all(b"/quit\r");
        let _ = self.writer.flush();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
    }
}

/// A CAIRN_HOME holding one session of 2,000 messages (~5 MB) for `project`.
pub fn big_session(home: &Path, project: &Path) {
    let store = Store::open(&home.join("cairn.db")).expect("a database");
    let root = project.canonicalize().expect("the project");
    let id = store.project(&root).expect("a project");
    let session = store
        .create_session(
            id,
            NewSession {
                provider: cairn::config::ProviderKind::Anthropic,
                model: "claude-sonnet-4-5",
                mode: cairn::conversation::Mode::Edit,
            },
        )
        .expect("a session");
    let body = "fn handle(input: &str) -> Result<Output, Error> { parse(input).map(Output::from) }\n".repeat(110);
    for i in 0..500 {
        let append = |m: &Message| store.append_message(&session.id, m).expect("a stored message");
        append(&Message::user(format!("prompt {i}: fix src/module_{i}.rs")));
        let mut call = Message::assistant("Reading it.");
        call.content.push(Block::ToolCall(ToolCall::new(format!("c{i}"), "file_read", "{\"path\":\"src/a.rs\"}")));
        append(&call);
        append(&Message::tool(ToolResult::ok(format!("c{i}"), "file_read", "x\n".repeat(100))));
        append(&Message::assistant(format!("## Step {i}\n\n```rust\n{body}```\n")));
    }
}

/// From an strace log of `write` calls: the frames (writes that begin a synchronized update),
/// and the writes and bytes that went to the descriptor frames are drawn on.
pub fn frame_writes(log: &str) -> Option<(usize, usize, usize)> {
    let calls: Vec<(&str, &str, usize)> = log
        .lines()
        .filter_map(|l| {
            let call = &l[l.find("write(")? + 6..];
            let (fd, rest) = call.split_once(", ")?;
            let bytes = rest.rsplit_once(" = ")?.1.trim().parse().ok()?;
            Some((fd, rest, bytes))
        })
        .collect();
    let frame_fd = calls.iter().find(|(_, rest, _)| rest.starts_with("\"\\33[?2026h"))?.0;
    let on_fd: Vec<_> = calls.iter().filter(|(fd, _, _)| *fd == frame_fd).collect();
    let frames = on_fd.iter().filter(|(_, rest, _)| rest.starts_with("\"\\33[?2026h")).count();
    Some((frames, on_fd.len(), on_fd.iter().map(|(_, _, n)| n).sum()))
}

pub fn stats(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<44} n={:<4} median {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms",
        ms.len(),
        at(0.5),
        at(0.99),
        ms[ms.len() - 1]
    );
}
