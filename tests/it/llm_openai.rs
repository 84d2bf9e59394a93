//! The OpenAI-compatible client against the mock over real HTTP: streaming, tool calls, usage
//! normalisation, request shape, and errors that must not be retried.

use cairn::config::Secret;
use cairn::conversation::{Block, Message, Role, SystemBlock, ToolCall, ToolResult, Usage};
use cairn::llm::{LlmError, OpenAiClient, StopReason, StreamEvent};
use serde_json::json;

use crate::support::llm::{TEST_KEY, fast_retry, openai, request, send, stream_once};
use crate::support::mock_llm::{Fault, MockCall, MockLlm, MockUsage, Script, Turn};

#[tokio::test]
async fn text_streams_and_cached_tokens_are_not_counted_twice() {
    let usage =
        MockUsage { input_tokens: 150, output_tokens: 12, cache_read_input_tokens: 2_048, ..MockUsage::default() };
    let text = "Streaming über OpenAI — in pieces ✓";
    let mock =
        MockLlm::start(Script::new().turn(Turn::text(text).with_usage(usage).with_thinking("hmm, reasoning"))).await;
    let (result, events) = stream_once(&openai(&mock), &request(vec![Message::user("hi")])).await;
    let response = result.unwrap();

    assert_eq!(response.message.content, vec![Block::Text { text: text.into() }], "reasoning is not content");
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(response.model, "mock-model");
    assert_eq!(
        response.usage,
        Usage { input_tokens: 150, output_tokens: 12, cache_read_input_tokens: 2_048, cache_creation_input_tokens: 0 }
    );
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() >= 2, "{deltas:?}");
    assert_eq!(deltas.concat(), text);
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

#[tokio::test]
async fn tool_calls_split_across_chunks_are_reassembled_exactly() {
    let calls = vec![
        MockCall::new("file_read", json!({"path": "docs/ünï.md"})),
        MockCall::new("glob", json!({"pattern": "**/*.rs"})).with_id("call_fixed"),
    ];
    let mock = MockLlm::start(Script::new().turn(Turn::tools(calls.clone()).with_text("Two calls."))).await;
    let (result, events) = stream_once(&openai(&mock), &request(vec![Message::user("go")])).await;
    let response = result.unwrap();

    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.message.text(), "Two calls.");
    let got: Vec<ToolCall> = response.message.tool_calls().cloned().collect();
    assert_eq!(got.len(), 2);
    assert!(got[0].id.starts_with("call_mock_"));
    assert_eq!(got[0].arguments, calls[0].raw_arguments());
    assert_eq!(got[1], ToolCall::new("call_fixed", "glob", calls[1].raw_arguments()));
    assert!(events.contains(&StreamEvent::ToolCallStarted { id: "call_fixed".into(), name: "glob".into() }));
}

#[tokio::test]
async fn the_request_body_takes_the_chat_completions_shape() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok")).turn(Turn::text("ok"))).await;
    let mut req = request(vec![
        Message::user("read two files"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::Text { text: "Reading.".into() },
                Block::ToolCall(ToolCall::new("call_1", "file_read", r#"{"path":"a"}"#)),
                Block::ToolCall(ToolCall::new("call_2", "file_read", r#"{"path":"b"}"#)),
            ],
        },
        Message::tool(ToolResult::ok("call_1", "file_read", "A")),
        Message::tool(ToolResult::error("call_2", "file_read", "no such file")),
        Message::user("thanks"),
    ]);
    req.system.push(SystemBlock { text: "Dynamic part.".into(), cache_breakpoint: false });
    stream_once(&openai(&mock), &req).await.0.unwrap();
    let keyless = OpenAiClient::new(&mock.openai_base_url(), None, &fast_retry()).unwrap();
    stream_once(&keyless, &req).await.0.unwrap();
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());

    let requests = mock.requests();
    let sent = &requests[0];
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {TEST_KEY}").as_str()));
    assert_eq!(requests[1].header("authorization"), None, "no Authorization header without a key");
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent.body["max_tokens"], 4096, "a local server gets max_tokens");
    assert_eq!(
        sent.messages()[0],
        json!({"role": "system", "content": "You are cairn, a coding assistant.\n\nDynamic part."})
    );
    assert_eq!(
        sent.messages()[2]["tool_calls"][1]["function"],
        json!({"name": "file_read", "arguments": "{\"path\":\"b\"}"})
    );
    assert_eq!(sent.messages()[3], json!({"role": "tool", "tool_call_id": "call_1", "content": "A"}));
    assert_eq!(sent.messages()[4]["tool_call_id"], "call_2");
    assert_eq!(sent.body["tools"][1]["type"], "function");
    assert_eq!(sent.body["tools"][1]["function"]["name"], "glob");
    assert_eq!(sent.body["tools"][1]["function"]["parameters"]["type"], "object");
    assert_eq!(sent.cache_markers(), 0);
}

#[tokio::test]
async fn a_bad_key_fails_at_once_naming_openai_api_key() {
    let mock = MockLlm::start(Script::new().fault(Fault::Status { code: 401, retry_after: None, body: None })).await;
    let (result, _) = send(&openai(&mock), &request(vec![Message::user("hi")])).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, key_var: "OPENAI_API_KEY", .. }), "{err:?}");
    assert!(!err.to_string().contains(TEST_KEY));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_context_length_error_is_not_retried() {
    let mock = MockLlm::start(Script::new().fault(Fault::ContextLength).turn(Turn::text("unused"))).await;
    let (result, _) = send(&openai(&mock), &request(vec![Message::user("huge")])).await;
    assert!(
        matches!(result, Err(LlmError::ContextLength { ref message }) if message.contains("maximum context length"))
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_key_with_a_trailing_newline_still_works() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    let client = OpenAiClient::new(&mock.openai_base_url(), Some(Secret::new(format!("{TEST_KEY}\n"))), &fast_retry());
    stream_once(&client.unwrap(), &request(vec![Message::user("hi")])).await.0.unwrap();
    assert_eq!(mock.requests()[0].header("authorization"), Some(format!("Bearer {TEST_KEY}").as_str()));
}
