//! Small things a user notices, run against the real binary: retry counts, a 200 that carries
//! an error, short session prefixes, a damaged database, zero timeouts in config.

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{Fault, MockLlm, Script, Turn};

#[tokio::test]
async fn retry_notices_count_up_to_the_limit_and_never_past_it() {
    let sandbox = Sandbox::new();
    let mut script = Script::new();
    for _ in 0..5 {
        script = script.fault(Fault::Overloaded);
    }
    let mock = MockLlm::start(script).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let counts: Vec<&str> =
        stderr.lines().filter_map(|l| l.split("(attempt ").nth(1)).map(|rest| rest.trim_end_matches(')')).collect();
    assert_eq!(counts, ["2/5", "3/5", "4/5", "5/5"], "{stderr}");
    assert!(stderr.contains("gave up after 5 attempts"), "{stderr}");
}

#[tokio::test]
async fn a_200_whose_json_body_is_an_error_is_retried() {
    for api in [Api::Anthropic, Api::OpenAi] {
        let sandbox = Sandbox::new();
        let body = json!({"error": {"type": "overloaded_error", "message": "upstream is overloaded"}});
        let mock = MockLlm::start(
            Script::new()
                .fault(Fault::Status { code: 200, retry_after: None, body: Some(body) })
                .turn(Turn::text("second time lucky")),
        )
        .await;
        let out = sandbox.run(api, &mock, &["-p", "hi", "--output-format", "stream-json"]).await;
        assert!(out.status.success(), "{api:?}: {}", text(&out.stdout));
        let lines = crate::support::cairn::json_lines(&out);
        let retry = lines.iter().find(|l| l["type"] == "retry").expect("a retry");
        assert!(retry["reason"].as_str().unwrap().contains("upstream is overloaded"), "{retry}");
        assert_eq!(lines.last().unwrap()["result"], "second time lucky");
    }
}

#[tokio::test]
async fn a_session_prefix_under_four_characters_names_the_minimum() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("hello"))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "json"]).await;
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let out = sandbox.run(Api::Anthropic, &mock, &["--session", &id[..3], "-p", "again"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("too short") && stderr.contains("at least 4 characters"), "{stderr}");
}

#[tokio::test]
async fn a_damaged_database_gets_a_damage_hint_not_a_permissions_one() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.home.path().join("cairn.db"), vec![b'x'; 4096]).unwrap();
    let mock = MockLlm::start(Script::new()).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("damaged") && stderr.contains("cairn.db.bad"), "{stderr}");
    assert!(!stderr.contains("writable"), "{stderr}");
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn zero_timeouts_in_config_are_refused_with_their_line() {
    for (config, line, key) in [
        ("[retry]\nstream_idle_timeout_ms = 0\n", 2, "retry.stream_idle_timeout_ms"),
        ("model = \"claude-sonnet-4-5\"\n\n[tools]\nbash_timeout_ms = 0\n", 4, "tools.bash_timeout_ms"),
    ] {
        let sandbox = Sandbox::new();
        std::fs::write(sandbox.home.path().join("config.toml"), config).unwrap();
        let mock = MockLlm::start(Script::new()).await;
        let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi"]).await;
        assert_eq!(out.status.code(), Some(2));
        let stderr = text(&out.stderr);
        assert!(stderr.contains(&format!("line {line}, key `{key}`")) && stderr.contains("0 ms"), "{stderr}");
    }
}
