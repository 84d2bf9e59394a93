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

#[allow(dead_code)] // the other interface bench uses more of it
#[path = "support/terminal.rs"]
mod terminal;

use std::time::Duration;

use terminal::{Running, big_session, frame_writes, stats};

const RUNS: usize = 30;
const KEYS: usize = 300;
/// The notice under a resumed conversation: the history is on screen.
const RESUMED: &[u8] = b"resumed session";

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
