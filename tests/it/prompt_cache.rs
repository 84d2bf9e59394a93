//! Prompt caching against a mock that caches like the providers do.

use serde_json::json;

use crate::support::cache_check::{per_request, share};
use crate::support::cairn::{Api, Sandbox, json_lines, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// Twenty requests: 19 reads of `lines`-line modules, then the answer.
fn twenty_requests(sandbox: &Sandbox, lines: usize) -> Script {
    let mut script = Script::new().simulate_cache();
    for i in 0..19 {
        let body: String = (0..lines).map(|l| format!("fn item_{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")})));
    }
    script.turn(Turn::text("Read them all."))
}

/// Every request reads the whole of the previous one from cache: nothing in the prefix moved.
fn assert_previous_prompt_was_read(requests: &[(u64, u64)]) {
    for (i, pair) in requests.windows(2).enumerate() {
        let (previous_total, _) = pair[0];
        let (_, read) = pair[1];
        // The mock counts blocks, its total counts the JSON around them too: a few tokens apart.
        assert!(read + 64 >= previous_total, "request {} read {read} of the {previous_total} sent before", i + 2);
    }
}

async fn run(api: Api, lines: usize) -> (Vec<(u64, u64)>, MockLlm) {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(twenty_requests(&sandbox, lines)).await;
    let out = sandbox.run(api, &mock, &["-p", "read every module", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = per_request(&json_lines(&out));
    assert_eq!(requests.len(), 20);
    (requests, mock)
}

#[tokio::test]
async fn every_request_reads_the_previous_prompt_from_cache_on_anthropic() {
    let (requests, mock) = run(Api::Anthropic, 60).await;
    assert_previous_prompt_was_read(&requests);
    for req in mock.requests() {
        assert!(req.cache_markers() <= 4, "{} breakpoints", req.cache_markers());
    }
}

#[tokio::test]
async fn steady_state_cache_reads_are_at_least_95_percent() {
    // A session whose requests each add a short result (~150 tokens) to a ~3k-token prefix:
    // what is not read from cache is only what is new.
    let (requests, _) = run(Api::Anthropic, 12).await;
    let steady = share(&requests[2..]);
    assert!(steady >= 0.95, "steady-state cache share {steady:.3}: {requests:?}");
}

#[tokio::test]
async fn openai_prefixes_stay_byte_stable_so_automatic_caching_hits() {
    let (requests, _) = run(Api::OpenAi, 60).await;
    // OpenAI caches in steps of 128 tokens: allow one step of slack.
    for (i, pair) in requests.windows(2).enumerate() {
        assert!(pair[1].1 + 200 >= pair[0].0, "request {} read {} of {}", i + 2, pair[1].1, pair[0].0);
    }
}
