//! Extended thinking on the Anthropic wire, end to end: a scripted tool loop with thinking on
//! (`--thinking high`) sends every earlier thinking block back byte-identical with its
//! signature, the mock (which refuses what the API refuses) lets the whole run through, the
//! thinking is stored, streamed to stream-json, and shown collapsed in the TUI.

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_lines, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// Two tool calls, each after thinking (the second with a redacted block too), then the answer.
fn thinking_loop(sandbox: &Sandbox) -> Script {
    sandbox.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    sandbox.write("src/main.rs", "fn main() { println!(\"{}\", cairn::answer()); }\n");
    Script::new()
        .turn(
            Turn::tool("file_read", json!({"path": "src/lib.rs"}))
                .with_thinking("The user wants the answer. Read lib.rs first."),
        )
        .turn(
            Turn::tool("file_read", json!({"path": "src/main.rs"}))
                .with_thinking("lib.rs returns 42; check how main uses it.")
                .with_redacted_thinking(),
        )
        .turn(Turn::text("It prints 42.").with_thinking("Both read; answer."))
}

/// The assistant messages' thinking blocks of a request, as sent.
fn thinking_blocks(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking")
        .collect()
}

#[tokio::test]
async fn a_thinking_tool_loop_sends_every_earlier_thinking_block_back_unchanged() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(thinking_loop(&sandbox)).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "what does it print?", "--thinking", "high", "--output-format", "json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["result"], "It prints 42.");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    // The export keeps the thinking readable, beside the content.
    let id = result["session_id"].as_str().unwrap();
    let export = sandbox.run(Api::Anthropic, &mock, &["export", id]).await;
    assert!(export.status.success(), "{}", text(&export.stderr));
    let lines: Vec<Value> = text(&export.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let assistant: Vec<&Value> = lines.iter().filter(|l| l["role"] == "assistant").collect();
    assert_eq!(assistant[0]["thinking"], "The user wants the answer. Read lib.rs first.");
    assert_eq!(assistant[2]["content"], "It prints 42.");
    assert!(!text(&export.stdout).contains("signature"), "signatures are not part of the export");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for req in &requests {
        // claude-sonnet-4-5 thinks with a budget, interleaved with its tool calls.
        assert_eq!(req.body["thinking"], json!({"type": "enabled", "budget_tokens": 32000}));
        assert_eq!(req.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    }
    // Each request carries the thinking of the ones before, first in its assistant turn, exactly
    // as it streamed in (text and signature); the next request repeats those bytes.
    let second = thinking_blocks(&requests[1].body);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["thinking"], "The user wants the answer. Read lib.rs first.");
    assert!(second[0]["signature"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(requests[1].messages()[1]["content"][0], second[0], "thinking opens the turn");
    let third = thinking_blocks(&requests[2].body);
    assert_eq!(third.len(), 3, "{third:?}");
    assert_eq!(third[0].to_string(), second[0].to_string(), "byte-identical the second time");
    assert_eq!(third[2]["type"], "redacted_thinking");

    // Stored with the session, signatures and all.
    let stored: Vec<String> = sandbox
        .database()
        .prepare("SELECT content FROM messages WHERE role = 'assistant' ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(stored[0].contains(r#""type":"thinking""#) && stored[0].contains("Read lib.rs first."), "{}", stored[0]);
}

#[tokio::test]
async fn thinking_streams_as_its_own_event_and_the_result_keeps_its_shape() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(thinking_loop(&sandbox)).await;
    let out = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &["-p", "what does it print?", "--thinking", "8000", "--output-format", "stream-json"],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let thought: String =
        lines.iter().filter(|l| l["type"] == "thinking_delta").filter_map(|l| l["text"].as_str()).collect();
    assert!(thought.contains("Read lib.rs first.") && thought.contains("Both read; answer."), "{thought}");
    let answer: String =
        lines.iter().filter(|l| l["type"] == "assistant_delta").filter_map(|l| l["text"].as_str()).collect();
    assert_eq!(answer, "It prints 42.", "thinking is not part of the answer");
    let result = lines.last().unwrap();
    let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
    for key in ["session_id", "result", "is_error", "turns", "mode", "model", "usage", "context", "denied_tool_calls"] {
        assert!(keys.iter().any(|k| *k == key), "{key} missing from {keys:?}");
    }
    assert_eq!(mock.requests()[0].body["thinking"]["budget_tokens"], 8000);
}

#[tokio::test]
async fn without_a_thinking_setting_nothing_is_asked_and_off_turns_adaptive_models_off() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("hi")).turn(Turn::text("hi again"))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hello"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "hello", "--model", "claude-sonnet-5", "--thinking", "off"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert!(requests[0].body.get("thinking").is_none(), "{}", requests[0].body);
    assert_eq!(requests[1].body["thinking"], json!({"type": "disabled"}));
    let bad = sandbox.run(Api::Anthropic, &mock, &["-p", "hello", "--thinking", "lots"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("not a thinking level"), "{}", text(&bad.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_shows_thinking_as_one_collapsed_line_that_expands() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(thinking_loop(&sandbox)).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--thinking", "high"]));
    tokio::task::block_in_place(|| {
        screen.wait("the prompt", |s| s.contains("EDIT"));
        screen.type_text("what does it print?");
        screen.send("\r");
        let done = screen.wait("the answer", |s| s.contains("It prints 42.") && s.contains("3 requests"));
        assert!(done.contains("✻ thought"), "{done}");
        assert!(done.contains("to expand"), "{done}");
        assert!(!done.contains("Read lib.rs first."), "collapsed, the thinking's words are not shown:\n{done}");
        // Ctrl+O expands every thinking cell (and tool output).
        screen.send("\x0f");
        screen.wait("the thinking, expanded", |s| s.contains("Read lib.rs first.") && s.contains("Both read; answer."));
        screen.send("\x03\x03");
    });
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn doctor_says_what_the_catalog_and_the_config_know_of_the_model() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new()).await;
    let out =
        sandbox.run(Api::Anthropic, &mock, &["doctor", "--model", "claude-sonnet-4-5", "--thinking", "high"]).await;
    let said = text(&out.stdout);
    assert!(said.contains("max output         64000 tokens"), "{said}");
    assert!(said.contains("prices             $3 in, $15 out, cache read $0.3, write $3.75 (1 h: $6)"), "{said}");
    assert!(said.contains("thinking           high (budget-interleaved)"), "{said}");
    assert!(said.contains("images             taken"), "{said}");
    // config.toml extends the catalog: a model it does not know gets what the user says.
    let config = sandbox.home.path().join("config.toml");
    let rest = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{rest}\n[models.\"house-coder\"]\ncontext_window = 65536\nthinking = \"effort\"\nimages = false\n"),
    )
    .unwrap();
    let out = sandbox
        .bare_command(&["doctor", "--model", "house-coder"])
        .env("OPENAI_API_KEY", crate::support::cairn::KEY)
        .env("OPENAI_BASE_URL", mock.openai_base_url())
        .output()
        .await
        .unwrap();
    let said = text(&out.stdout);
    assert!(said.contains("context window     65536 tokens"), "{said}");
    assert!(said.contains("prices             unknown"), "{said}");
    assert!(said.contains("thinking           the model's default (thinking not set) (effort)"), "{said}");
    assert!(said.contains("images             not taken: sent as a text note"), "{said}");
}
