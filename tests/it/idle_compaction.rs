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

/// `READS` file reads and a short one, then the answer; every summariser call answers after a
/// delay. The compaction is planned at the request after the last long read and starts once the
/// model answers it with the short read (a compaction planned at a request answered without a
/// tool call waits for the next prompt); it is still running when the final answer comes.
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
    sandbox.write("logs/index.txt", "0.log to 4.log\n");
    script.turn(Turn::tool("file_read", json!({"path": "logs/index.txt"}))).turn(Turn::text("All logs read."))
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

/// The window of the next test: compaction is due from 20,400 tokens (blocking at 23,040).
const SMALL_WINDOW: u64 = 32_000;
/// Where the test aims the estimate of its turn's last request: past the compaction threshold,
/// and with one request's usual growth (about 3k here) past blocking, yet under blocking itself.
const AIM: u64 = 21_000;
/// The longest file the test writes, in cairn's rough tokens (a result is cut at 15 % of the
/// usable window: 11.5 KB).
const MAX_FILE: u64 = 3_400;

/// What the mock counts a request as (and reports as its usage): its JSON, four characters a
/// token.
fn counted(req: &RecordedRequest) -> u64 {
    let chars: usize = ["system", "messages", "tools"].iter().map(|k| req.body[*k].to_string().len()).sum();
    chars.div_ceil(4) as u64
}

/// A file of about `tokens` as cairn first counts a result (3.2 characters a token; file_read
/// adds 7 to each line).
fn file_of(tokens: u64) -> String {
    format!("{}\n", "y".repeat(93)).repeat((tokens as f64 * 3.2 / 101.0) as usize)
}

/// A compaction planned at the request a turn's final answer replies to is not started then —
/// a session that ends there pays for no summary that would never land — but with the user's
/// next prompt, reading that request in place (from the provider's cache) beside the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_planned_at_a_final_answer_starts_with_the_next_prompt() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let sandbox = Sandbox::new();
    sandbox.write("c.txt", &format!("{}\n", "x".repeat(92)).repeat(3));
    let project = sandbox.project.path().to_path_buf();
    // The model reads files until the turn's last request is at AIM, then answers: smaller ones
    // first, then one sized from the usage the mock reports for the request before it (an
    // early compaction before it would have to repay four times its cost in the few requests
    // a session of this length is expected to go on: it does not).
    let (reads, done) = (AtomicUsize::new(0), AtomicBool::new(false));
    let script = Script::new().responder(move |req| {
        if is_summariser(req) {
            return Some(Reply::Turn(Turn::text("## Goal\nRead the files.\n## Done — do not repeat\n- read f1")));
        }
        if req.body.to_string().contains("now c.txt") {
            let read_c = req.messages().last().is_some_and(|m| m.to_string().contains("xxxx"));
            let turn =
                if read_c { Turn::text("Read c too.") } else { Turn::tool("file_read", json!({"path": "c.txt"})) };
            return Some(Reply::Turn(turn));
        }
        if done.load(Ordering::SeqCst) {
            return Some(Reply::Turn(Turn::text("Read them all.")));
        }
        let n = reads.fetch_add(1, Ordering::SeqCst) + 1;
        let left = AIM.saturating_sub(counted(req) + 40);
        // Until the last file fits, files of at most 3k.
        let size = if left <= MAX_FILE {
            done.store(true, Ordering::SeqCst);
            left
        } else {
            (left - MAX_FILE + 300).min(3_000)
        };
        std::fs::write(project.join(format!("f{n}.txt")), file_of(size)).unwrap();
        Some(Reply::Turn(Turn::tool("file_read", json!({"path": format!("f{n}.txt")}))))
    });
    let mock = MockLlm::start(script).await;
    let window = SMALL_WINDOW.to_string();
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--context-window", &window]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/32k")));
        screen.type_text("read the files");
        screen.send("\r");
        screen.wait("the first answer", |s| s.contains("Read them all."));
        // The user is idle: nothing is summarised while nothing says the session goes on.
        std::thread::sleep(Duration::from_millis(1_500));
        assert!(!mock.requests().iter().any(is_summariser), "no summary call after the final answer");
        screen.type_text("now c.txt");
        screen.send("\r");
        screen.wait("the second answer", |s| s.contains("Read c too."));
        screen.wait("the compaction to land", |s| s.contains("compacted:"));
        screen.type_text("/quit");
        screen.send("\r");
        assert!(screen.wait_exit().success());
    });
    let requests = mock.requests();
    let summaries: Vec<usize> = (0..requests.len()).filter(|&i| is_summariser(&requests[i])).collect();
    assert_eq!(summaries.len(), 1, "one summary call");
    // It came with the next prompt (beside its first request), not while the user was idle.
    let first_of_turn_2 = requests.iter().position(|r| r.body.to_string().contains("now c.txt")).unwrap();
    let last_of_turn_1 = (0..first_of_turn_2).rev().find(|&i| !is_summariser(&requests[i])).unwrap();
    assert!(summaries[0] > last_of_turn_1, "{summaries:?}");
    // Read in place: the conversation of the turn's last request, then the instruction.
    let before = &requests[last_of_turn_1];
    let call = &requests[summaries[0]];
    let n = before.messages().len();
    assert_eq!(call.messages()[..n - 1], before.messages()[..n - 1], "the request it was planned at, as sent");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
