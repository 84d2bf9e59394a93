//! Memory over a long session: the release binary, headless, 2,000 model turns against the
//! mock LLM over loopback, in a 32k window so the pipeline prunes and compacts all along.
//!
//! `cargo bench --bench memory_growth`: every turn the model calls one tool (a `file_read` of
//! one of 40 files of ~1.5k tokens, a `grep`, or a `bash` echo), so the session stores ~2,000
//! tool results and compacts every few dozen turns. As each request arrives the harness reads
//! cairn's resident memory (VmRSS in /proc/PID/status); a watcher thread keeps the peak
//! (VmHWM) until the process ends. A session whose memory is bounded shows a flat RSS after the
//! first compactions. `MEMORY_TURNS` changes the number of turns; `CAIRN_BIN` runs another
//! build of cairn (an older one, to compare).

#[path = "../tests/support/aux_calls.rs"]
mod aux_calls;
#[path = "support/files.rs"]
mod files;
#[allow(dead_code)] // the tests use more of the mock than this harness does
#[path = "../tests/support/mock_llm.rs"]
mod mock_llm;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aux_calls::{AuxCall, trailing_sections};
use mock_llm::{MockCall, MockLlm, Reply, Script, Turn};
use serde_json::json;

const FILES: usize = 40;
/// About 1,500 tokens of text each.
const FILE_BYTES: usize = 5_500;
/// Turns after which the RSS is reported.
const MARKS: &[usize] = &[10, 100, 250, 500, 750, 1_000, 1_250, 1_500, 1_750, 2_000];

/// A compaction's reply: the summary, a line per stretch it names, no memories.
fn auxiliary_reply(req: &mock_llm::RecordedRequest, n: usize) -> Reply {
    let trailing = trailing_sections(req, "read several files and ran a few commands; all fine", r#"{"memories": []}"#);
    Turn::text(format!(
        "## Goal\nRead the files, one per turn, and report.\n## Done — do not repeat\n- turns up to {n} done; nothing failed{trailing}"
    ))
    .into()
}

/// The model's turn `n`: one tool call, or the final answer after `turns`.
fn agent_turn(n: usize, turns: usize) -> Reply {
    if n >= turns {
        return Turn::text("done: every file read").into();
    }
    let call = match n % 4 {
        0 | 1 => MockCall::new("file_read", json!({"path": format!("f{:02}.txt", (n * 7) % FILES)})),
        2 => MockCall::new("grep", json!({"pattern": format!("value {:x}", n % 16), "path": "."})),
        _ => MockCall::new("bash", json!({"command": format!("echo turn {n}; ls | head -5")})),
    };
    Turn::tools(vec![call]).into()
}

/// A field of /proc/PID/status in KiB (VmRSS, VmHWM), 0 once the process is gone.
fn status_kib(pid: u32, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0 };
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|v| v.trim_start_matches(':').split_whitespace().next()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn mb(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn run(turns: usize) {
    let home = tempfile::tempdir().expect("a temp dir");
    let project = files::project(FILES, FILE_BYTES);
    let pid = Arc::new(AtomicU32::new(0));
    let agent_turns = Arc::new(AtomicUsize::new(0));
    let compactions = Arc::new(AtomicUsize::new(0));
    let samples = Arc::new(Mutex::new(Vec::<(usize, u64)>::new()));
    let (pid_seen, turns_seen, compactions_seen, samples_seen) =
        (pid.clone(), agent_turns.clone(), compactions.clone(), samples.clone());
    let mock = MockLlm::start(Script::new().context_window(32_000).responder(move |req| {
        if AuxCall::of(req).is_some() {
            let n = compactions_seen.fetch_add(1, Ordering::SeqCst);
            return Some(auxiliary_reply(req, n));
        }
        let n = turns_seen.fetch_add(1, Ordering::SeqCst);
        if MARKS.contains(&n) || n == turns {
            let rss = status_kib(pid_seen.load(Ordering::SeqCst), "VmRSS");
            samples_seen.lock().expect("samples").push((n, rss));
        }
        Some(agent_turn(n, turns))
    }))
    .await;
    let bin = std::env::var_os("CAIRN_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_cairn").into());
    let max_turns = (turns + 10).to_string();
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["-p", "read the files, one per turn", "--yes", "--output-format", "json"])
        .args(["--max-turns", &max_turns, "--context-window", "32000"])
        .current_dir(project.path())
        .env("CAIRN_HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CAIRN_LOG")
        .env("ANTHROPIC_API_KEY", "sk-bench")
        .env("ANTHROPIC_BASE_URL", mock.anthropic_base_url())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("cairn ran");
    let child_pid = child.id().unwrap_or(0);
    pid.store(child_pid, Ordering::SeqCst);
    // The peak over the whole life, exit included: VmHWM only grows, so the last read before
    // the process is gone is the peak.
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (done, peak) = (done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let hwm = status_kib(child_pid, "VmHWM");
                peak.fetch_max(hwm, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = tokio::time::timeout(Duration::from_secs(1_800), child.wait_with_output())
        .await
        .expect("the run hung")
        .expect("cairn ran");
    done.store(true, Ordering::SeqCst);
    watcher.join().expect("the watcher");
    assert!(out.status.success(), "cairn failed: {}", String::from_utf8_lossy(&out.stderr));
    let problems = mock.problems();
    assert!(problems.is_empty(), "{problems:#?}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON result");
    println!(
        "{turns} turns, {} requests, {} compactions (cairn's count), {} summariser/extraction calls",
        mock.requests().len(),
        result["context"]["compactions"],
        compactions.load(Ordering::SeqCst)
    );
    println!("| after turn | RSS |");
    println!("| ---: | ---: |");
    for (n, rss) in samples.lock().expect("samples").iter() {
        println!("| {n} | {:.1} MB |", mb(*rss));
    }
    println!("peak RSS over the run, exit included (VmHWM): {:.1} MB", mb(peak.load(Ordering::SeqCst)));
}

fn main() {
    let turns: usize = std::env::var("MEMORY_TURNS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(run(turns));
}
