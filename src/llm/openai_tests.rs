use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use super::*;
use crate::conversation::ToolResult;
use crate::conversation::{SystemBlock, ToolSpec};
use crate::llm::Provider;
use crate::llm::openai_body::{Dialect, encode, request_body};

const SERVER: Api = Api { provider: "the OpenAI-compatible server", key_var: KEY_VAR };

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        system: vec![
            SystemBlock { text: "You are cairn.".into(), cache_breakpoint: true },
            SystemBlock { text: String::new(), cache_breakpoint: false },
            SystemBlock { text: "Today is Monday.".into(), cache_breakpoint: false },
        ],
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        tools: vec![],
        max_tokens: 2048,
        cache: None,
        tail: None,
        reasoning: None,
        images: true,
    }
}

#[test]
fn messages_tool_calls_and_results_take_the_openai_shape() {
    let messages = vec![
        Message::user("fix it"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::ToolCall(ToolCall::new("call_1", "file_read", r#"{"path":"a.rs"}"#)),
                Block::ToolCall(ToolCall::new("call_2", "glob", "")),
            ],
        },
        Message::tool(ToolResult::ok("call_1", "file_read", "fn main() {}")),
        Message::tool(ToolResult::error("call_2", "glob", "")),
        Message::assistant("Done."),
        Message::assistant(""),
    ];
    let body = request_body(&request(messages), false);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are cairn.\n\nToday is Monday."},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "file_read", "arguments": "{\"path\":\"a.rs\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "(no content)"},
            {"role": "assistant", "content": "Done."},
            {"role": "assistant", "content": "(no content)"},
        ])
    );
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 2048);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("tools").is_none());
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn the_tail_is_a_last_user_message() {
    let mut req = request(vec![Message::user("hi")]);
    req.tail = Some("- [ ] 1: step".into());
    let body = request_body(&req, false);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap(), &json!({"role": "user", "content": "- [ ] 1: step"}));
    assert_eq!(messages[messages.len() - 2]["content"], "hi");
}

#[test]
fn the_official_endpoint_gets_max_completion_tokens_and_function_tools() {
    let mut req = request(vec![Message::user("hi")]);
    req.system.clear();
    req.tools =
        vec![ToolSpec { name: "grep".into(), description: "Search".into(), input_schema: json!({"type": "object"}) }];
    let body = request_body(&req, true);
    assert_eq!(body["max_completion_tokens"], 2048);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["messages"][0]["role"], "user", "no system message without system text");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "grep", "description": "Search", "parameters": {"type": "object"}}}])
    );
}

fn chunk(data: Value) -> SseEvent {
    SseEvent { event: String::new(), data: data.to_string() }
}

fn done() -> SseEvent {
    SseEvent { event: String::new(), data: "[DONE]".into() }
}

fn run(events_in: Vec<SseEvent>) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let mut state = StreamState::new("requested", SERVER);
    let mut result = None;
    for event in &events_in {
        match state.handle(event, &tx) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                result = Some(Err(e));
                break;
            }
        }
    }
    let result = result.unwrap_or_else(|| state.finish("http://test/v1/chat/completions"));
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    (result, seen)
}

fn delta(delta: Value, finish: Value) -> SseEvent {
    chunk(json!({"id": "c1", "model": "gpt-real", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

fn tool_stream() -> Vec<SseEvent> {
    vec![
        delta(json!({"role": "assistant", "content": ""}), Value::Null),
        delta(json!({"content": "Reading "}), Value::Null),
        delta(json!({"content": "both."}), Value::Null),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "file_read", "arguments": ""}}]}),
            Value::Null,
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"pa"}}]}), Value::Null),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a.rs\"}"}}]}), Value::Null),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]}),
            Value::Null,
        ),
        delta(json!({}), json!("tool_calls")),
        chunk(json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 30,
            "prompt_tokens_details": {"cached_tokens": 1024}}})),
        done(),
    ]
}

#[test]
fn a_tool_call_stream_is_reassembled_and_usage_normalised() {
    let (result, seen) = run(tool_stream());
    let response = result.unwrap();
    assert_eq!(response.model, "gpt-real");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(
        response.message.content,
        vec![
            Block::Text { text: "Reading both.".into() },
            Block::ToolCall(ToolCall::new("call_a", "file_read", r#"{"path": "a.rs"}"#)),
            Block::ToolCall(ToolCall::new("call_b", "grep", "{}")),
        ]
    );
    assert_eq!(
        response.usage,
        Usage { input_tokens: 176, output_tokens: 30, cache_read_input_tokens: 1024, cache_creation_input_tokens: 0 }
    );
    assert_eq!(response.usage.prompt_tokens(), 1200);
    assert_eq!(
        seen,
        vec![
            StreamEvent::TextDelta("Reading ".into()),
            StreamEvent::TextDelta("both.".into()),
            StreamEvent::ToolCallStarted { id: "call_a".into(), name: "file_read".into() },
            StreamEvent::ToolCallStarted { id: "call_b".into(), name: "grep".into() },
        ]
    );
}

#[test]
fn calls_without_ids_or_indexes_get_generated_ids() {
    let events = vec![
        delta(json!({"tool_calls": [{"function": {"name": "glob", "arguments": "{\"pattern\":"}}]}), Value::Null),
        delta(json!({"tool_calls": [{"function": {"arguments": "\"*\"}"}}]}), Value::Null),
        delta(json!({"tool_calls": [{"function": {"name": "grep", "arguments": "{}"}}]}), json!("tool_calls")),
        done(),
    ];
    let (result, seen) = run(events);
    let calls: Vec<ToolCall> = result.unwrap().message.tool_calls().cloned().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("glob", r#"{"pattern":"*"}"#));
    assert_eq!((calls[1].name.as_str(), calls[1].arguments.as_str()), ("grep", "{}"));
    assert!(calls.iter().all(|c| c.id.starts_with("call_")));
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(
        seen,
        vec![
            StreamEvent::ToolCallStarted { id: calls[0].id.clone(), name: "glob".into() },
            StreamEvent::ToolCallStarted { id: calls[1].id.clone(), name: "grep".into() },
        ]
    );
}

#[test]
fn a_finish_reason_without_done_still_completes_but_neither_is_transient() {
    let events = vec![delta(json!({"content": "hi"}), Value::Null), delta(json!({}), json!("length"))];
    assert_eq!(run(events).0.unwrap().stop, StopReason::MaxTokens);
    let err = run(vec![delta(json!({"content": "hi"}), Value::Null)]).0.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("ended before"), "{err}");
}

#[test]
fn unparsable_chunks_are_transient() {
    let events =
        vec![delta(json!({"content": "hi"}), Value::Null), SseEvent { event: String::new(), data: "{oops".into() }];
    let err = run(events).0.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("not valid JSON"), "{err}");
}

#[test]
fn error_chunks_are_classified_like_http_errors() {
    let error =
        |e: Value| run(vec![delta(json!({"content": "hi"}), Value::Null), chunk(json!({"error": e}))]).0.unwrap_err();
    assert!(error(json!({"message": "Provider returned error", "code": 502})).is_transient());
    assert!(error(json!({"message": "overloaded", "type": "server_error"})).is_transient());
    assert!(matches!(
        error(json!({"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"})),
        LlmError::ContextLength { .. }
    ));
    assert!(matches!(
        error(json!({"message": "bad tool", "type": "invalid_request_error"})),
        LlmError::Rejected { status: 400, .. }
    ));
    assert!(matches!(
        error(json!({"message": "no key", "code": 401})),
        LlmError::Auth { key_var: "OPENAI_API_KEY", .. }
    ));
}

#[test]
fn finish_reasons_map() {
    for (wire, ours) in [
        ("stop", StopReason::EndTurn),
        ("tool_calls", StopReason::ToolUse),
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
        ("eos", StopReason::Other("eos".into())),
    ] {
        assert_eq!(stop_reason(wire), ours);
    }
}

#[test]
fn cached_tokens_never_exceed_the_prompt() {
    let usage = normalised_usage(
        &json!({"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 50}}),
    );
    assert_eq!((usage.input_tokens, usage.cache_read_input_tokens), (0, 10));
    let deepseek = normalised_usage(&json!({"prompt_tokens": 100, "prompt_cache_hit_tokens": 64}));
    assert_eq!((deepseek.input_tokens, deepseek.cache_read_input_tokens), (36, 64));
}

#[test]
fn a_body_from_cached_pieces_equals_one_written_from_scratch() {
    let mut history: Vec<std::sync::Arc<Message>> = Vec::new();
    let mut cache = crate::llm::wire_cache::WireCache::default();
    let messages = vec![
        Message::user("fix it"),
        Message { role: Role::Assistant, content: vec![Block::ToolCall(ToolCall::new("c1", "glob", "{}"))] },
        Message::tool(ToolResult::ok("c1", "glob", "a.rs")),
        Message::assistant("done"),
        Message::user(""),
    ];
    for message in messages {
        history.push(std::sync::Arc::new(message));
        let mut req = request(Vec::new());
        req.messages = history.clone();
        let cached: Value =
            serde_json::from_slice(&encode(&req, Dialect { official: false }, &mut cache, Vec::new())).unwrap();
        assert_eq!(cached, request_body(&req, false));
    }
}

fn png(source: &str) -> crate::conversation::Image {
    crate::conversation::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        width: 64,
        height: 32,
        source: source.into(),
    }
}

#[test]
fn reasoning_effort_goes_only_to_openai_reasoning_models() {
    let mut req = request(vec![Message::user("hi")]);
    req.reasoning = Some(crate::llm::Reasoning::Effort(crate::llm::Effort::Medium));
    assert_eq!(request_body(&req, true)["reasoning_effort"], "medium");
    // An Anthropic model behind a router would need its thinking sent back: not asked.
    req.reasoning = Some(crate::llm::Reasoning::Adaptive(crate::llm::Effort::Medium));
    assert!(request_body(&req, false).get("reasoning_effort").is_none());
    req.reasoning = Some(crate::llm::Reasoning::Default);
    assert!(request_body(&req, true).get("reasoning_effort").is_none());
}

#[test]
fn a_tools_images_follow_all_results_of_its_group_in_a_user_message() {
    let mut read = Message::tool(ToolResult::ok("c1", "file_read", "shot.png: PNG image"));
    read.content.push(Block::Image(png("shot.png")));
    let messages = vec![
        Message { role: Role::User, content: vec![Block::Image(png("a.png")), Block::Text { text: "look".into() }] },
        Message {
            role: Role::Assistant,
            content: vec![
                Block::ToolCall(ToolCall::new("c1", "file_read", r#"{"path":"shot.png"}"#)),
                Block::ToolCall(ToolCall::new("c2", "glob", "{}")),
            ],
        },
        read,
        Message::tool(ToolResult::ok("c2", "glob", "a.rs")),
        Message::assistant("seen"),
    ];
    let body = request_body(&request(messages), false);
    let m = &body["messages"];
    assert_eq!(
        m[1]["content"][0],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
    assert_eq!(m[1]["content"][1], json!({"type": "text", "text": "look"}));
    assert_eq!((m[3]["role"].as_str(), m[4]["role"].as_str()), (Some("tool"), Some("tool")));
    assert_eq!(m[5]["role"], "user", "after both results: {m}");
    assert_eq!(m[5]["content"][1]["type"], "image_url");
    assert_eq!(m[6]["role"], "assistant");
}

#[test]
fn breakpoints_go_in_content_parts_at_most_four_on_the_newest_turns() {
    let mut messages = vec![Message::user("start")];
    for i in 0..5 {
        let id = format!("c{i}");
        messages
            .push(Message { role: Role::Assistant, content: vec![Block::ToolCall(ToolCall::new(&id, "glob", "{}"))] });
        messages.push(Message::tool(ToolResult::ok(&id, "glob", format!("result {i}"))));
    }
    let mut req = request(messages);
    req.cache = Some(crate::config::CacheTtl::FiveMinutes);
    let body = request_body(&req, false);
    let marked: Vec<usize> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m.to_string().contains("cache_control"))
        .map(|(i, _)| i)
        .collect();
    // The system prompt's static block, then the three newest results.
    assert_eq!(marked, [0, 7, 9, 11], "{body}");
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(
        body["messages"][11]["content"][0],
        json!({"type": "text", "text": "result 4", "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(body["messages"][11]["tool_call_id"], "c4");
    assert!(body["messages"][0]["content"].as_array().unwrap().len() == 2, "one part per system block");
}

#[test]
fn breakpoint_usage_counts_cache_writes_apart() {
    let usage = normalised_usage(&json!({"prompt_tokens": 1000, "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}}));
    assert_eq!((usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens), (100, 600, 300));
}

#[test]
fn openrouter_anthropic_models_get_breakpoints_and_others_only_when_configured() {
    let retry = RetryConfig::default();
    let router = OpenAiClient::new("https://openrouter.ai/api/v1", None, &retry).unwrap();
    assert!(router.honours_cache_control("anthropic/claude-sonnet-5"));
    assert!(!router.honours_cache_control("openai/gpt-5.4"));
    let local = OpenAiClient::new("http://127.0.0.1:9/v1", None, &retry).unwrap();
    assert!(!local.honours_cache_control("anthropic/claude-sonnet-5"));
    assert!(local.with_cache_control(Some(true)).honours_cache_control("claude"));
}
