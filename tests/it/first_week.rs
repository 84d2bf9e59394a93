//! The first week (issue 24): what a new user met trying each feature — the real binary against
//! the mock model, in a pseudo-terminal where the screen is what matters.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cairn::Sandbox;
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};
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

/// One figure of a screen, read off it.
type Figure = dyn Fn(&str) -> String;

/// The row of `screen` that contains `needle`, trimmed.
fn row<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen.lines().find(|l| l.contains(needle)).map(str::trim).unwrap_or_else(|| panic!("no {needle:?} in:\n{screen}"))
}

/// A row without its last ` · ` part (an elapsed time, which the clock decides).
fn without_time(row: &str) -> &str {
    row.rsplit_once(" · ").map_or(row, |(rest, _)| rest)
}

/// A turn with a task list and a subagent, in a session with an MCP server: after `cairn -c`
/// the screen shows the same figures as the live one did — the session's cost with the
/// subagent's, the turn's line, the subagent's calls and tokens, the todo call's line, and the
/// context figure (once the server's tools are listed again, as they were for the request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_the_figures_the_live_one_showed() {
    let server = crate::support::mcp_server::stdio_config("local", 10).replace("'exec \"$0\"", "'sleep 1; exec \"$0\"");
    let sandbox = Sandbox::with_config(&server);
    sandbox.write("src/a.rs", "// a\nfn x() { alpha_fn(); }\n");
    let items = [
        ("1", "find the uses", "in_progress"),
        ("2", "read them", "in_progress"),
        ("3", "write the fix", "pending"),
        ("4", "test it", "pending"),
        ("5", "look around", "done"),
    ];
    let items: Vec<_> =
        items.iter().map(|(id, text, status)| json!({"id": id, "text": text, "status": status})).collect();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                MockCall::new("todo", json!({ "items": items })),
                MockCall::new(
                    "task",
                    json!({"description": "find alpha users", "prompt": "Find every use of alpha_fn.", "agent_type": "explore"}),
                ),
            ]))
            .route(
                "find alpha users",
                [
                    Turn::tool("grep", json!({"pattern": "alpha_fn"})).into(),
                    Turn::tool("file_read", json!({"path": "src/a.rs"})).into(),
                    Turn::text("ALPHA REPORT: used in src/a.rs:2.").into(),
                ],
            )
            .turn(Turn::text("Alpha is used once.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let live = tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("find alpha");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("Alpha is used once.") && s.contains("requests ·"));
        // The status line settles once the turn's last figures are in.
        std::thread::sleep(Duration::from_millis(500));
        let live = screen.text();
        screen.type_text("/quit");
        screen.send("\r");
        live
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());

    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["-c"]));
    let resumed = tokio::task::block_in_place(|| {
        screen.wait("the resumed transcript", |s| s.contains("Alpha is used once.") && s.contains("resumed session"));
        // The server's tools are listed again (as they were for the last request)...
        screen.type_text("/mcp");
        screen.send("\r");
        screen.wait("the server connected", |s| s.contains("MCP servers") && s.contains("connected"));
        screen.send("\x1b");
        std::thread::sleep(Duration::from_millis(300));
        screen.wait("the view closed", |s| !s.contains("MCP servers"));
        // ...and the status line is worked out again: the mode round the cycle, back to edit.
        for _ in 0..3 {
            screen.send("\x1b[Z");
            std::thread::sleep(Duration::from_millis(200));
        }
        let resumed = screen.wait("edit mode again", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("/quit");
        screen.send("\r");
        resumed
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());

    // Every figure the live screen showed, each beside what the resumed one shows.
    let status = |s: &str| s.lines().last().unwrap_or_default().trim().to_string();
    let turn = |s: &str| row(s, "requests ·").split_once(" · ").map(|(_, rest)| rest.to_string()).unwrap();
    let cell = |s: &str| without_time(row(s, "explore agent")).to_string();
    let todo = |s: &str| row(s, "✓ todo").rsplit_once("  ").map(|(line, _)| line.to_string()).unwrap();
    let parts: [(&str, &Figure); 4] = [
        ("the turn's line", &turn),
        ("the subagent's cell", &cell),
        ("the todo call's line", &todo),
        ("the status line", &status),
    ];
    let differ: Vec<String> = parts
        .iter()
        .filter(|(_, of)| of(&live) != of(&resumed))
        .map(|(what, of)| format!("{what}:\n  live:    {}\n  resumed: {}", of(&live), of(&resumed)))
        .collect();
    assert!(differ.is_empty(), "{}\nlive:\n{live}\nresumed:\n{resumed}", differ.join("\n"));
    assert!(cell(&live).contains("2 calls ·"), "{live}");
    assert!(todo(&live).contains("2 pending, 2 in progress, 1 done"), "{live}");
}

/// At 80×24 the approval dialog of a command of several parts shows every rule `p` then saves,
/// whole, before `p` is pressed; the status line says in full what it waits for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_80_by_24_every_rule_p_saves_was_on_screen_whole_before_it() {
    let sandbox = Sandbox::new();
    let command = "touch a-file-with-a-long-name-for-the-first-part.txt && mkdir -p build/output/reports-for-the-discount-change && touch build/output/reports-for-the-discount-change/summary.txt && chmod 644 a-file-with-a-long-name-for-the-first-part.txt";
    let mock =
        MockLlm::start(Script::new().turn(Turn::tool("bash", json!({ "command": command }))).turn(Turn::text("Made.")))
            .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let dialog = tokio::task::block_in_place(|| {
        screen.resize(80, 24);
        ready(&screen);
        screen.type_text("make them");
        screen.send("\r");
        let first = screen.wait("the dialog", |s| s.contains("Allow bash?") && s.contains("remember:"));
        assert!(first.contains("Asks because `touch"), "why it asks comes first:\n{first}");
        // A dialog that opens right after typing ignores answer keys for a moment.
        std::thread::sleep(Duration::from_millis(800));
        screen.send("p");
        let answered =
            screen.wait("p to save or to wait", |s| s.contains("Made.") || s.contains("see every rule first (↓)"));
        // Taller than the screen, the dialog scrolls, and `p` waits until its rules were seen.
        let dialog = if answered.contains("Made.") {
            first.clone()
        } else {
            for _ in 0..12 {
                screen.send("\x1b[B");
                std::thread::sleep(Duration::from_millis(100));
            }
            let dialog = screen.wait("the rules", |s| s.contains("a/p remember:") && s.contains("Tab: broaden"));
            screen.send("p");
            screen.wait("the command to run", |s| s.contains("Made."));
            dialog
        };
        screen.type_text("/quit");
        screen.send("\r");
        (first, dialog)
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let (first, dialog) = dialog;
    let status = first.lines().last().unwrap_or_default();
    assert!(status.contains("waiting for your approval") && !status.contains('…'), "{status}");
    let footer = dialog.lines().find(|l| l.trim_start().starts_with('╰') && l.contains("once")).expect("the footer");
    assert!(!footer.contains('…') && footer.contains("p this project"), "{footer}");
    // The rules as they read on screen: a rule wrapped under the label reads on to the next row.
    let inside: Vec<&str> = dialog.lines().map(|l| l.trim().trim_matches('│').trim()).collect();
    let first = inside.iter().position(|r| r.starts_with("a/p remember:")).expect("the rules");
    let shown: String = inside[first..]
        .iter()
        .take_while(|r| !r.starts_with('╰') && !r.starts_with("Tab:"))
        .map(|r| r.trim_start_matches("a/p remember:").trim())
        .collect::<Vec<_>>()
        .join(" ");
    let saved = sandbox.read(".cairn/settings.local.toml");
    let rules: Vec<&str> = saved.split('"').filter(|p| p.starts_with("bash(")).collect();
    assert!(rules.len() >= 3, "{saved}");
    for rule in rules {
        assert!(shown.contains(rule), "{rule} was saved but not shown whole:\n{dialog}");
    }
}

/// Switching to ask mode between two prompts keeps the cache (the mode rides in the request's
/// tail): `/context` lists no cache break, and nothing calls the switch a change to plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_to_ask_mode_is_no_cache_break_in_context() {
    let sandbox = Sandbox::new();
    let mock =
        MockLlm::start(Script::new().simulate_cache().turn(Turn::text("First.")).turn(Turn::text("Second."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let shown = tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("one");
        screen.send("\r");
        screen.wait("the first answer", |s| s.contains("First.") && s.contains("1 request"));
        // Edit → plan → ask.
        screen.send("\x1b[Z");
        screen.wait("plan", |s| s.lines().last().is_some_and(|l| l.contains("PLAN")));
        screen.send("\x1b[Z");
        screen.wait("ask", |s| s.lines().last().is_some_and(|l| l.contains("ASK")));
        screen.type_text("two");
        screen.send("\r");
        screen.wait("the second answer", |s| s.contains("Second."));
        screen.type_text("/context");
        screen.send("\r");
        let shown = screen.wait("the breakdown", |s| s.contains("Cache") && s.contains("session hit rate"));
        screen.send("\x1b");
        std::thread::sleep(Duration::from_millis(300));
        screen.type_text("/quit");
        screen.send("\r");
        shown
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert!(!shown.contains("cache break") && !shown.contains("mode changed"), "{shown}");
}
