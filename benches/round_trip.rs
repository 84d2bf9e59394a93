//! Client time per round trip as a session grows from 2k to 100k tokens, with the real
//! (release) binary against the mock LLM over loopback.
//!
//! `cargo bench --bench round_trip`: a headless run reads 50 files of ~2k tokens each, one
//! `file_read` per model request, so request n carries about 2k·n tokens. For every round trip
//! the mock notes when its answer went out and when the next request's headers arrived; the gap
//! is cairn's own time: reading the stream, storing the message, running the tool, the context
//! pipeline, building and sending the next request. On Linux the harness also reads cairn's CPU
//! time (every thread's, from /proc/PID/task/*/schedstat) as each request arrives: the CPU a
//! round trip took, which other processes on a busy machine do not inflate the way they do
//! wall time. Five runs per wire; medians per band of session size. `ROUND_TRIP_RUNS` changes
//! the number of runs; `CAIRN_BIN` runs another build of cairn (an older one, to compare).

#[path = "support/files.rs"]
mod files;
#[allow(dead_code)] // the tests use more of the mock than this harness does
#[path = "../tests/support/mock_llm.rs"]
mod mock_llm;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_llm::{MockCall, MockLlm, RecordedRequest, Reply, Script, Turn};
use serde_json::json;

const FILES: usize = 50;
/// About 2,000 tokens of text each.
const FILE_BYTES: usize = 7_000;
/// Session-size bands, in thousands of tokens of the request that ends the round trip.
const BANDS: &[(u64, u64)] = &[(0, 10), (10, 25), (25, 40), (40, 60), (60, 80), (80, 200)];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
}

fn tool_results(req: &RecordedRequest) -> usize {
    req.messages()
        .iter()
        .map(|m| {
            if m["role"] == "tool" {
                1
            } else {
                m["content"].as_array().map_or(0, |blocks| blocks.iter().filter(|b| b["type"] == "tool_result").count())
            }
        })
        .sum()
}

fn respond(req: &RecordedRequest) -> Option<Reply> {
    let read = tool_results(req);
    Some(if read < FILES {
        Turn::tools(vec![MockCall::new("file_read", json!({"path": format!("f{read:02}.txt")}))]).into()
    } else {
        Turn::text("read them all").into()
    })
}

/// CPU time of every live thread of `pid`, in nanoseconds (0 where /proc has no schedstat).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()))
        .sum()
}

/// One round trip: the tokens of the request that ends it, and cairn's wall and CPU time.
struct Trip {
    tokens: u64,
    wall_ms: f64,
    cpu_ms: f64,
}

async fn one_run(wire: Wire) -> Vec<Trip> {
    let home = tempfile::tempdir().expect("a temp dir");
    let project = files::project(FILES, FILE_BYTES);
    let pid = Arc::new(AtomicU32::new(0));
    let cpu = Arc::new(Mutex::new(Vec::new()));
    let (pid_seen, cpu_seen) = (pid.clone(), cpu.clone());
    let mock = MockLlm::start(Script::new().responder(move |req| {
        let pid = pid_seen.load(Ordering::SeqCst);
        cpu_seen.lock().expect("cpu samples").push(cpu_ns(pid));
        respond(req)
    }))
    .await;
    let bin = std::env::var_os("CAIRN_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_cairn").into());
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["-p", "read every file", "--max-turns", "200", "--output-format", "json"])
        .current_dir(project.path())
        .env("CAIRN_HOME", home.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CAIRN_LOG")
        .stdin(std::process::Stdio::null());
    match wire {
        Wire::Anthropic => {
            cmd.env("ANTHROPIC_API_KEY", "sk-bench").env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
        }
        Wire::OpenAi => {
            cmd.env("OPENAI_API_KEY", "sk-bench")
                .env("OPENAI_BASE_URL", mock.openai_base_url())
                .args(["--model", "gpt-4o"]);
        }
    }
    let child =
        cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("cairn ran");
    pid.store(child.id().unwrap_or(0), Ordering::SeqCst);
    let out = tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
        .await
        .expect("the run hung")
        .expect("cairn ran");
    assert!(out.status.success(), "cairn failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let requests = mock.requests();
    let timings = mock.timings();
    let cpu = cpu.lock().expect("cpu samples").clone();
    assert_eq!(requests.len(), FILES + 1);
    (1..requests.len())
        .map(|i| Trip {
            tokens: requests[i].body.to_string().len() as u64 / 4,
            wall_ms: timings[i].0.duration_since(timings[i - 1].1).as_secs_f64() * 1_000.0,
            cpu_ms: cpu[i].saturating_sub(cpu[i - 1]) as f64 / 1e6,
        })
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn main() {
    let runs: usize = std::env::var("ROUND_TRIP_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let mut all = Vec::new();
        for _ in 0..runs {
            all.extend(runtime.block_on(one_run(wire)));
        }
        println!("{wire:?} wire, {runs} runs of {FILES} round trips, medians per round trip:");
        let mut first_band = None;
        for &(low, high) in BANDS {
            let band: Vec<&Trip> = all.iter().filter(|t| (low * 1_000..high * 1_000).contains(&t.tokens)).collect();
            let n = band.len();
            if n == 0 {
                continue;
            }
            let wall = median(&mut band.iter().map(|t| t.wall_ms).collect::<Vec<_>>());
            let cpu = median(&mut band.iter().map(|t| t.cpu_ms).collect::<Vec<_>>());
            let (base_wall, base_cpu) = *first_band.get_or_insert((wall, cpu));
            println!(
                "  {:>3}k–{:<3}k tokens: wall {wall:5.2} ms ({:+5.1} %)  cpu {cpu:5.2} ms ({:+5.1} %)  n = {n}",
                low,
                if high >= 200 { "…".to_string() } else { format!("{high}") },
                (wall / base_wall - 1.0) * 100.0,
                (cpu / base_cpu - 1.0) * 100.0,
            );
        }
    }
}
