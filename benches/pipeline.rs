//! Benchmarks of the context pipeline over the recorded corpus (`../shared/corpus`, or
//! `CAIRN_CORPUS`): the pre-flight of every request of every session replayed turn by turn,
//! the local (non-LLM) work of a compaction, and a full rebuild on resume.
//!
//! `cargo bench --bench pipeline` prints the per-turn distribution (with what each request asks
//! of the pipeline after its pre-flight, as the agent asked before the request was built once
//! and as it asks now), then criterion's figures.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cairn::config::ContextConfig;
use cairn::context::{
    ContextBudget, ContextState, Pipeline, PreflightInput, Summarizer, SummaryError, Trajectory, parse_trajectory,
    summarize,
};
use cairn::conversation::{Message, Role};
use std::hint::black_box;

use criterion::{BatchSize, Criterion};
use futures_util::future::BoxFuture;

fn corpus_dir() -> PathBuf {
    std::env::var_os("CAIRN_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

fn load_corpus() -> Vec<(String, Trajectory)> {
    let mut files: Vec<PathBuf> = ["miniswe", "openhands"]
        .iter()
        .filter_map(|d| std::fs::read_dir(corpus_dir().join(d)).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).ok()?;
            Some((f.file_name()?.to_string_lossy().into_owned(), parse_trajectory(&text)))
        })
        .collect()
}

/// A summariser that answers at once, so only cairn's own work is measured.
struct Immediate;

impl Summarizer for Immediate {
    fn summarize<'a>(&'a self, _: &'a str, _: &'a str, _: u32) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async { Ok("## Goal\nbenchmark summary\n## Done — do not repeat\n- things".to_string()) })
    }

    fn window(&self) -> u64 {
        200_000
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(f)
}

fn input(window: u64, overhead: u64, now: i64) -> PreflightInput {
    let config = ContextConfig::default();
    PreflightInput {
        budget: ContextBudget::new(window, &config),
        overhead,
        now,
        compaction_running: false,
        compaction_allowed: true,
    }
}

/// What the agent asked of the pipeline for one request after its pre-flight, before the request
/// was built once: the status line's estimate, the messages, the rough size for calibration.
fn asks_as_before(p: &mut Pipeline, overhead: u64, window: u64) -> Duration {
    let start = Instant::now();
    let estimate = p.estimate(overhead, window);
    let view = p.view(window);
    let raw = p.raw_tokens(overhead, window);
    let elapsed = start.elapsed();
    black_box((estimate, view, raw));
    elapsed
}

/// The same, asked once: the messages and their figures together.
fn asks_now(p: &mut Pipeline, overhead: u64, window: u64) -> Duration {
    let start = Instant::now();
    let sent = p.for_request(overhead, window);
    let elapsed = start.elapsed();
    black_box(sent);
    elapsed
}

/// What each request asks of the pipeline once the pre-flight has run: as before, as now.
#[derive(Default)]
struct Asks {
    before: Vec<Duration>,
    now: Vec<Duration>,
}

/// Replay a session, timing what runs before each request — the pre-flight and the request's
/// messages and figures — and the local work of each compaction the pipeline asks for
/// (planning, the transcript, chunking, applying; the summariser answers at once). `asks`:
/// after each pre-flight, the asks as the agent made them before and as now, in turns
/// alternating which goes first.
fn replay_timed(
    t: &Trajectory,
    window: u64,
    times: &mut Vec<Duration>,
    compactions: &mut Vec<Duration>,
    asks: &mut Asks,
) {
    let config = ContextConfig::default();
    let overhead = 3_000;
    let mut p = Pipeline::new(config);
    let mut seq = 0;
    for (i, m) in t.messages.iter().enumerate() {
        if m.role == Role::Assistant {
            let inp = input(window, overhead, i as i64 * 60);
            let start = Instant::now();
            let pre = p.preflight(&inp);
            let sent = p.for_request(overhead, window);
            let elapsed = start.elapsed();
            black_box(sent);
            times.push(elapsed);
            if i % 2 == 0 {
                asks.before.push(asks_as_before(&mut p, overhead, window));
                asks.now.push(asks_now(&mut p, overhead, window));
            } else {
                asks.now.push(asks_now(&mut p, overhead, window));
                asks.before.push(asks_as_before(&mut p, overhead, window));
            }
            if pre.compaction.is_some() {
                let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
                let start = Instant::now();
                if let Some(plan) = p.plan_compaction(&inp.budget, false) {
                    let before = p.estimate(overhead, window);
                    let summary = runtime.block_on(summarize(&plan, &Immediate, 3.2, &|_, _| {})).expect("summary");
                    p.apply_compaction(&plan, summary, &inp, before);
                    compactions.push(start.elapsed());
                }
                p.preflight(&PreflightInput { compaction_allowed: false, ..inp });
            }
            let raw = p.raw_tokens(overhead, window);
            p.report_usage(raw, raw);
        }
        seq += 1;
        p.append(seq, m.clone());
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn describe(what: &str, times: &mut [Duration]) {
    if times.is_empty() {
        println!("{what}: none");
        return;
    }
    times.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{what}: {} samples, median {:.1} µs, p95 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        times.len(),
        us(percentile(times, 0.5)),
        us(percentile(times, 0.95)),
        us(percentile(times, 0.99)),
        us(times[times.len() - 1]),
    );
}

fn per_turn_report(corpus: &[(String, Trajectory)]) {
    for window in [200_000u64, 128_000, 32_000] {
        let mut times = Vec::new();
        let mut compactions = Vec::new();
        let mut asks = Asks::default();
        // Several passes, so a noisy moment of the machine weighs less.
        for _ in 0..5 {
            for (_, t) in corpus {
                replay_timed(t, window, &mut times, &mut compactions, &mut asks);
            }
        }
        describe(&format!("pre-flight per turn, window {window}"), &mut times);
        describe(&format!("compaction local work, window {window}"), &mut compactions);
        describe(&format!("  after it, the request's asks as before (3 calls), window {window}"), &mut asks.before);
        describe(&format!("  after it, the request's asks now (1 call), window {window}"), &mut asks.now);
    }
}

fn largest(corpus: &[(String, Trajectory)]) -> &Trajectory {
    &corpus.iter().max_by_key(|(_, t)| t.messages.iter().map(|m| m.char_len()).sum::<usize>()).expect("a session").1
}

/// The stored messages and state of a session at the moment it first needs a compaction.
fn first_compaction_point(t: &Trajectory, window: u64) -> (Vec<(i64, Message)>, ContextState) {
    let mut p = Pipeline::new(ContextConfig::default());
    let mut stored = Vec::new();
    for (i, m) in t.messages.iter().enumerate() {
        if m.role == Role::Assistant && p.preflight(&input(window, 3_000, i as i64 * 60)).compaction.is_some() {
            break;
        }
        stored.push((i as i64 + 1, m.clone()));
        p.append(i as i64 + 1, m.clone());
    }
    (stored, p.state().clone())
}

/// The largest session stored whole, with the context state a live 32k session would have.
fn stored_with_state(t: &Trajectory, window: u64) -> (Vec<(i64, Message)>, ContextState) {
    let stored: Vec<(i64, Message)> = t.messages.iter().cloned().enumerate().map(|(i, m)| (i as i64 + 1, m)).collect();
    let mut p = Pipeline::new(ContextConfig::default());
    for (i, (seq, m)) in stored.iter().enumerate() {
        if m.role == Role::Assistant {
            let inp = input(window, 3_000, i as i64 * 60);
            if p.preflight(&inp).compaction.is_some()
                && let Some(plan) = p.plan_compaction(&inp.budget, false)
            {
                let before = p.estimate(3_000, window);
                let summary = block_on(summarize(&plan, &Immediate, 3.2, &|_, _| {})).expect("summary");
                p.apply_compaction(&plan, summary, &inp, before);
            }
        }
        p.append(*seq, m.clone());
    }
    (stored, p.state().clone())
}

fn main() {
    let corpus = load_corpus();
    if corpus.is_empty() {
        eprintln!("no corpus at {}; set CAIRN_CORPUS to the folder of recorded sessions", corpus_dir().display());
        return;
    }
    println!("{} sessions from {}", corpus.len(), corpus_dir().display());
    per_turn_report(&corpus);

    let big = largest(&corpus);
    let mut c = Criterion::default().configure_from_args().sample_size(30);

    // The local work of the first compaction the largest session needs at 32k: planning, the
    // transcript, chunking, applying — with a summariser that answers at once.
    let config = ContextConfig::default();
    let (upto, state) = first_compaction_point(big, 32_000);
    c.bench_function("compaction local work, largest session, 32k", |b| {
        b.iter_batched(
            || Pipeline::restore(config.clone(), state.clone(), upto.clone()),
            |mut p| {
                let inp = input(32_000, 3_000, 0);
                let plan = p.plan_compaction(&inp.budget, false).expect("a plan");
                let before = p.estimate(3_000, 32_000);
                let summary = block_on(summarize(&plan, &Immediate, 3.2, &|_, _| {})).expect("summary");
                black_box(p.apply_compaction(&plan, summary, &inp, before))
            },
            BatchSize::LargeInput,
        )
    });

    // Resume: the stored messages and the persisted state back to the exact view.
    let (stored, state) = stored_with_state(big, 32_000);
    let state_json = serde_json::to_string(&state).expect("state");
    c.bench_function("full rebuild on resume, largest session", |b| {
        b.iter(|| {
            let state: ContextState = serde_json::from_str(&state_json).expect("state");
            let mut p = Pipeline::restore(config.clone(), state, stored.clone());
            p.apply_all_dedup();
            black_box(p.view(32_000).len())
        })
    });
    c.final_summary();
}
