//! A response that never ends is dropped and retried: keep-alives alone are not progress, and
//! a response streaming past the total limit is cut.

use std::time::{Duration, Instant};

use crate::support::cairn::{Api, Sandbox, json_lines, text};
use crate::support::mock_llm::{Fault, MockLlm, Script, Turn};

fn sandbox(retry: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.home.path().join("config.toml"),
        format!("[retry]\nmax_attempts = 3\nbase_delay_ms = 2\nmax_delay_ms = 20\n{retry}"),
    )
    .unwrap();
    sandbox
}

async fn run_within(sandbox: &Sandbox, api: Api, mock: &MockLlm) -> std::process::Output {
    let cmd = sandbox.run(api, mock, &["-p", "hi", "--output-format", "stream-json"]);
    tokio::time::timeout(Duration::from_secs(30), cmd).await.expect("cairn waited on an endless stream")
}

async fn pings_alone_do_not_keep_a_stream_alive(api: Api) {
    let sandbox = sandbox("stream_idle_timeout_ms = 400\n");
    let mock = MockLlm::start(Script::new().fault(Fault::EndlessPings).turn(Turn::text("after the pings"))).await;
    let started = Instant::now();
    let out = run_within(&sandbox, api, &mock).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let retry = lines.iter().find(|l| l["type"] == "retry").expect("a retry line");
    assert!(retry["reason"].as_str().unwrap().contains("no content for 0.4 s"), "{retry}");
    assert_eq!(lines.last().unwrap()["result"], "after the pings");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_pings_alone_do_not_keep_a_stream_alive() {
    pings_alone_do_not_keep_a_stream_alive(Api::Anthropic).await;
}

#[tokio::test]
async fn openai_keep_alive_comments_do_not_keep_a_stream_alive() {
    pings_alone_do_not_keep_a_stream_alive(Api::OpenAi).await;
}

#[tokio::test]
async fn a_response_streaming_past_the_total_limit_is_cut_and_retried() {
    for api in [Api::Anthropic, Api::OpenAi] {
        let sandbox = sandbox("stream_idle_timeout_ms = 5000\nstream_total_timeout_ms = 800\n");
        let mock = MockLlm::start(Script::new().fault(Fault::EndlessText).turn(Turn::text("a real end"))).await;
        let out = run_within(&sandbox, api, &mock).await;
        assert!(out.status.success(), "{api:?}: {}", text(&out.stderr));
        let lines = json_lines(&out);
        let retry = lines.iter().find(|l| l["type"] == "retry").expect("a retry line");
        assert!(retry["reason"].as_str().unwrap().contains("still streaming after 0.8 s"), "{retry}");
        assert_eq!(lines.last().unwrap()["result"], "a real end");
        assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    }
}
