//! The first day, on screen (issue 10): the real binary in a pseudo-terminal against the mock.
//! A resumed session shows what the live one showed; an approval dialog at 80×24 keeps the
//! call it asks about in sight and rings the bell; a plan is carried out with one key.

use std::time::Duration;

use serde_json::json;

use crate::support::aux_calls::AuxCall;
use crate::support::cairn::{Sandbox, user_texts};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// Wait until cairn owns the terminal and is connected: keys typed earlier would reach the
/// terminal's line discipline, not cairn.
fn ready(screen: &Screen) {
    screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
}

fn quit(screen: &mut Screen) {
    screen.type_text("/quit");
    screen.send("\r");
    assert!(screen.wait_exit().success());
}

/// The transcript rows of the screen (above the prompt box), trimmed, without blank ones.
fn transcript_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .take_while(|l| !l.starts_with('╭'))
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.trim().is_empty() && !l.contains("resumed session"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_the_same_transcript_as_the_live_one() {
    let sandbox = Sandbox::new();
    sandbox.write("src/cart.rs", "fn total() {}\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                MockCall::new("grep", json!({"pattern": "fn total", "path": "src"})),
                MockCall::new("glob", json!({"pattern": "*.rs"})),
            ]))
            .turn(Turn::text("### Found\n\nIt is in `src/cart.rs`.")),
    )
    .await;
    let mut live = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let before = tokio::task::block_in_place(|| {
        ready(&live);
        live.type_text("where is total?");
        live.send("\r");
        let shown = live.wait("the turn to end", |s| s.contains("2 requests"));
        quit(&mut live);
        shown
    });
    let mut again = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--resume"]));
    let after = tokio::task::block_in_place(|| {
        let shown = again.wait("the resumed session", |s| s.contains("resumed session") && s.contains("2 requests"));
        quit(&mut again);
        shown
    });
    let (live_rows, resumed_rows) = (transcript_rows(&before), transcript_rows(&after));
    assert!(live_rows.iter().any(|r| r.contains("fn total in src")), "the grep pattern: {live_rows:#?}");
    assert!(!live_rows.iter().any(|r| r.contains("###")), "headings without hashes: {live_rows:#?}");
    // The turn summary's time is measured live and from the store; the rest must match.
    let without_time = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .map(|r| if r.contains(" requests · ") { r.split_once(" · ").unwrap().1.to_string() } else { r.clone() })
            .collect()
    };
    assert_eq!(without_time(&resumed_rows), without_time(&live_rows), "live:\n{before}\nresumed:\n{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_at_80_by_24_keeps_its_call_in_sight_and_rings_the_bell() {
    let sandbox = Sandbox::new();
    let mut script = Script::new();
    for i in 0..6 {
        script = script.turn(Turn::text(format!("Answer {i}:\n\n{}", "a line of explanation\n\n".repeat(5))));
    }
    let mock = MockLlm::start(
        script
            .turn(Turn::tool("bash", json!({"command": "cargo test"})).with_text("I will run the tests."))
            .turn(Turn::text("Done.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.resize(80, 24);
        // Type once cairn has repainted at the new size (its status line on the last row), as a
        // person would: keys sent while the resize is still being handled were lost under load.
        screen.wait("the status line at 80×24", |s| s.lines().nth(23).is_some_and(|l| l.contains("/200k")));
        for i in 0..6 {
            screen.type_text(&format!("question {i}"));
            screen.send("\r");
            screen.wait("the answer", |s| s.contains(&format!("Answer {i}:")) && s.contains("request"));
        }
        let bells = screen.raw.lock().unwrap().iter().filter(|b| **b == 0x07).count();
        screen.type_text("run the tests");
        screen.send("\r");
        let shown = screen.wait("the dialog", |s| s.contains("Allow bash?"));
        let rows: Vec<&str> = shown.lines().collect();
        let top = rows.iter().position(|r| r.contains("Allow bash?")).unwrap();
        assert!(rows[top - 1].contains("bash  $ cargo test  waiting for your approval"), "{shown}");
        assert!(rows[..top].iter().any(|r| r.contains("I will run the tests.")), "the reason is in sight:\n{shown}");
        let start = std::time::Instant::now();
        while screen.raw.lock().unwrap().iter().filter(|b| **b == 0x07).count() == bells {
            assert!(start.elapsed() < crate::support::pty::PATIENCE, "no bell for the approval");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(800));
        screen.send("n");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("Done."));
        quit(&mut screen);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_after_a_plan_carries_it_out_in_edit_mode() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new().turn(Turn::text("1. Rename the function.\n2. Add a test.")).turn(Turn::text("Both steps done.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--mode", "plan"]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("plan the rename");
        screen.send("\r");
        screen.wait("the offer", |s| s.contains("plan ready · Enter carry it out in edit mode"));
        screen.send("\r");
        let shown = screen.wait("the plan carried out", |s| s.contains("Both steps done."));
        assert!(shown.lines().last().unwrap_or_default().contains("EDIT"), "{shown}");
        quit(&mut screen);
    });
    let requests = mock.requests();
    let handoff = user_texts(&requests[1]);
    assert!(handoff.last().unwrap().contains("Carry out the plan"), "{handoff:?}");
    let tools = crate::support::cairn::tool_names(&requests[1]);
    assert!(tools.iter().any(|t| t == "file_edit"), "edit mode's tools: {tools:?}");
}

/// After a compaction cairn keeps in memory only what the model still sees; a resumed session
/// still shows the whole conversation, what the summary stands for included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_resumed_after_a_compaction_shows_what_the_summary_stands_for() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().responder(|req| {
        (AuxCall::of(req) == Some(AuxCall::Compaction))
            .then(|| Turn::text("## Goal\nRead the notes.\n## Done — do not repeat\n- read six notes").into())
    });
    for i in 0..6 {
        sandbox.write(&format!("notes/n{i}.txt"), &format!("note {i}: {}\n", "nothing urgent ".repeat(40)));
        let read = Turn::tool("file_read", json!({"path": format!("notes/n{i}.txt")}));
        script = script.turn(if i == 0 { read.with_text("I will start with the oldest note.") } else { read });
    }
    let mock = MockLlm::start(script.turn(Turn::text("All six notes read."))).await;
    let first = sandbox.run(crate::support::cairn::Api::Anthropic, &mock, &["-p", "read the notes"]).await;
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let compacted = sandbox
        .run(crate::support::cairn::Api::Anthropic, &mock, &["--resume", "-p", "/compact", "--output-format", "json"])
        .await;
    let result: serde_json::Value = serde_json::from_slice(&compacted.stdout).expect("the JSON result");
    assert_eq!(result["context"]["compactions"], 1, "{result}");

    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--resume"]));
    let shown = tokio::task::block_in_place(|| {
        let shown =
            screen.wait("the resumed session", |s| s.contains("resumed session") && s.contains("All six notes"));
        quit(&mut screen);
        shown
    });
    assert!(shown.contains("I will start with the oldest note."), "the summarised answer is shown:\n{shown}");
    assert!(shown.contains("notes/n0.txt"), "the summarised call is shown:\n{shown}");
}
