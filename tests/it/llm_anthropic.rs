//! The Anthropic client against the mock over real HTTP: streaming, tool calls, usage, request
//! shape, cache breakpoints, and errors that must not be retried.

use cairn::config::{CacheTtl, RetryConfig, Secret};
use cairn::conversation::{Block, Message, Role, SystemBlock, ToolCall, ToolResult, Usage};
use cairn::llm::{AnthropicClient, LlmError, StopReason, StreamEvent};
use serde_json::{Value, json};

use crate::support::llm::{TEST_KEY, anthropic, fast_retry, request, send, stream_once};
use crate::support::mock_llm::{Fault, MockCall, MockLlm, MockUsage, Script, Turn};

fn texts(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_streams_in_pieces_with_usage_and_headers() {
    let usage = MockUsage {
        input_tokens: 21,
        output_tokens: 8,
        cache_read_input_tokens: 4_000,
        cache_creation_input_tokens: 300,
    };
    let text = "Hello, wörld — streaming ✓ works across chunks.";
    let mock = MockLlm::start(Script::new().turn(Turn::text(text).with_usage(usage))).await;
    let (result, events) = stream_once(&anthropic(&mock), &request(vec![Message::user("hi")])).await;
    let response = result.unwrap();

    assert_eq!(response.message.role, Role::Assistant);
    assert_eq!(response.message.content, vec![Block::Text { text: text.into() }]);
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(response.model, "mock-model");
    assert_eq!(
        response.usage,
        Usage { input_tokens: 21, output_tokens: 8, cache_read_input_tokens: 4_000, cache_creation_input_tokens: 300 }
    );
    let pieces = texts(&events);
    assert!(pieces.len() >= 2, "text arrives in several deltas: {pieces:?}");
    assert_eq!(pieces.concat(), text);

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
    assert_eq!(requests[0].header("x-api-key"), Some(TEST_KEY));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(requests[0].header("user-agent").is_some_and(|ua| ua.starts_with("cairn/")));
    assert_eq!(requests[0].header("authorization"), None);
}

#[tokio::test]
async fn tool_call_arguments_split_across_chunks_are_reassembled_exactly() {
    let calls = vec![
        MockCall::new("file_read", json!({"path": "src/main.rs", "note": "ünïcode ✓"})),
        MockCall::new("bash", json!("{\"command\": \"ls")).with_id("toolu_custom"),
    ];
    let turn = Turn::tools(calls.clone()).with_text("Reading it.").with_thinking("Let me think about this.");
    let mock = MockLlm::start(Script::new().turn(turn)).await;
    let (result, events) = stream_once(&anthropic(&mock), &request(vec![Message::user("read main")])).await;
    let response = result.unwrap();

    assert_eq!(response.stop, StopReason::ToolUse);
    let got: Vec<ToolCall> = response.message.tool_calls().cloned().collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].name, "file_read");
    assert!(got[0].id.starts_with("toolu_mock_"), "{}", got[0].id);
    assert_eq!(got[0].arguments, calls[0].raw_arguments());
    assert_eq!(
        got[1],
        ToolCall::new("toolu_custom", "bash", "{\"command\": \"ls"),
        "unparsable arguments pass through"
    );
    assert_eq!(response.message.text(), "Reading it.", "thinking is not part of the message");
    let started: Vec<&StreamEvent> =
        events.iter().filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. })).collect();
    assert_eq!(
        started,
        vec![
            &StreamEvent::ToolCallStarted { id: got[0].id.clone(), name: "file_read".into() },
            &StreamEvent::ToolCallStarted { id: "toolu_custom".into(), name: "bash".into() },
        ]
    );
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

fn tool_history() -> Vec<Message> {
    let mut messages = vec![Message::user("look around")];
    for i in 0..3 {
        let id = format!("toolu_{i}");
        messages.push(Message {
            role: Role::Assistant,
            content: vec![
                Block::Text { text: format!("step {i}") },
                Block::ToolCall(ToolCall::new(&id, "glob", r#"{"pattern":"*.rs"}"#)),
                Block::ToolCall(ToolCall::new(format!("{id}b"), "file_read", "{\"path\": ")),
            ],
        });
        messages.push(Message::tool(ToolResult::ok(&id, "glob", format!("src/{i}.rs"))));
        messages.push(Message::tool(ToolResult::error(format!("{id}b"), "file_read", "arguments are not valid JSON")));
    }
    messages.push(Message::user("and now?"));
    messages.push(Message::assistant(""));
    messages.push(Message::user("hello?"));
    messages
}

#[tokio::test]
async fn the_request_body_alternates_roles_and_groups_tool_results() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    stream_once(&anthropic(&mock), &request(tool_history())).await.0.unwrap();
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
    let sent = &mock.requests()[0];
    let roles: Vec<&str> = sent.messages().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]);
    let grouped = &sent.messages()[2]["content"];
    assert_eq!(grouped[0], json!({"type": "tool_result", "tool_use_id": "toolu_0", "content": "src/0.rs"}));
    assert_eq!(grouped[1]["is_error"], true);
    assert_eq!(sent.messages()[1]["content"][2]["input"], json!({}), "unparsable arguments are sent as {{}}");
    let last_tool_group = &sent.messages()[6]["content"];
    assert_eq!(last_tool_group.as_array().unwrap().len(), 3, "results, then the user's text: {last_tool_group}");
    assert_eq!(last_tool_group[2], json!({"type": "text", "text": "and now?"}));
    assert_eq!(sent.messages()[7]["content"], json!([{"type": "text", "text": "(no content)"}]));
    assert_eq!(sent.body["tools"][0]["name"], "file_read");
    assert_eq!(sent.body["tools"][0]["input_schema"]["required"], json!(["path"]));
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["max_tokens"], 4096);
    assert_eq!(sent.cache_markers(), 0, "caching is off in this request");
}

fn last_block(message: &Value) -> &Value {
    message["content"].as_array().unwrap().last().unwrap()
}

#[tokio::test]
async fn cache_breakpoints_mark_the_system_prompt_and_the_newest_messages() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("one")).turn(Turn::text("two"))).await;
    let mut req = request(tool_history());
    req.cache = Some(CacheTtl::FiveMinutes);
    req.system = vec![
        SystemBlock { text: "static prompt".into(), cache_breakpoint: true },
        SystemBlock { text: "frozen memories".into(), cache_breakpoint: true },
        SystemBlock { text: "cwd, date, git status".into(), cache_breakpoint: false },
    ];
    let client = anthropic(&mock);
    stream_once(&client, &req).await.0.unwrap();
    req.cache = Some(CacheTtl::OneHour);
    stream_once(&client, &req).await.0.unwrap();
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());

    let requests = mock.requests();
    for (sent, marker) in requests.iter().zip([json!({"type": "ephemeral"}), json!({"type": "ephemeral", "ttl": "1h"})])
    {
        assert_eq!(sent.cache_markers(), 4);
        let system = sent.body["system"].as_array().unwrap();
        assert_eq!(system[0]["cache_control"], marker);
        assert_eq!(system[1]["cache_control"], marker);
        assert!(system[2].get("cache_control").is_none());
        let messages = sent.messages();
        let n = messages.len();
        assert_eq!(last_block(&messages[n - 1])["cache_control"], marker);
        assert_eq!(last_block(&messages[n - 2])["cache_control"], marker);
        assert!(messages[..n - 2].iter().all(|m| !m.to_string().contains("cache_control")));
    }
}

#[tokio::test]
async fn unscripted_usage_is_estimated_from_the_request() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("a reply of some forty characters......"))).await;
    let req = request(vec![Message::user("x".repeat(4_000))]);
    let response = stream_once(&anthropic(&mock), &req).await.0.unwrap();
    assert!((1_000..1_400).contains(&response.usage.input_tokens), "{:?}", response.usage);
    assert_eq!(response.usage.output_tokens, 10);
}

#[tokio::test]
async fn a_bad_key_fails_at_once_without_showing_the_key() {
    let mock = MockLlm::start(Script::new().fault(Fault::Status { code: 401, retry_after: None, body: None })).await;
    let (result, events) = send(&anthropic(&mock), &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, key_var: "ANTHROPIC_API_KEY", .. }), "{err:?}");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
    assert!(!err.to_string().contains(TEST_KEY) && !format!("{err:?}").contains(TEST_KEY));
    assert_eq!(mock.requests().len(), 1);
    assert!(events.is_empty());
}

#[tokio::test]
async fn a_context_length_error_is_not_retried() {
    let mock = MockLlm::start(Script::new().fault(Fault::ContextLength).turn(Turn::text("unused"))).await;
    let (result, _) = send(&anthropic(&mock), &request(vec![Message::user("huge")])).await;
    assert!(matches!(result, Err(LlmError::ContextLength { ref message }) if message.contains("prompt is too long")));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn other_client_errors_are_rejected_with_the_api_message() {
    let body = json!({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-nope"}});
    let mock =
        MockLlm::start(Script::new().fault(Fault::Status { code: 404, retry_after: None, body: Some(body) })).await;
    let (result, _) = send(&anthropic(&mock), &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Rejected { status: 404, .. }), "{err:?}");
    assert!(err.to_string().contains("model: claude-nope"), "{err}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_stalled_stream_times_out_as_transient() {
    let mock = MockLlm::start(Script::new().fault(Fault::Stall)).await;
    let retry = RetryConfig { stream_idle_timeout_ms: 200, ..fast_retry() };
    let client = AnthropicClient::new(&mock.anthropic_base_url(), Some(Secret::new(TEST_KEY)), &retry).unwrap();
    let (result, events) = stream_once(&client, &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("stalled"), "{err}");
    assert!(!texts(&events).is_empty(), "the partial answer streamed before the stall");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_as_transient() {
    let mock = MockLlm::start(Script::new().fault(Fault::Unresponsive)).await;
    let retry = RetryConfig { stream_idle_timeout_ms: 200, ..fast_retry() };
    let client = AnthropicClient::new(&mock.anthropic_base_url(), None, &retry).unwrap();
    let err = stream_once(&client, &request(vec![Message::user("hi")])).await.0.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("sent no response"), "{err}");
}

#[tokio::test]
async fn a_json_answer_instead_of_a_stream_is_explained() {
    let body = json!({"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "not streamed"}]});
    let mock =
        MockLlm::start(Script::new().fault(Fault::Status { code: 200, retry_after: None, body: Some(body) })).await;
    let (result, _) = send(&anthropic(&mock), &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Rejected { status: 200, .. }), "{err:?}");
    assert!(err.to_string().contains("expected an event stream"), "{err}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn nothing_listening_is_a_transient_error_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let base = format!("http://{addr}");
    let client = AnthropicClient::new(&base, None, &fast_retry()).unwrap();
    let (result, _) = stream_once(&client, &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    assert!(err.to_string().contains(&format!("{base}/v1/messages")), "{err}");
}
