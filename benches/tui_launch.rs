//! The real (release) binary in a pseudo-terminal at 120×40: launch to first frame, keystroke to
//! frame, and idle memory.
//!
//! `cargo bench --bench tui_launch`:
//! - starts `cairn` 30 times and times spawn → the end of the first synchronized frame
//!   (`ESC[?2026l`);
//! - reads the resident set size (VmRSS, Linux) two seconds after start, idle;
//! - resumes a session of 2,000 messages (~5 MB) and times each of 300 keystrokes from the
//!   write to the end of the frame that shows it (keys 40 ms apart, as fast typing is, so the
//!   60 fps cap is not what is measured), then reads its idle RSS.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn::conversation::{Block, Message, ToolCall, ToolResult};
use cairn::store::{NewSession, Store};
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

const RUNS: usize = 30;
const KEYS: usize = 300;
const END_OF_FRAME: &[u8] = b"\x1b[?2026l";
/// The notice under a resumed conversation: the history is on screen.
const RESUMED: &[u8] = b"resumed session";

struct Running {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    /// When each frame ended, in order.
    frames: Receiver<Instant>,
    seen: Arc<Mutex<Vec<u8>>>,
    started: Instant,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Running {
    fn start(home: &Path, project: &Path, args: &[&str]) -> Running {
        Running::start_traced(home, project, args, None)
    }

    /// As `start`, under `strace -e trace=write` writing to `trace` when given.
    fn start_traced(home: &Path, project: &Path, args: &[&str], trace: Option<&Path>) -> Running {
        let pty = native_pty_system()
            .openpty(PtySize { rows: 40, cols: 120, pixel_width: 0, pixel_height: 0 })
            .expect("a pseudo-terminal");
        let mut cmd = match trace {
            Some(file) => {
                let mut cmd = CommandBuilder::new("strace");
                cmd.args(["-f", "-qq", "-e", "trace=write", "-s", "12", "-o"]);
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
        // A configured provider that is never called: no prompt is sent.
        cmd.env("ANTHROPIC_API_KEY", "bench");
        cmd.env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
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

    fn first_frame(&self) -> Duration {
        let at = self.frames.recv_timeout(Duration::from_secs(20)).expect("a first frame within 20 s");
        at - self.started
    }

    fn wait_for(&self, marker: &[u8]) -> Duration {
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
    fn status_mib(&self, field: &str) -> f64 {
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
    fn rss(&self) -> String {
        format!("{:.1} MB ({:.1} MB anonymous)", self.status_mib("VmRSS"), self.status_mib("RssAnon"))
    }

    /// Write one key and wait for the frame that follows it.
    fn keystroke(&mut self, key: &[u8]) -> Duration {
        while self.frames.try_recv().is_ok() {}
        let sent = Instant::now();
        self.writer.write_all(key).expect("a key");
        self.writer.flush().expect("a flush");
        let drawn = self.frames.recv_timeout(Duration::from_secs(5)).expect("a frame after the key");
        drawn.saturating_duration_since(sent)
    }

    fn quit(mut self) {
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
fn big_session(home: &Path, project: &Path) {
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
fn frame_writes(log: &str) -> Option<(usize, usize, usize)> {
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

fn stats(name: &str, mut ms: Vec<f64>) {
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

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` asks what is here
    }
    let home = tempfile::tempdir().expect("a temp dir");
    let project = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(project.path().join(".git")).expect("a git marker");

    // Warm the page cache and create the database once.
    let warm = Running::start(home.path(), project.path(), &[]);
    warm.first_frame();
    warm.quit();
    let mut frames = Vec::new();
    for _ in 0..RUNS {
        let run = Running::start(home.path(), project.path(), &[]);
        frames.push(run.first_frame().as_secs_f64() * 1e3);
        run.quit();
    }
    stats("launch to first frame (new session)", frames);
    let idle = Running::start(home.path(), project.path(), &[]);
    idle.first_frame();
    std::thread::sleep(Duration::from_secs(2));
    println!("idle RSS, new session: {}", idle.rss());
    idle.quit();

    let big_home = tempfile::tempdir().expect("a temp dir");
    big_session(big_home.path(), project.path());
    let mut frames = Vec::new();
    let mut shown = Vec::new();
    for _ in 0..10 {
        let run = Running::start(big_home.path(), project.path(), &["--resume"]);
        frames.push(run.first_frame().as_secs_f64() * 1e3);
        shown.push(run.wait_for(RESUMED).as_secs_f64() * 1e3);
        run.quit();
    }
    stats("launch to first frame (--resume, 2,000 msgs)", frames);
    stats("launch to the history on screen (--resume)", shown);

    let mut run = Running::start(big_home.path(), project.path(), &["--resume"]);
    run.first_frame();
    run.wait_for(RESUMED);
    std::thread::sleep(Duration::from_millis(500));
    let keys: Vec<f64> = (0..KEYS)
        .map(|i| {
            std::thread::sleep(Duration::from_millis(40));
            let key: &[u8] = if i % 2 == 0 { b"x" } else { b"\x7f" };
            run.keystroke(key).as_secs_f64() * 1e3
        })
        .collect();
    stats("keystroke to frame (2,000 msgs on screen)", keys);
    // Each key written the moment the previous key's frame ended: what the 60 fps cap would delay.
    let keys: Vec<f64> = (0..KEYS)
        .map(|i| {
            let key: &[u8] = if i % 2 == 0 { b"x" } else { b"\x7f" };
            run.keystroke(key).as_secs_f64() * 1e3
        })
        .collect();
    stats("key right after a frame (2,000 msgs)", keys);
    std::thread::sleep(Duration::from_secs(2));
    println!("idle RSS, resumed 2,000-message session: {}", run.rss());
    run.quit();

    // Writes per frame, counted by strace (when it is installed): the first frame, the history
    // coming in, and 100 keys.
    let trace = big_home.path().join("writes.strace");
    if std::process::Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success()) {
        let mut run = Running::start_traced(big_home.path(), project.path(), &["--resume"], Some(&trace));
        run.first_frame();
        run.wait_for(RESUMED);
        std::thread::sleep(Duration::from_millis(500));
        for i in 0..100 {
            run.keystroke(if i % 2 == 0 { b"x" } else { b"\x7f" });
        }
        run.quit();
        std::thread::sleep(Duration::from_millis(500));
        match frame_writes(&std::fs::read_to_string(&trace).unwrap_or_default()) {
            Some((frames, writes, bytes)) => println!(
                "frames {frames}, writes {writes} ({:.2} per frame), {bytes} bytes ({} per frame)",
                writes as f64 / frames.max(1) as f64,
                bytes / frames.max(1)
            ),
            None => println!("strace saw no frame"),
        }
    } else {
        println!("strace is not installed: writes per frame not counted");
    }
}
