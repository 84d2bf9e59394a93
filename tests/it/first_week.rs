//! The first week (issue 24): what a new user met trying each feature — the real binary against
//! the mock model, in a pseudo-terminal where the screen is what matters.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cairn::Sandbox;
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn ready(screen: &Screen) {
    screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
}

/// The first turn after `/new` counts its own request, not the background call (the compaction,
/// which also names the memories worth keeping) the session left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_turn_after_new_counts_only_its_own_requests() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().responder(|req| match AuxCall::of(req) {
        Some(AuxCall::Compaction) => {
            let summary = "## Goal\nRead the notes.\n## Done — do not repeat\n- read six notes";
            Some(Turn::text(format!("{summary}{}", trailing_sections(req, "read the notes", "[]"))).into())
        }
        None => None,
    });
    for i in 0..6 {
        sandbox.write(&format!("notes/n{i}.txt"), &format!("note {i}: {}\n", "nothing urgent ".repeat(40)));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("notes/n{i}.txt")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("All six notes read.")).turn(Turn::text("A fresh start."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("read the notes");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("All six notes read."));
        screen.type_text("/compact");
        screen.send("\r");
        // The compaction's call runs in the background; wait until it has been made.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !mock.requests().iter().any(|r| AuxCall::of(r) == Some(AuxCall::Compaction)) {
            assert!(Instant::now() < deadline, "no compaction call after /compact");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        screen.type_text("/new");
        screen.send("\r");
        screen.wait("the new session", |s| !s.contains("All six notes read."));
        screen.type_text("hello");
        screen.send("\r");
        let done = screen.wait("the turn to end", |s| s.contains("A fresh start.") && s.contains("request"));
        assert!(done.contains("1 request"), "the previous session's background calls were counted:\n{done}");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}
