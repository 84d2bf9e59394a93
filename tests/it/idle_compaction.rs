//! A compaction that finishes while the user is idle lands at once (issue 9): the real binary
//! in a pseudo-terminal, a summariser still working when the model's last answer came.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::aux_calls::AuxCall;
use crate::support::cairn::{Api, Sandbox, json_lines};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};
use crate::support::pty::Screen;

/// How long the summariser takes: long after the model's last answer.
const SUMMARY_DELAY_MS: u64 = 3_000;
const WINDOW: &str = "32000";
const READS: usize = 5;

fn is_summariser(req: &RecordedRequest) -> bool {
    AuxCall::of(req).is_some()
}

fn log(i: usize) -> String {
    (0..170).map(|n| format!("2026-11-22T10:00:{:02} run {i} step {n:04} status=ok detail=nothing\n", n % 60)).collect()
}

/// `READS` file reads, then the answer; every summariser call answers after a delay.
fn script(sandbox: &Sandbox) -> Script {
    let mut script = Script::new().context_window(32_000).responder(|req| {
        if AuxCall::of(req) == Some(AuxCall::Compaction) {
            return Some(Reply::Turn(
                Turn::text("## Goal\nRead the logs.\n## Done — do not repeat\n- read several logs")
                    .with_delay_ms(SUMMARY_DELAY_MS),
            ));
        }
        None
    });
    for i in 0..READS {
        sandbox.write(&format!("logs/{i}.log"), &log(i));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/{i}.log")})));
    }
    script.turn(Turn::text("All logs read."))
}

#[tokio::test]
async fn headless_waits_for_the_compaction_still_running_and_counts_it() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(script(&sandbox)).await;
    let out = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &["-p", "read the logs", "--output-format", "stream-json", "--context-window", WINDOW],
        )
        .await;
    assert!(out.status.success());
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let lines = json_lines(&out);
    let at = |kind: &str, phase: &str| {
        lines.iter().position(|l| l["type"] == kind && (phase.is_empty() || l["phase"] == phase)).unwrap_or_else(|| {
            panic!("no {kind} {phase} line: {lines:#?}");
        })
    };
    // The compaction was planned at a request and started once it was answered (its summary
    // reads that request from the cache); it was still running when the last answer came.
    let (started, answer, finished) = (
        at("compaction", "started"),
        lines.iter().rposition(|l| l["type"] == "assistant_delta").unwrap(),
        at("compaction", "finished"),
    );
    assert!(started < finished && answer < finished, "started {started}, answer {answer}, finished {finished}");
    // The result counts it: the compaction, and every call the provider saw.
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["context"]["compactions"], 1, "{result}");
    assert_eq!(result["usage"]["requests"].as_u64().unwrap(), mock.requests().len() as u64, "{result}");
    assert!(mock.requests().iter().any(is_summariser));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_terminal_a_compaction_finishing_while_idle_shows_within_a_second() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(script(&sandbox)).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--context-window", WINDOW]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/32k")));
        screen.type_text("read the logs");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("All logs read."));
        let answered = Instant::now();
        // No key is pressed from here on: the summary lands by itself.
        let shown = screen.wait("the compaction to land", |s| s.contains("compacted:"));
        let waited = answered.elapsed();
        // The summariser was asked before the answer came and answers SUMMARY_DELAY_MS later.
        eprintln!(
            "compaction shown {waited:?} after the answer (the summariser answers {SUMMARY_DELAY_MS} ms after it was asked)"
        );
        let limit = Duration::from_millis(SUMMARY_DELAY_MS + 1_000);
        assert!(waited <= limit, "shown {waited:?} after the answer (limit {limit:?}):\n{shown}");
        let status = shown.lines().last().unwrap_or_default().to_string();
        assert!(!status.contains("compacting"), "the status line still says compacting: {status}");
        screen.type_text("/quit");
        screen.send("\r");
        assert!(screen.wait_exit().success());
    });
    assert!(mock.requests().iter().any(is_summariser));
}
