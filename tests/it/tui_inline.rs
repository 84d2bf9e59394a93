//! Inline mode end to end: the real binary in a pseudo-terminal read by a terminal emulator that
//! keeps its scrollback and reflows it (alacritty's), against the scripted mock model. A session
//! of 30 turns — tool calls, diffs, a 400-line answer, an approval, three resizes, one of them
//! while the long answer streams — and afterwards the terminal's scrollback and screen must hold
//! the session's transcript exactly: every line once, in order, nothing else between. The
//! reference is the same stored session resumed by the full-screen interface on a screen tall
//! enough to show all of it, a different presenter reading the session back from the store.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::json;

use crate::support::cairn::{KEY, Sandbox};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::bare_command;
use crate::support::reflow_term::ReflowScreen;

/// Every line of the test's content is narrower than the narrowest width used, so the
/// transcript's lines are the same at every width and can be compared line for line.
const NARROWEST: usize = 80;

fn long_answer() -> String {
    let mut s = String::from("## Report 4\n\nWhat follows is long on purpose.\n\n");
    for k in 1..=36 {
        s.push_str(&format!("### Section {k}\n\n- item {k}.1 looked at\n- item {k}.2 changed\n\n"));
        s.push_str(&format!("```text\nline {k}.a of the log\nline {k}.b of the log\nline {k}.c of the log\n```\n\n"));
        s.push_str(&format!("Paragraph {k} says what the section found.\n\n"));
    }
    s.push_str("| part | state |\n|---|---|\n| parser | done |\n| writer | done |\n\nEnd of report 4.");
    s
}

/// The model's side of turn `t`: the replies it takes, and the words its last answer ends with.
fn replies(t: usize, edits: &mut usize) -> (Vec<Turn>, String) {
    let done = format!("Answer {t} done.");
    let turns = match t {
        4 => vec![Turn::text(long_answer()).with_pieces(400)],
        12 => vec![
            Turn::tool("file_edit", json!({"path": "b.txt", "old_string": "beta", "new_string": "beta two"}))
                .with_text("Changing b.txt, which needs your approval."),
            Turn::text(done.clone()),
        ],
        t if t % 4 == 3 => {
            *edits += 1;
            let (old, new) = (format!("count = {}", *edits - 1), format!("count = {}", *edits));
            vec![
                Turn::tool("file_edit", json!({"path": "a.txt", "old_string": old, "new_string": new}))
                    .with_text(format!("Bumping the count in turn {t}.")),
                Turn::text(done.clone()),
            ]
        }
        t if t % 3 == 2 => vec![
            Turn::tool("bash", json!({"command": "cat notes.txt"})).with_text(format!("Reading notes for turn {t}.")),
            Turn::text(format!("The notes say hello.\n\n{done}")),
        ],
        _ => vec![Turn::text(format!("A short answer to turn {t}:\n\n- one point\n- another point\n\n{done}"))],
    };
    let marker = if t == 4 { "End of report 4.".to_string() } else { done };
    (turns, marker)
}

static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d+m\d\ds\b|\b\d+(\.\d+)?(ms|s)\b").expect("a valid pattern"));

/// The transcript part of `lines`: from the first prompt to `end` (exclusive), durations
/// written as `<t>` (a live turn is timed by the interface, a resumed one by the store).
fn transcript(lines: &[String], end: impl Fn(&str) -> bool) -> Vec<String> {
    let start = lines.iter().position(|l| l.starts_with("› turn 1:")).expect("the first prompt");
    let stop = lines[start..].iter().position(|l| end(l)).map_or(lines.len(), |i| start + i);
    let mut out: Vec<String> = lines[start..stop].iter().map(|l| DURATION.replace_all(l, "<t>").into_owned()).collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

fn first_difference(actual: &[String], expected: &[String]) -> String {
    let i = actual.iter().zip(expected).position(|(a, e)| a != e).unwrap_or(actual.len().min(expected.len()));
    let around = |v: &[String]| v[i.saturating_sub(3)..(i + 4).min(v.len())].join("\n");
    format!(
        "{} lines in the terminal, {} in the transcript; first difference at line {i}:\n--- terminal\n{}\n--- transcript\n{}",
        actual.len(),
        expected.len(),
        around(actual),
        around(expected)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_turns_with_resizes_leave_the_whole_transcript_in_the_scrollback_once() {
    let sandbox = Sandbox::new();
    sandbox.write("notes.txt", "hello\n");
    sandbox.write("a.txt", "count = 0\nother line\n");
    sandbox.write("b.txt", "beta\n");
    let mut script = Script::new().chunk_delay_ms(8);
    let mut markers = Vec::new();
    let mut edits = 0;
    for t in 1..=30 {
        let (turns, marker) = replies(t, &mut edits);
        for turn in turns {
            script = script.turn(turn);
        }
        markers.push(marker);
    }
    let mock = MockLlm::start(script).await;
    let mut cmd = bare_command(&sandbox, &["--inline", "--allow", "file_edit(a.txt)"]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    cmd.env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
    cmd.env("COLORTERM", "truecolor");

    let lines = tokio::task::block_in_place(|| {
        let mut screen = ReflowScreen::spawn(cmd, 100, 30, "$ cairn --inline\r\n");
        screen.wait("the status line", |s| s.contains("EDIT") && s.contains("Ask cairn anything"));
        for t in 1..=30 {
            let prompt = format!("turn {t}: go on");
            screen.type_text(&prompt);
            screen.send("\r");
            if t == 4 {
                // The long answer: resized while it streams.
                screen.wait("the long answer to stream", |s| s.contains("Paragraph 9 says"));
                assert!(!screen.text().contains("End of report 4."), "the resize was to come mid-stream");
                screen.resize(80, 24);
            }
            if t == 12 {
                screen.wait("the approval dialog", |s| s.contains("Allow file_edit?"));
                // A dialog that opens right after typing ignores answer keys for a moment.
                std::thread::sleep(std::time::Duration::from_millis(800));
                screen.send("y");
            }
            let marker = &markers[t - 1];
            screen.wait(&format!("turn {t} to end"), |s| s.contains(marker.as_str()) && s.contains("send ·"));
            // The next prompt is typed once the viewport shows at the new size, as a person
            // would (a key typed in the very instant of a resize waits for the next key:
            // crossterm drops the terminal's readiness when a resize comes with it).
            if t == 10 {
                screen.resize(120, 40);
                screen.wait("the viewport at 120 columns", |s| {
                    s.lines().any(|l| l.starts_with('╰') && l.chars().count() == 120)
                });
            }
            if t == 20 {
                screen.resize(90, 34);
                screen.wait("the viewport at 90 columns", |s| {
                    s.lines().any(|l| l.starts_with('╰') && l.chars().count() == 90)
                });
            }
        }
        screen.type_text("/quit");
        screen.send("\r");
        assert!(screen.wait_exit().success());
        let raw = screen.raw_text();
        assert!(!raw.contains("\x1b[2J") && !raw.contains("\x1b[3J"), "a full-screen or scrollback clear was written");
        assert!(!raw.contains("\x1b[?1049h"), "nothing here needed the alternate screen");
        screen.lines()
    });
    assert_eq!(sandbox.read("a.txt"), "count = 7\nother line\n");
    assert_eq!(sandbox.read("b.txt"), "beta two\n");

    let hint = lines.iter().find(|l| l.starts_with("cairn: session ")).expect("the resume hint at exit");
    let id = hint.split_whitespace().nth(2).expect("a session id").to_string();
    let actual = transcript(&lines, |l| l.starts_with("cairn: session "));
    assert!(lines.iter().any(|l| l == "$ cairn --inline"), "the shell's line above stays");

    // The reference: the same session from the store, drawn whole by the full-screen interface.
    let mut cmd = bare_command(&sandbox, &["--session", &id]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    cmd.env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
    let reference = tokio::task::block_in_place(|| {
        let mut screen = ReflowScreen::spawn(cmd, 120, 2_000, "");
        screen.wait("the resumed session", |s| s.contains("resumed session") && s.contains("End of report 4."));
        let lines = screen.lines();
        screen.send("\x03");
        screen.send("\x03");
        screen.wait_exit();
        lines
    });
    let expected = transcript(&reference, |l| l.starts_with("ℹ resumed session"));
    assert!(expected.len() > 600, "the transcript is the whole session: {} lines", expected.len());
    assert!(expected.iter().all(|l| l.chars().count() < NARROWEST), "a line would wrap at the narrowest width");
    assert!(actual == expected, "{}", first_difference(&actual, &expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_open_on_the_alternate_screen_and_return_with_the_scrollback_untouched() {
    let sandbox = Sandbox::new();
    let mut script = Script::new();
    for t in 1..=3 {
        let points: String = (1..=8).map(|p| format!("- point {p} of answer {t}\n")).collect();
        script = script.turn(Turn::text(format!("Answer {t}:\n\n{points}")));
    }
    let mock = MockLlm::start(script).await;
    let mut cmd = bare_command(&sandbox, &["--inline"]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    cmd.env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
    tokio::task::block_in_place(|| {
        let mut screen = ReflowScreen::spawn(cmd, 90, 24, "$ cairn --inline\r\n");
        screen.wait("the status line", |s| s.contains("EDIT") && s.contains("Ask cairn anything"));
        for t in 1..=3 {
            screen.type_text(&format!("turn {t}: go on"));
            screen.send("\r");
            screen.wait(&format!("turn {t} to end"), |s| s.contains(&format!("Answer {t}:")) && s.contains("send ·"));
        }
        let before = screen.lines();
        let transcript_before = transcript(&before, |l| l.starts_with("╭"));
        // A view: the whole screen for the moment, then back.
        screen.type_text("/help");
        screen.send("\r");
        screen.wait("the help view", |s| s.contains("Help — keys and commands"));
        screen.send("\x1b");
        screen
            .wait("the prompt again", |s| !s.contains("Help — keys and commands") && s.contains("Ask cairn anything"));
        // The transcript scrolled back (PgUp) is the full view too; End comes back. A resize
        // while it is open, and the history is still there once, after it.
        screen.send("\x1b[5~");
        screen.wait("the scrolled-back view", |s| s.contains("more below"));
        screen.resize(70, 20);
        screen.wait("the view at the new size", |s| s.lines().count() == 20 && s.contains("more below"));
        screen.send("\x1b[F");
        screen.wait("the prompt again", |s| !s.contains("more below") && s.contains("Ask cairn anything"));
        // Keys still reach the prompt and the agent.
        screen.type_text("after the views");
        screen.send("\x03");
        screen.wait("the prompt cleared", |s| !s.contains("after the views"));
        screen.send("\x03");
        screen.send("\x03");
        assert!(screen.wait_exit().success());
        let raw = screen.raw_text();
        assert_eq!(raw.matches("\x1b[?1049h").count(), 2, "each view took the alternate screen once");
        assert_eq!(raw.matches("\x1b[?1049l").count(), 2, "and gave it back");
        // A resize while a view had the screen may leave blank rows before the prompt: where the
        // text ended on the main screen is not known for sure after it, so the viewport starts
        // afresh at the bottom (nothing is erased or written twice).
        let after = transcript(&screen.lines(), |l| l.starts_with("cairn: session "));
        let after: Vec<String> = after.into_iter().filter(|l| !l.is_empty()).collect();
        let before: Vec<String> = transcript_before.into_iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(after, before, "the scrollback after the views holds the same transcript, once");
    });
}
