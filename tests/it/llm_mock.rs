//! The mock itself: it must catch the requests the real APIs refuse (or tests asserting "no
//! problems" prove nothing), run its script in order, and parse script files.

use serde_json::{Value, json};

use crate::support::llm::raw_client;
use crate::support::mock_llm::{EXHAUSTED_TEXT, Fault, MockLlm, Reply, Script, Turn, Wire};

async fn post(mock: &MockLlm, wire: Wire, body: Value) -> (u16, String) {
    let (url, version) = match wire {
        Wire::Anthropic => (format!("{}/v1/messages", mock.anthropic_base_url()), Some("2023-06-01")),
        Wire::OpenAi => (format!("{}/chat/completions", mock.openai_base_url()), None),
        Wire::OpenAiResponses => (format!("{}/responses", mock.openai_base_url()), None),
    };
    let mut post = raw_client().post(url).json(&body);
    if let Some(version) = version {
        post = post.header("anthropic-version", version);
    }
    let response = post.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The text deltas of a raw SSE body of either wire, joined.
fn streamed_text(sse: &str) -> String {
    sse.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|event| {
            let piece = event["choices"][0]["delta"]["content"].as_str().or(event["delta"]["text"].as_str());
            piece.map(str::to_string)
        })
        .collect()
}

/// The problems the mock found in one hand-made request.
async fn problems(wire: Wire, body: Value) -> Vec<String> {
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    post(&mock, wire, body).await;
    mock.requests().remove(0).problems
}

fn anthropic(messages: Value) -> Value {
    json!({"model": "m", "max_tokens": 100, "stream": true, "messages": messages})
}

fn assert_flags(problems: &[String], needle: &str) {
    assert!(problems.iter().any(|p| p.contains(needle)), "expected a problem containing {needle:?}, got {problems:?}");
}

#[tokio::test]
async fn a_valid_anthropic_request_has_no_problems() {
    let body = anthropic(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "glob", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.rs"},
                                     {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]},
    ]));
    let mut with_tools = body.clone();
    with_tools["tools"] = json!([{"name": "glob", "description": "find files", "input_schema": {"type": "object"}}]);
    assert_eq!(problems(Wire::Anthropic, with_tools.clone()).await, Vec::<String>::new());
    // As the API does: tool blocks with no tools defined, or a tool choice without tools, are
    // refused with a 400.
    assert_flags(&problems(Wire::Anthropic, body).await, "blocks must define tools");
    let mut none = with_tools.clone();
    none["tool_choice"] = json!({"type": "none"});
    assert_eq!(problems(Wire::Anthropic, none.clone()).await, Vec::<String>::new(), "ask mode's request");
    none.as_object_mut().unwrap().remove("tools");
    assert_flags(&problems(Wire::Anthropic, none).await, "tool_choice may only be specified while providing tools");
}

#[tokio::test]
async fn anthropic_violations_are_caught() {
    let flags = problems(Wire::Anthropic, json!({"model": "m", "stream": false, "messages": []})).await;
    assert_flags(&flags, "`stream` must be true");
    assert_flags(&flags, "max_tokens");
    assert_flags(&flags, "non-empty array");

    let flags = problems(
        Wire::Anthropic,
        anthropic(json!([
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": [{"type": "text", "text": ""}]},
            {"role": "user", "content": "again"},
        ])),
    )
    .await;
    assert_flags(&flags, "first message must come from the user");
    assert_flags(&flags, "empty text block");
    assert_flags(&flags, "roles must alternate");

    let flags = problems(
        Wire::Anthropic,
        anthropic(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "glob", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": "ignored the call"},
                                         {"type": "tool_result", "tool_use_id": "t9", "content": "x"}]},
        ])),
    )
    .await;
    assert_flags(&flags, "tool_use t1 is not answered");
    assert_flags(&flags, "tool_result for t9 answers no tool_use");
    assert_flags(&flags, "results go first");

    let marker = json!({"type": "ephemeral"});
    let mut body = anthropic(json!([{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": marker},
        {"type": "text", "text": "b", "cache_control": marker},
        {"type": "text", "text": "c", "cache_control": marker},
    ]}]));
    body["system"] = json!([{"type": "text", "text": "s1", "cache_control": marker},
                            {"type": "text", "text": "s2", "cache_control": marker}]);
    assert_flags(&problems(Wire::Anthropic, body).await, "cache_control may be provided. Found 5");
}

#[tokio::test]
async fn openai_violations_are_caught() {
    let body = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "glob", "arguments": {}}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "tool", "tool_call_id": "c7", "content": "??"},
        {"role": "user", "content": "next"},
    ]});
    let flags = problems(Wire::OpenAi, body).await;
    assert_flags(&flags, "include_usage");
    assert_flags(&flags, "c7");
    assert_flags(&flags, "\"c2\"} are not answered before message 4");
    assert_flags(&flags, "not a string");
}

#[tokio::test]
async fn the_script_runs_in_order_then_says_it_is_exhausted() {
    let mock = MockLlm::start(Script::new().fault(Fault::ServerError).turn(Turn::text("second"))).await;
    let body = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(post(&mock, Wire::OpenAi, body.clone()).await.0, 500);
    let (status, text) = post(&mock, Wire::OpenAi, body.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(streamed_text(&text), "second");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let (_, text) = post(&mock, Wire::OpenAi, body).await;
    assert_eq!(streamed_text(&text), EXHAUSTED_TEXT);
    let problems = mock.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("request 3"), "{problems:?}");
    assert_eq!(mock.remaining(), 0);
}

#[tokio::test]
async fn the_responder_answers_first_and_push_extends_the_queue() {
    let script = Script::new().responder(|request| {
        let summarise = request.body.to_string().contains("SUMMARISE");
        summarise.then(|| Reply::Turn(Turn::text("a summary")))
    });
    let mock = MockLlm::start(script).await;
    mock.push(Turn::text("queued"));
    let ask = |text: &str| anthropic(json!([{"role": "user", "content": text}]));
    assert_eq!(streamed_text(&post(&mock, Wire::Anthropic, ask("SUMMARISE this")).await.1), "a summary");
    assert_eq!(streamed_text(&post(&mock, Wire::Anthropic, ask("hello")).await.1), "queued");
    assert_eq!(streamed_text(&post(&mock, Wire::Anthropic, ask("hello")).await.1), EXHAUSTED_TEXT);
}

#[test]
fn script_files_use_snake_case_json() {
    let replies: Vec<Reply> = serde_json::from_str(
        r#"[
            {"turn": {"text": "hi"}},
            {"turn": {"tool_calls": [{"name": "file_read", "arguments": {"path": "a.txt"}}]}},
            {"fault": "overloaded"},
            {"fault": {"status": {"code": 429, "retry_after": 0.5}}}
        ]"#,
    )
    .unwrap();
    assert!(matches!(&replies[0], Reply::Turn(t) if t.text == "hi"));
    assert!(matches!(&replies[1], Reply::Turn(t) if t.tool_calls[0].raw_arguments() == r#"{"path":"a.txt"}"#));
    assert!(matches!(replies[2], Reply::Fault(Fault::Overloaded)));
    assert!(
        matches!(replies[3], Reply::Fault(Fault::Status { code: 429, retry_after: Some(r), body: None }) if r == 0.5)
    );
}

/// The cache reads one Anthropic request reports (`message_start`'s usage).
fn cache_read(sse: &str) -> u64 {
    sse.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|event| event["type"] == "message_start")
        .and_then(|event| event["message"]["usage"]["cache_read_input_tokens"].as_u64())
        .unwrap_or(0)
}

/// As Anthropic documents: changing `tool_choice` invalidates the cached message blocks, while
/// the tools and the system prompt stay cached (and the earlier choice's entries stay live).
#[tokio::test]
async fn a_change_of_tool_choice_reads_only_tools_and_system_from_the_cache() {
    let mock = MockLlm::start(Script::new().simulate_cache().responder(|_| Some(Reply::Turn(Turn::text("ok"))))).await;
    let marker = json!({"type": "ephemeral"});
    let request = |choice: Option<Value>| {
        let mut body = json!({
            "model": "m", "max_tokens": 100, "stream": true,
            "tools": [{"name": "file_read", "description": "Read a file.", "input_schema": {"type": "object"}}],
            "system": [{"type": "text", "text": "s".repeat(8_000), "cache_control": marker}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "m".repeat(8_000), "cache_control": marker}]}],
        });
        if let Some(choice) = choice {
            body["tool_choice"] = choice;
        }
        body
    };
    let mut reads = Vec::new();
    for choice in [None, Some(json!({"type": "auto"})), Some(json!({"type": "none"})), None] {
        let (status, sse) = post(&mock, Wire::Anthropic, request(choice)).await;
        assert_eq!(status, 200, "{sse}");
        reads.push(cache_read(&sse));
    }
    assert_eq!(reads[0], 0, "nothing cached yet: {reads:?}");
    assert!(reads[1] > 4_000, "absent is auto: the whole prefix is read: {reads:?}");
    assert!((2_000..2_100).contains(&reads[2]), "tools and system only: {reads:?}");
    assert_eq!(reads[3], reads[1], "back to auto, whose entries are still live: {reads:?}");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
