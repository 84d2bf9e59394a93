//! Headless output cannot be used to attack the terminal: an answer carrying escape sequences
//! (OSC 0 retitles the window, OSC 52 writes the clipboard, CSI 2J clears the screen) reaches a
//! terminal without them, and JSON carries them escaped.

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

const HOSTILE: &str =
    "Title\x1b]0;pwned\x07 clip\x1b]52;c;cm0gLXJmIH4=\x1b\\ clear\x1b[2J\x1b[H\x1b[31m red\x1b[0m done";

fn has(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_output_on_a_terminal_has_no_escape_sequences_from_the_answer() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text(HOSTILE))).await;
    let mut screen = Screen::start(&sandbox, &mock, &["-p", "say it"]);
    let status = screen.wait_exit();
    assert!(status.success(), "{}", screen.text());
    screen.wait("the answer", |s| s.contains("Title clip clear red done"));
    let raw = screen.raw.lock().unwrap().clone();
    for sequence in [&b"\x1b]0;"[..], b"\x1b]52;", b"\x1b[2J", b"\x1b[H", b"\x1b[31m"] {
        assert!(!has(&raw, sequence), "{:?} reached the terminal: {:?}", text(sequence), text(&raw));
    }
}

#[tokio::test]
async fn json_output_carries_escape_sequences_escaped() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text(HOSTILE))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "say it", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!out.stdout.contains(&0x1b), "a raw ESC byte in JSON output: {}", text(&out.stdout));
    assert!(text(&out.stdout).contains(r"\u001b]52;"), "{}", text(&out.stdout));
    // Escaped, not lost: the reader of the JSON gets the answer as the model gave it.
    assert_eq!(json_result(&out)["result"], HOSTILE);
}

#[tokio::test]
async fn text_output_into_a_pipe_is_the_answer_byte_for_byte() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text(HOSTILE))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "say it"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{HOSTILE}\n"));
}
