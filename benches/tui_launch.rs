//! Launch to first frame and idle memory of the real (release) binary in a pseudo-terminal.
//!
//! `cargo bench --bench tui_launch` starts `cairn` 30 times at 120×40 and times spawn → the end
//! of the first synchronized frame (`ESC[?2026l`, after the status line is drawn); then it
//! measures the resident set size (VmRSS, Linux) two seconds after start, idle, for a new
//! session and for a resumed session of 2,000 messages (~5 MB).

use std::io::Read;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cairn::conversation::{Block, Message, ToolCall, ToolResult};
use cairn::store::{NewSession, Store};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const RUNS: usize = 30;
const END_OF_FRAME: &[u8] = b"\x1b[?2026l";
/// The notice under a resumed conversation: the history is on screen.
const RESUMED: &[u8] = b"resumed session";

struct Launch {
    first_frame: Duration,
    rss_kib: Option<u64>,
}

/// Start cairn in `project` with `home` as CAIRN_HOME; time the first output holding `marker`;
/// read the RSS after `settle`; then quit it.
fn launch(home: &Path, project: &Path, args: &[&str], settle: Option<Duration>, marker: &'static [u8]) -> Launch {
    let pty = native_pty_system()
        .openpty(PtySize { rows: 40, cols: 120, pixel_width: 0, pixel_height: 0 })
        .expect("a pseudo-terminal");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_cairn"));
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
    let mut child = pty.slave.spawn_command(cmd).expect("cairn starts");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("a reader");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 8192];
        let mut sent = false;
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if !sent && seen.windows(marker.len()).any(|w| w == marker) {
                sent = true;
                let _ = tx.send(Instant::now());
            }
        }
    });
    let frame_at = rx.recv_timeout(Duration::from_secs(20)).expect("a first frame within 20 s");
    let rss_kib = settle.and_then(|d| {
        std::thread::sleep(d);
        let pid = child.process_id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
    });
    let mut writer = pty.master.take_writer().expect("a writer");
    let _ = std::io::Write::write_all(&mut writer, b"/quit\r");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    Launch { first_frame: frame_at - started, rss_kib }
}

/// A CAIRN_HOME holding one session of 2,000 messages (~5 MB) for `project`.
fn big_session(home: &Path, project: &Path) {
    let store = Store::open(&home.join("cairn.db")).expect("a database");
    let root = project.canonicalize().expect("the project");
    let id = store.project(&root).expect("a project");
    let session = store
        .create_session(id, NewSession { provider: "anthropic", model: "claude-sonnet-4-5", mode: "edit" })
        .expect("a session");
    let body = "fn handle(input: &str) -> Result<Output, Error> { parse(input).map(Output::from) }\n".repeat(110);
    for i in 0..500 {
        store.append_message(&session.id, &Message::user(format!("prompt {i}: fix src/module_{i}.rs"))).unwrap();
        let mut call = Message::assistant("Reading it.");
        call.content.push(Block::ToolCall(ToolCall::new(format!("c{i}"), "file_read", "{\"path\":\"src/a.rs\"}")));
        store.append_message(&session.id, &call).unwrap();
        store
            .append_message(
                &session.id,
                &Message::tool(ToolResult::ok(format!("c{i}"), "file_read", "x\n".repeat(100))),
            )
            .unwrap();
        store.append_message(&session.id, &Message::assistant(format!("## Step {i}\n\n```rust\n{body}```\n"))).unwrap();
    }
}

fn stats(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<40} n={:<3} median {:>7.1} ms   p99 {:>7.1} ms   max {:>7.1} ms",
        ms.len(),
        at(0.5),
        at(0.99),
        ms[ms.len() - 1]
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` and `cargo test --benches` ask what is here
    }
    let home = tempfile::tempdir().expect("a temp dir");
    let project = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(project.path().join(".git")).expect("a git marker");
    // Warm the page cache and the database once.
    launch(home.path(), project.path(), &[], None, END_OF_FRAME);
    let frames: Vec<f64> = (0..RUNS)
        .map(|_| launch(home.path(), project.path(), &[], None, END_OF_FRAME).first_frame.as_secs_f64() * 1e3)
        .collect();
    stats("launch to first frame (new session)", frames);
    let idle = launch(home.path(), project.path(), &[], Some(Duration::from_secs(2)), END_OF_FRAME);
    println!("idle RSS, new session: {:.1} MB", idle.rss_kib.unwrap_or(0) as f64 / 1024.0);

    let big_home = tempfile::tempdir().expect("a temp dir");
    big_session(big_home.path(), project.path());
    let frames: Vec<f64> = (0..10)
        .map(|_| {
            launch(big_home.path(), project.path(), &["--resume"], None, END_OF_FRAME).first_frame.as_secs_f64() * 1e3
        })
        .collect();
    stats("launch to first frame (--resume, 2,000 msgs)", frames);
    let shown: Vec<f64> = (0..10)
        .map(|_| launch(big_home.path(), project.path(), &["--resume"], None, RESUMED).first_frame.as_secs_f64() * 1e3)
        .collect();
    stats("launch to history on screen (--resume)", shown);
    let idle = launch(big_home.path(), project.path(), &["--resume"], Some(Duration::from_secs(2)), END_OF_FRAME);
    println!("idle RSS, resumed 2,000-message session: {:.1} MB", idle.rss_kib.unwrap_or(0) as f64 / 1024.0);
}
