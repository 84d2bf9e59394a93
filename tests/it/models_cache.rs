//! Prompt caching through an OpenAI-compatible endpoint that honours `cache_control` (as
//! OpenRouter does for Anthropic models): the same breakpoints as the Anthropic wire, at most
//! four, in content parts; the cache figures read from the endpoint's usage.

use serde_json::json;

use crate::support::cache_check::{per_request, prompt_in_session, share};
use crate::support::cairn::{Api, Sandbox, text};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

/// What the model does with the session's prompt `i`: read the module asked about and answer;
/// every fifth prompt a longer loop — list the modules, read two at once, then answer.
fn replies_to_prompt(i: usize) -> Vec<Turn> {
    let answer = Turn::text(format!("src/m{i}.rs defines item_{i}_0 to item_{i}_39, each returning its index."));
    if i % 5 == 4 {
        vec![
            Turn::tool("glob", json!({"pattern": "src/*.rs"})),
            Turn::tools(vec![
                MockCall::new("file_read", json!({"path": format!("src/m{i}.rs")})),
                MockCall::new("file_read", json!({"path": format!("src/m{}.rs", i - 1)})),
            ]),
            answer,
        ]
    } else {
        vec![Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")})), answer]
    }
}

/// A 20-turn session: 20 prompts to one session, each a run of the binary of its own
/// (`--session` from the second on) whose turn reads modules and answers, against one endpoint
/// whose cache lives across the runs. Every request of the session counts, the first — which
/// must write the whole prefix — included.
#[tokio::test]
async fn a_twenty_turn_session_reads_at_least_95_percent_from_cache_through_a_router() {
    let sandbox = Sandbox::new();
    // A top-level key, so before the sandbox's [retry] table.
    let config = sandbox.home.path().join("config.toml");
    let rest = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("cache_control = true\n{rest}")).unwrap();
    let mut script = Script::new().simulate_cache().honour_cache_control();
    for i in 0..20 {
        let body: String = (0..40).map(|l| format!("pub fn item_{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        for turn in replies_to_prompt(i) {
            script = script.turn(turn);
        }
    }
    let mock = MockLlm::start(script).await;
    let mut session: Option<String> = None;
    let mut requests: Vec<(u64, u64)> = Vec::new();
    let mut written = 0;
    for i in 0..20 {
        let prompt = format!("what is in src/m{i}.rs?");
        let lines = prompt_in_session(&sandbox, Api::OpenRouter, &mock, &mut session, &prompt, &[]).await;
        let turn = per_request(&lines);
        assert_eq!(turn.len(), replies_to_prompt(i).len(), "prompt {i}: its tool loop and answer");
        // What the endpoint wrote to its cache is read from its usage too.
        written += lines
            .iter()
            .filter(|l| l["type"] == "context")
            .filter_map(|l| l["usage"]["cache_creation_input_tokens"].as_u64())
            .sum::<u64>();
        requests.extend(turn);
    }
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    assert_eq!(mock.requests().len(), requests.len(), "every request the endpoint saw is counted");
    assert!(written > 0, "cache writes are reported");
    // Nothing between two requests — a new run, a new prompt, a tool loop — moves the prefix:
    // each reads the whole of the request before it.
    for (n, pair) in requests.windows(2).enumerate() {
        let ((previous, _), (_, read)) = (pair[0], pair[1]);
        assert!(read >= previous, "request {} read {read} of the {previous} sent before: {requests:?}", n + 2);
    }
    let whole = share(&requests);
    eprintln!("cache share through the router, {} requests of 20 prompts: {whole:.4}", requests.len());
    assert!(whole >= 0.95, "whole-session cache share {whole:.3}: {requests:?}");
    for req in mock.requests() {
        let markers = req.cache_markers();
        assert!((1..=4).contains(&markers), "{markers} breakpoints");
        // Breakpoints sit in content parts, never on a message itself.
        let in_parts = req
            .messages()
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|part| part.get("cache_control").is_some())
            .count();
        assert_eq!(in_parts, markers, "every breakpoint in a content part: {}", req.body);
    }
}

#[tokio::test]
async fn without_cache_control_a_compatible_endpoint_gets_no_breakpoints() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    let out = sandbox.run(Api::OpenRouter, &mock, &["-p", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mock.requests()[0].cache_markers(), 0);
    assert!(mock.requests()[0].body["messages"][1]["content"].is_string(), "plain string content as before");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
