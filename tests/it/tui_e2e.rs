//! The full-screen interface end to end: the real binary in a pseudo-terminal (120×40), read
//! through a vt100 emulator, against the scripted mock model. Waits poll the screen (a noisy
//! two-core CI box can be slow), never sleep a fixed time to assume progress.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cairn::{KEY, Sandbox};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::{COLS, PATIENCE, ROWS, Screen, bare_command};

fn context_figure(row: &str) -> bool {
    // e.g. "3.4k/200k 1%"
    row.split_whitespace().any(|w| w.contains("k/200k")) && row.contains('%')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_in_the_terminal_then_resumed() {
    let sandbox = Sandbox::new();
    sandbox.write("notes.txt", "hello world\nsecond line\n");
    let mock = MockLlm::start(
        Script::new()
            .chunk_delay_ms(15)
            .turn(Turn::text("Here is the **streamed answer** you asked for."))
            .turn(
                Turn::tool(
                    "file_edit",
                    json!({"path": "notes.txt", "old_string": "hello world", "new_string": "hello cairn"}),
                )
                .with_text("Editing it now."),
            )
            .turn(Turn::text("The file is edited.")),
    )
    .await;

    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let first = screen.wait("the status line", |s| {
        let last = s.lines().last().unwrap_or_default();
        last.contains("EDIT") && context_figure(last)
    });
    assert!(first.contains("Ask cairn anything"), "{first}");
    let after_startup = screen.raw_len();

    tokio::task::block_in_place(|| {
        screen.type_text("what is this?");
        screen.send("\r");
        screen.wait("the streamed answer", |s| s.contains("Here is the streamed answer you asked for."));
        screen.wait("the turn to end", |s| s.contains("1 request"));

        // Idle, nothing changes: no frames are written and no CPU is burnt. (Measured after a
        // turn, when start-up work such as loading the highlighter is long done.)
        std::thread::sleep(Duration::from_millis(700));
        let (bytes, cpu) = (screen.raw_len(), screen.cpu_ticks());
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(screen.raw_len(), bytes, "an idle screen is not redrawn");
        let busy = screen.cpu_ticks() - cpu;
        assert!(busy <= 15, "idle for 1.5 s cost {busy} ticks of CPU");

        // Alt+C puts the answer on the clipboard through the terminal (OSC 52).
        screen.send("\x1bc");
        let start = Instant::now();
        while !String::from_utf8_lossy(&screen.raw.lock().unwrap()).contains("\x1b]52;c;") {
            assert!(start.elapsed() < PATIENCE, "no OSC 52 after Alt+C");
            std::thread::sleep(Duration::from_millis(50));
        }

        // A resize repaints at the new size without clearing the screen.
        screen.resize(90, 30);
        screen.wait("the narrower status line", |s| {
            s.lines().nth(29).is_some_and(|l| l.contains("EDIT") && context_figure(l))
        });
        screen.resize(COLS, ROWS);
        screen.wait("the full-width status line", |s| {
            s.lines().nth(39).is_some_and(|l| l.contains("EDIT") && l.trim_end().len() > 100)
        });

        screen.type_text("fix the greeting");
        screen.send("\r");
        let dialog =
            screen.wait("the approval dialog", |s| s.contains("Allow file_edit?") && s.contains("hello cairn"));
        assert!(dialog.contains("- hello world"), "the old line is shown:\n{dialog}");
        assert!(dialog.contains("+ hello cairn"), "the new line is shown:\n{dialog}");
        // A dialog that opens right after typing ignores answer keys for a moment.
        std::thread::sleep(Duration::from_millis(800));
        screen.send("y");
        screen.wait("the edit to finish", |s| s.contains("✓ file_edit") && s.contains("The file is edited."));
    });
    assert_eq!(sandbox.read("notes.txt"), "hello cairn\nsecond line\n");

    tokio::task::block_in_place(|| {
        screen.send("\x1b[Z");
        let start = Instant::now();
        while !screen.bottom_row().contains("PLAN") {
            assert!(start.elapsed() < PATIENCE, "no PLAN: {}", screen.bottom_row());
            std::thread::sleep(Duration::from_millis(50));
        }
        screen.send("\x1b[Z");
        let start = Instant::now();
        while !screen.bottom_row().contains("ASK") {
            assert!(start.elapsed() < PATIENCE, "no ASK: {}", screen.bottom_row());
            std::thread::sleep(Duration::from_millis(50));
        }

        screen.type_text("/memories");
        screen.send("\r");
        screen.wait("the memories view", |s| s.contains("No memories yet"));
        screen.send("\x1b");
        screen.wait("the memories view to close", |s| !s.contains("No memories yet"));

        screen.type_text("/sessions");
        screen.send("\r");
        screen.wait("the sessions view", |s| s.contains("Sessions of this project") && s.contains("what is this?"));
        screen.send("\x1b");
        screen.wait("the sessions view to close", |s| !s.contains("Sessions of this project"));

        screen.type_text("/quit");
        screen.send("\r");
    });
    let status = tokio::task::block_in_place(|| screen.wait_exit());
    assert!(status.success(), "exit status {status:?}");
    // Give the reader thread a moment to drain the last bytes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    {
        let parser = screen.parser.lock().unwrap();
        assert!(!parser.screen().alternate_screen(), "the alternate screen was left");
        assert!(!parser.screen().hide_cursor(), "the cursor is shown again");
    }
    let raw = screen.raw.lock().unwrap().clone();
    let later = &raw[after_startup..];
    let find = |needle: &[u8]| later.windows(needle.len()).any(|w| w == needle);
    assert!(!find(b"\x1b[2J"), "the screen was cleared after start-up");
    assert!(!find(b"\x1b[3J"), "the scrollback was cleared after start-up");
    assert!(find(b"\x1b[?2026h") && find(b"\x1b[?2026l"), "frames are synchronized updates");
    drop(screen);

    // The same project, resumed: the conversation is back on screen.
    let mut again = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--resume"]));
    tokio::task::block_in_place(|| {
        let resumed = again.wait("the resumed conversation", |s| s.contains("resumed session"));
        assert!(resumed.contains("what is this?"), "{resumed}");
        assert!(resumed.contains("The file is edited."), "{resumed}");
        assert!(resumed.contains("✓ file_edit"), "{resumed}");
        again.type_text("/quit");
        again.send("\r");
    });
    assert!(tokio::task::block_in_place(|| again.wait_exit()).success());
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_provider_the_setup_screen_says_what_to_set() {
    let sandbox = Sandbox::new();
    let mut screen = tokio::task::block_in_place(|| Screen::spawn(bare_command(&sandbox, &[])));
    tokio::task::block_in_place(|| {
        let text = screen.wait("the setup screen", |s| s.contains("cairn needs a model provider"));
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
        assert!(text.contains("OPENAI_BASE_URL"), "{text}");
        screen.send("q");
    });
    let status = tokio::task::block_in_place(|| screen.wait_exit());
    assert_eq!(status.exit_code(), 2, "no provider is bad usage, as headless says");
    assert!(!screen.parser.lock().unwrap().screen().alternate_screen());
}

/// Ctrl+G hands the prompt to `$EDITOR` with the terminal (cairn stops reading the keyboard),
/// and what the editor saved comes back to the prompt, to be sent as typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_writes_the_prompt_in_the_editor() {
    let sandbox = Sandbox::new();
    // An "editor" that reads a line from the terminal and appends it to the file.
    sandbox
        .write("ed.sh", "#!/bin/sh\nprintf 'EDITOR OPEN\\n'\nIFS= read -r line\nprintf ' %s\\n' \"$line\" >> \"$1\"\n");
    let mock = MockLlm::start(Script::new().turn(Turn::text("Got the edited prompt."))).await;
    let mut cmd = bare_command(&sandbox, &[]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    cmd.env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
    cmd.env("EDITOR", format!("sh {}", sandbox.project.path().join("ed.sh").display()));
    let mut screen = tokio::task::block_in_place(|| Screen::spawn(cmd));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("draft:");
        screen.send("\x07");
        screen.wait("the editor", |s| s.contains("EDITOR OPEN"));
        assert!(!screen.parser.lock().unwrap().screen().alternate_screen(), "the editor has the normal screen");
        screen.send("from the editor\r");
        screen.wait("the edited prompt back in the composer", |s| {
            s.contains("draft: from the editor") && s.lines().last().is_some_and(|l| l.contains("EDIT"))
        });
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Got the edited prompt."));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let sent = mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(sent.contains("draft: from the editor") && !sent.contains("from the editor\\n"), "{sent}");
}
