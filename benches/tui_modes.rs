//! The interface in both modes in one run — full screen, and inline (`--inline`) — with the real
//! (release) binary in a 120×40 pseudo-terminal.
//!
//! `cargo bench --bench tui_modes`, for each mode:
//! - keystroke to frame: a resumed session of 2,000 messages (~5 MB; inline mode first writes
//!   all of it into the scrollback), 300 keys 40 ms apart (as fast typing is), each timed from
//!   the write to the end of the frame that shows it (`ESC[?2026l`);
//! - streaming at 1,000 tokens/s: the mock model streams an answer of 4,000 tokens (~4
//!   characters each: prose, lists, code blocks), two tokens a delta, 2 ms apart, while
//!   cairn runs under strace recording every write. A torn frame is a write that opens a
//!   synchronized update and does not close it (a frame in two writes, or cut short). It
//!   reports the rate the tokens came at, the frames drawn and their rate, the longest gap
//!   between two frames while the answer streamed, and the torn frames.

#[allow(dead_code, unused_imports)] // the tests use more of the mock than this harness does
#[path = "../tests/support/mock_llm.rs"]
mod mock_llm;
#[allow(dead_code)] // the launch bench uses more of it
#[path = "support/terminal.rs"]
mod terminal;

use std::path::Path;
use std::time::{Duration, Instant};

use mock_llm::{MockLlm, Script, Turn};
use terminal::{Running, big_session, stats};

const KEYS: usize = 300;
const TOKENS: usize = 4_000;
/// Deltas of two tokens every 2 ms: 1,000 tokens a second, on timers that keep 2 ms well.
const DELTAS: usize = 2_000;
const DELTA_MS: u64 = 2;
const RESUMED: &[u8] = b"resumed session";
const MODES: [(&str, &[&str]); 2] = [("full screen", &[]), ("inline", &["--inline"])];

/// About `TOKENS` tokens of markdown, ending with a line to wait for.
fn long_answer() -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.len() < TOKENS * 4 - 200 {
        k += 1;
        s.push_str(&format!("## Part {k}\n\nThe parser keeps its state between calls, and errors carry the line they came from; this part explains step {k} of the change.\n\n"));
        s.push_str("- the reader is split from the writer\n- each error names its file and line\n\n");
        s.push_str(
            "```rust\nfn step(input: &str) -> Result<Output, Error> {\n    parse(input).map(Output::from)\n}\n```\n\n",
        );
    }
    s.push_str("End of the streamed answer.");
    s
}

/// Each key, the moment the frame before it ended plus 40 ms, to the end of its frame.
fn keystrokes(project: &Path, home: &Path, args: &[&str]) -> Vec<f64> {
    let mut all = vec!["--resume"];
    all.extend_from_slice(args);
    let mut run = Running::start(home, project, &all);
    run.first_frame();
    run.wait_for(RESUMED);
    // Loading the session is done when its context figures come (and the memory it freed is
    // given back): give it two seconds, in both modes.
    std::thread::sleep(Duration::from_secs(2));
    let keys: Vec<f64> = (0..KEYS)
        .map(|i| {
            std::thread::sleep(Duration::from_millis(40));
            let key: &[u8] = if i % 2 == 0 { b"x" } else { b"\x7f" };
            run.keystroke(key).as_secs_f64() * 1e3
        })
        .collect();
    run.quit();
    if let Some((i, ms)) = keys.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) {
        println!("  (slowest: key {i} of {KEYS}, {ms:.2} ms)");
    }
    keys
}

struct Streamed {
    tokens_per_s: f64,
    frames: usize,
    frames_per_s: f64,
    longest_gap_ms: f64,
    torn: Option<(usize, usize)>,
}

fn streaming(runtime: &tokio::runtime::Runtime, project: &Path, args: &[&str]) -> Streamed {
    let home = tempfile::tempdir().expect("a temp dir");
    let script = Script::new().chunk_delay_ms(DELTA_MS).turn(Turn::text(long_answer()).with_pieces(DELTAS));
    let mock = runtime.block_on(MockLlm::start(script));
    let strace = std::process::Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success());
    let trace = home.path().join("writes.strace");
    let mut run =
        Running::start_with(home.path(), project, args, strace.then_some(&*trace), &mock.anthropic_base_url());
    run.first_frame();
    std::thread::sleep(Duration::from_millis(500));
    use std::io::Write;
    run.writer.write_all(b"stream an answer\r").expect("a prompt");
    run.writer.flush().expect("a flush");
    let mut frames = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    // The answer's first words on screen, and its last: the time it streamed, as the terminal saw it.
    let (first, done) = (b"Part 1".as_slice(), b"End of the streamed answer.".as_slice());
    let mut started = None;
    let ended = loop {
        while let Ok(at) = run.frames.try_recv() {
            frames.push(at);
        }
        let now = Instant::now();
        let seen = run.seen.lock().expect("the output");
        if started.is_none() && seen.windows(first.len()).any(|w| w == first) {
            started = Some(now);
        }
        if seen.windows(done.len()).any(|w| w == done) {
            break now;
        }
        drop(seen);
        assert!(Instant::now() < deadline, "the answer never finished");
        std::thread::sleep(Duration::from_millis(1));
    };
    let start = started.unwrap_or(ended);
    std::thread::sleep(Duration::from_millis(300));
    run.quit();
    std::thread::sleep(Duration::from_millis(300));
    let streamed = ended.duration_since(start).as_secs_f64().max(1e-3);
    let during: Vec<Instant> = frames.into_iter().filter(|t| *t >= start && *t <= ended).collect();
    let longest = during.windows(2).map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1e3).fold(0.0, f64::max);
    let torn = strace.then(|| torn_frames(&std::fs::read_to_string(&trace).unwrap_or_default()));
    Streamed {
        tokens_per_s: TOKENS as f64 / streamed,
        frames: during.len(),
        frames_per_s: during.len() as f64 / streamed,
        longest_gap_ms: longest,
        torn,
    }
}

/// From strace's log of writes: the frames (writes that open a synchronized update) and those
/// of them that do not also close it.
fn torn_frames(log: &str) -> (usize, usize) {
    let mut frames = 0;
    let mut torn = 0;
    for line in log.lines() {
        let Some(call) = line.find("write(").map(|i| &line[i + 6..]) else { continue };
        let Some((_, rest)) = call.split_once(", ") else { continue };
        if !rest.starts_with("\"\\33[?2026h") {
            continue;
        }
        frames += 1;
        if !rest.contains("\\33[?2026l\", ") {
            torn += 1;
        }
    }
    (frames, torn)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` asks what is here
    }
    let project = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(project.path().join(".git")).expect("a git marker");
    let big_home = tempfile::tempdir().expect("a temp dir");
    big_session(big_home.path(), project.path());
    // Warm the page cache.
    let warm = Running::start(big_home.path(), project.path(), &["--resume"]);
    warm.first_frame();
    warm.quit();

    for (mode, args) in MODES {
        stats(&format!("keystroke to frame, {mode} (2,000 msgs)"), keystrokes(project.path(), big_home.path(), args));
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    for (mode, args) in MODES {
        let s = streaming(&runtime, project.path(), args);
        let torn = match s.torn {
            Some((frames, torn)) => format!("{torn} torn of {frames} frames written"),
            None => "strace is not installed: torn frames not counted".to_string(),
        };
        println!(
            "streaming, {mode:<12} {:>6.0} tokens/s   {} frames ({:.0}/s)   longest gap {:.1} ms   {torn}",
            s.tokens_per_s, s.frames, s.frames_per_s, s.longest_gap_ms
        );
    }
}
