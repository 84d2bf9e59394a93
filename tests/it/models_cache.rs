//! Prompt caching through an OpenAI-compatible endpoint that honours `cache_control` (as
//! OpenRouter does for Anthropic models): the same breakpoints as the Anthropic wire, at most
//! four, in content parts; the cache figures read from the endpoint's usage.

use serde_json::json;

use crate::support::cache_check::{per_request, share};
use crate::support::cairn::{Api, Sandbox, json_lines, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// Twenty model turns: 19 reads of small modules, then the answer.
fn twenty_turns(sandbox: &Sandbox, script: Script) -> Script {
    let mut script = script;
    for i in 0..19 {
        let body: String = (0..12).map(|l| format!("fn item_{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")})));
    }
    script.turn(Turn::text("Read them all."))
}

#[tokio::test]
async fn a_twenty_turn_session_reads_at_least_95_percent_from_cache_through_a_router() {
    let sandbox = Sandbox::new();
    // A top-level key, so before the sandbox's [retry] table.
    let config = sandbox.home.path().join("config.toml");
    let rest = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("cache_control = true\n{rest}")).unwrap();
    let mock = MockLlm::start(twenty_turns(&sandbox, Script::new().simulate_cache().honour_cache_control())).await;
    let out = sandbox.run(Api::OpenRouter, &mock, &["-p", "read every module", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let lines = json_lines(&out);
    let requests = per_request(&lines);
    assert_eq!(requests.len(), 20);
    let steady = share(&requests[2..]);
    assert!(steady >= 0.95, "steady-state cache share {steady:.3}: {requests:?}");
    let whole = share(&requests);
    assert!(whole >= 0.85, "whole-session cache share {whole:.3}");
    eprintln!("cache share through the router: steady state {steady:.3}, whole session {whole:.3}");
    // What the endpoint wrote to its cache is read from its usage too.
    let written: u64 = lines
        .iter()
        .filter(|l| l["type"] == "context")
        .filter_map(|l| l["usage"]["cache_creation_input_tokens"].as_u64())
        .sum();
    assert!(written > 0, "cache writes are reported");
    for req in mock.requests() {
        let markers = req.cache_markers();
        assert!((1..=4).contains(&markers), "{markers} breakpoints");
        // Breakpoints sit in content parts, never on a message itself.
        for m in req.messages() {
            assert!(m.get("cache_control").is_none(), "{m}");
        }
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
