use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use super::*;
use crate::config::CacheTtl;
use crate::conversation::ToolResult;
use crate::conversation::{SystemBlock, ToolSpec};
use crate::llm::Reasoning;
use crate::llm::anthropic_body::request_body;

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "claude-test".into(),
        system: vec![SystemBlock { text: "You are cairn.".into(), cache_breakpoint: false }],
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        tools: vec![],
        tool_choice: crate::llm::ToolChoice::Auto,
        max_tokens: 1024,
        cache: None,
        tail: None,
        reasoning: None,
        images: true,
    }
}

fn assistant(blocks: Vec<Block>) -> Message {
    Message { role: Role::Assistant, content: blocks }
}

fn call(id: &str, name: &str, arguments: &str) -> Block {
    Block::ToolCall(ToolCall::new(id, name, arguments))
}

fn text(t: &str) -> Block {
    Block::Text { text: t.into() }
}

fn count_markers(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.iter().map(|(k, v)| usize::from(k == "cache_control") + count_markers(v)).sum(),
        Value::Array(items) => items.iter().map(count_markers).sum(),
        _ => 0,
    }
}

/// A conversation with three tool groups: eight messages on the wire... or fewer once merged.
fn long_history() -> Vec<Message> {
    let mut messages = vec![Message::user("start")];
    for i in 0..3 {
        let id = format!("toolu_{i}");
        messages.push(assistant(vec![call(&id, "glob", r#"{"pattern":"*"}"#)]));
        messages.push(Message::tool(ToolResult::ok(&id, "glob", format!("result {i}"))));
    }
    messages.push(assistant(vec![text("done")]));
    messages.push(Message::user("thanks"));
    messages
}

#[test]
fn tool_results_are_grouped_and_roles_alternate() {
    let messages = vec![
        Message::user("fix it"),
        assistant(vec![text("Looking."), call("t1", "file_read", r#"{"path":"a.rs"}"#), call("t2", "grep", "{")]),
        Message::tool(ToolResult::ok("t1", "file_read", "fn main() {}")),
        Message::tool(ToolResult::error("t2", "grep", "arguments are not valid JSON")),
        Message::user("also check b.rs"),
        Message::assistant(""),
        Message::user(""),
        Message::user("well?"),
    ];
    let body = request_body(&request(messages));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "file_read", "input": {"path": "a.rs"}},
                {"type": "tool_use", "id": "t2", "name": "grep", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "arguments are not valid JSON", "is_error": true},
                {"type": "text", "text": "also check b.rs"},
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "(no content)"}]},
            {"role": "user", "content": [{"type": "text", "text": "well?"}]},
        ])
    );
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["system"], json!([{"type": "text", "text": "You are cairn."}]));
    assert!(body.get("tools").is_none());
}

#[test]
fn tool_results_come_before_text_in_a_user_message() {
    let messages = vec![
        Message::user("go"),
        assistant(vec![call("t1", "glob", "{}")]),
        Message::user("interjection"),
        Message::tool(ToolResult::ok("t1", "glob", "")),
    ];
    let body = request_body(&request(messages));
    let last = &body["messages"][2]["content"];
    assert_eq!(last[0], json!({"type": "tool_result", "tool_use_id": "t1"}), "empty content is left out");
    assert_eq!(last[1]["text"], "interjection");
}

#[test]
fn tools_carry_name_description_and_schema() {
    let mut req = request(vec![Message::user("hi")]);
    req.tools = vec![ToolSpec {
        name: "glob".into(),
        description: "Find files".into(),
        input_schema: json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
    }];
    req.system.clear();
    let body = request_body(&req);
    assert_eq!(
        body["tools"],
        json!([{"name": "glob", "description": "Find files",
                "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}}}])
    );
    assert!(body.get("system").is_none(), "no system key without system text");
}

#[test]
fn no_cache_control_when_caching_is_off() {
    let body = request_body(&request(long_history()));
    assert_eq!(count_markers(&body), 0);
}

#[test]
fn two_system_breakpoints_leave_two_for_the_newest_messages() {
    let mut req = request(long_history());
    req.cache = Some(CacheTtl::FiveMinutes);
    req.system = vec![
        SystemBlock { text: "static".into(), cache_breakpoint: true },
        SystemBlock { text: "memory".into(), cache_breakpoint: true },
        SystemBlock { text: "dynamic".into(), cache_breakpoint: false },
    ];
    let body = request_body(&req);
    assert_eq!(count_markers(&body), 4);
    assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(body["system"][1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(body["system"][2].get("cache_control").is_none());
    let messages = body["messages"].as_array().unwrap();
    let n = messages.len();
    let last_block = |i: usize| messages[i]["content"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_block(n - 1)["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(last_block(n - 2)["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(count_markers(&messages[n - 3]), 0);
}

#[test]
fn extra_system_breakpoints_are_dropped_and_the_total_stays_at_four() {
    let mut req = request(long_history());
    req.cache = Some(CacheTtl::OneHour);
    req.system = (0..3).map(|i| SystemBlock { text: format!("part {i}"), cache_breakpoint: true }).collect();
    let body = request_body(&req);
    assert_eq!(count_markers(&body), 4);
    assert_eq!(count_markers(&body["system"]), 2);
    assert!(body["system"][2].get("cache_control").is_none(), "the first two are honoured");
    assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
}

#[test]
fn without_system_breakpoints_four_messages_are_marked() {
    let mut req = request(long_history());
    req.cache = Some(CacheTtl::FiveMinutes);
    let body = request_body(&req);
    assert_eq!(count_markers(&body), 4);
    assert_eq!(count_markers(&body["system"]), 0);
    let messages = body["messages"].as_array().unwrap();
    for message in messages.iter().rev().take(4) {
        let blocks = message["content"].as_array().unwrap();
        assert!(blocks.last().unwrap().get("cache_control").is_some(), "{message}");
        assert_eq!(count_markers(message), 1);
    }
}

#[test]
fn an_empty_system_block_passes_its_breakpoint_back() {
    let mut req = request(vec![Message::user("hi")]);
    req.cache = Some(CacheTtl::FiveMinutes);
    req.system = vec![
        SystemBlock { text: "static".into(), cache_breakpoint: false },
        SystemBlock { text: String::new(), cache_breakpoint: true },
    ];
    let body = request_body(&req);
    assert_eq!(body["system"].as_array().unwrap().len(), 1);
    assert!(body["system"][0].get("cache_control").is_some());
}

#[test]
fn the_tail_is_the_last_block_after_every_marker() {
    let mut req = request(long_history());
    req.cache = Some(CacheTtl::FiveMinutes);
    req.tail = Some("- [ ] 1: step".into());
    let body = request_body(&req);
    assert_eq!(count_markers(&body), 4, "the tail adds no marker");
    let messages = body["messages"].as_array().unwrap();
    let blocks = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(blocks.last().unwrap(), &json!({"type": "text", "text": "- [ ] 1: step"}));
    assert!(blocks[blocks.len() - 2].get("cache_control").is_some(), "the marker stays on the history's last block");
    let without = request_body(&request(long_history()));
    assert_eq!(messages.len(), without["messages"].as_array().unwrap().len(), "no extra turn");

    // After the model's turn, the tail is a user turn of its own.
    let mut req = request(vec![Message::user("hi"), assistant(vec![text("hello")])]);
    req.tail = Some("list".into());
    let body = request_body(&req);
    assert_eq!(body["messages"][2], json!({"role": "user", "content": [{"type": "text", "text": "list"}]}));
}

fn ev(event: &str, data: Value) -> SseEvent {
    SseEvent { event: event.into(), data: data.to_string() }
}

fn run(events_in: Vec<SseEvent>) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let mut state = StreamState::new("requested");
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
    let result = result.unwrap_or_else(|| state.finish("http://test/v1/messages", "claude-test"));
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    (result, seen)
}

fn full_stream() -> Vec<SseEvent> {
    vec![
        ev(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-real",
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 40, "output_tokens": 1}}}),
        ),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
        ),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ev("ping", json!({"type": "ping"})),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Let me "}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "look."}}),
        ),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "file_read", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"src/ma"}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "in.rs\"}"}}),
        ),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_10", "name": "glob", "input": {}}}),
        ),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 3})),
        ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 57, "input_tokens": 0}}),
        ),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
}

#[test]
fn a_full_stream_becomes_thinking_text_and_tool_calls() {
    let (result, seen) = run(full_stream());
    let response = result.unwrap();
    assert_eq!(response.model, "claude-real");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(
        response.message.content,
        vec![
            thinking("claude-test", "hmm", "sig"),
            text("Let me look."),
            call("toolu_9", "file_read", r#"{"path": "src/main.rs"}"#),
            call("toolu_10", "glob", "{}")
        ]
    );
    assert_eq!(
        response.usage,
        Usage { input_tokens: 12, output_tokens: 57, cache_read_input_tokens: 3000, cache_creation_input_tokens: 40 }
    );
    assert_eq!(
        seen,
        vec![
            StreamEvent::ThinkingDelta("hmm".into()),
            StreamEvent::TextDelta("Let me ".into()),
            StreamEvent::TextDelta("look.".into()),
            StreamEvent::ToolCallStarted { id: "toolu_9".into(), name: "file_read".into() },
            StreamEvent::ToolCallStarted { id: "toolu_10".into(), name: "glob".into() },
        ]
    );
}

#[test]
fn usage_updated_in_message_delta_wins() {
    let mut events = full_stream();
    events[17] = ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
               "usage": {"output_tokens": 9, "input_tokens": 20, "cache_read_input_tokens": 3100}}),
    );
    let response = run(events).0.unwrap();
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(response.usage.input_tokens, 20);
    assert_eq!(response.usage.cache_read_input_tokens, 3100);
    assert_eq!(response.usage.cache_creation_input_tokens, 40);
    assert_eq!(response.usage.output_tokens, 9);
}

#[test]
fn a_stream_without_message_stop_is_transient() {
    let mut events = full_stream();
    events.pop();
    let err = run(events).0.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("ended before"), "{err}");
}

#[test]
fn data_that_is_not_json_is_transient() {
    let mut events = full_stream();
    events.insert(8, SseEvent { event: "content_block_delta".into(), data: "{\"type\": \"content_bl".into() });
    let err = run(events).0.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("not valid JSON"), "{err}");
}

#[test]
fn error_events_are_classified() {
    let error = |kind: &str, message: &str| {
        let mut events = full_stream();
        events.insert(3, ev("error", json!({"type": "error", "error": {"type": kind, "message": message}})));
        run(events).0.unwrap_err()
    };
    assert!(error("overloaded_error", "Overloaded").is_transient());
    assert!(error("api_error", "Internal server error").is_transient());
    assert!(matches!(
        error("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        LlmError::ContextLength { .. }
    ));
    assert!(matches!(error("invalid_request_error", "messages.1: bad"), LlmError::Rejected { status: 400, .. }));
}

#[test]
fn stop_reasons_map() {
    for (wire, ours) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        ("pause_turn", StopReason::Other("pause_turn".into())),
    ] {
        assert_eq!(stop_reason(wire), ours);
    }
}

/// A session as it grows request by request, with one message rewritten along the way: the
/// body written from cached pieces is the body written from scratch, markers and merges too.
#[test]
fn a_body_from_cached_pieces_equals_one_written_from_scratch() {
    let mut history: Vec<std::sync::Arc<Message>> = Vec::new();
    let mut cache = crate::llm::anthropic_body::BodyCache::default();
    for (i, message) in long_history().into_iter().chain([Message::user("and one more")]).enumerate() {
        history.push(std::sync::Arc::new(message));
        if i == 4 {
            // A stage rewrote an old result: a new message in its place.
            history[2] = std::sync::Arc::new(Message::tool(ToolResult::ok("toolu_0", "glob", "[deduplicated]")));
        }
        for ttl in [None, Some(CacheTtl::FiveMinutes)] {
            let mut req = request(Vec::new());
            req.messages = history.clone();
            req.cache = ttl;
            req.system = vec![
                SystemBlock { text: "static".into(), cache_breakpoint: true },
                SystemBlock { text: "dynamic".into(), cache_breakpoint: false },
            ];
            let cached: Value =
                serde_json::from_slice(&crate::llm::anthropic_body::encode(&req, &mut cache, Vec::new()).body).unwrap();
            assert_eq!(cached, request_body(&req), "request {i}, {ttl:?}");
        }
    }
}

fn thinking(model: &str, text: &str, signature: &str) -> Block {
    Block::Thinking(crate::conversation::Thinking {
        source: crate::conversation::ThinkingSource::Anthropic,
        model: model.into(),
        text: text.into(),
        signature: signature.into(),
        redacted: false,
        id: None,
        summary: Vec::new(),
    })
}

fn png(source: &str) -> crate::conversation::Image {
    crate::conversation::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        width: 640,
        height: 480,
        source: source.into(),
    }
}

/// A tool loop in progress: the prompt, an assistant turn that thought and called a tool, and
/// the tool's result.
fn loop_with(first: Block) -> Vec<Message> {
    vec![
        Message::user("fix it"),
        assistant(vec![first, call("t1", "glob", "{}")]),
        Message::tool(ToolResult::ok("t1", "glob", "a.rs")),
    ]
}

#[test]
fn thinking_goes_back_unchanged_first_in_its_turn_and_never_carries_a_breakpoint() {
    let mut req = request(loop_with(thinking("claude-test", "Look for files.", "sig==")));
    req.reasoning = Some(Reasoning::Budget { tokens: 4_000, interleaved: true });
    req.cache = Some(CacheTtl::FiveMinutes);
    let encoded = crate::llm::anthropic_body::encode(&req, &mut Default::default(), Vec::new());
    assert!(encoded.interleaved, "the beta header goes with interleaved thinking");
    let body: Value = serde_json::from_slice(&encoded.body).unwrap();
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 4000}));
    let turn = &body["messages"][1]["content"];
    assert_eq!(turn[0], json!({"type": "thinking", "thinking": "Look for files.", "signature": "sig=="}));
    assert!(turn[1]["cache_control"].is_object(), "the breakpoint goes on the tool call: {turn}");
    assert_eq!(count_markers(&body), 3);
}

#[test]
fn a_tool_loop_begun_without_thinking_is_continued_without_asking_for_it() {
    // The turn's thinking came from another model: it is not sent, and the API would refuse a
    // loop whose last assistant turn does not open with thinking.
    let mut req = request(loop_with(thinking("claude-other", "x", "sig")));
    req.reasoning = Some(Reasoning::Budget { tokens: 4_000, interleaved: false });
    let body = request_body(&req);
    assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
    assert!(body.get("thinking").is_none(), "{body}");
    // A new prompt ends the loop: thinking is asked for again.
    let mut messages = loop_with(text("no thinking here"));
    messages.push(assistant(vec![text("done")]));
    messages.push(Message::user("next"));
    req.messages = messages.into_iter().map(std::sync::Arc::new).collect();
    assert_eq!(request_body(&req)["thinking"]["type"], "enabled");
}

#[test]
fn adaptive_effort_and_off_take_their_own_shapes() {
    let mut req = request(vec![Message::user("hi")]);
    req.reasoning = Some(Reasoning::Adaptive(crate::llm::Effort::High));
    let body = request_body(&req);
    assert_eq!(body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    assert_eq!(body["output_config"], json!({"effort": "high"}));
    req.reasoning = Some(Reasoning::Off);
    assert_eq!(request_body(&req)["thinking"], json!({"type": "disabled"}));
    req.reasoning = Some(Reasoning::Default);
    assert!(request_body(&req).get("thinking").is_none());
}

#[test]
fn redacted_thinking_goes_back_as_its_data() {
    let redacted = Block::Thinking(crate::conversation::Thinking {
        source: crate::conversation::ThinkingSource::Anthropic,
        model: "claude-test".into(),
        text: String::new(),
        signature: "ENCRYPTED".into(),
        redacted: true,
        id: None,
        summary: Vec::new(),
    });
    let body = request_body(&request(loop_with(redacted)));
    assert_eq!(body["messages"][1]["content"][0], json!({"type": "redacted_thinking", "data": "ENCRYPTED"}));
}

#[test]
fn images_go_in_user_turns_and_inside_tool_results_or_become_a_note() {
    let mut tool = Message::tool(ToolResult::ok("t1", "file_read", "shot.png: PNG image"));
    tool.content.push(Block::Image(png("shot.png")));
    let user = Message { role: Role::User, content: vec![Block::Image(png("a.png")), text("what is this?")] };
    let messages = vec![user, assistant(vec![call("t1", "file_read", r#"{"path":"shot.png"}"#)]), tool];
    let mut req = request(messages);
    let body = request_body(&req);
    assert_eq!(
        body["messages"][0]["content"][0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["content"][0], json!({"type": "text", "text": "shot.png: PNG image"}));
    assert_eq!(result["content"][1]["type"], "image");
    req.images = false;
    let body = request_body(&req);
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "[image a.png (640×480 png) not shown: claude-test does not take image input]"
    );
    assert!(!body.to_string().contains("iVBOR"), "no image data for a model without vision");
}

#[test]
fn a_thinking_stream_becomes_a_signed_block_before_the_call() {
    let (result, events) = run(vec![
        ev(
            "message_start",
            json!({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 5}}}),
        ),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hmm, "}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "glob."}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        ),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "REDACTED"}}),
        ),
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "glob", "input": {}}}),
        ),
        ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        ),
        ev("message_stop", json!({"type": "message_stop"})),
    ]);
    let message = result.unwrap().message;
    let thoughts: Vec<_> = message.thinking().collect();
    assert_eq!((thoughts[0].text.as_str(), thoughts[0].signature.as_str()), ("Hmm, glob.", "EqQB"));
    assert_eq!(thoughts[0].model, "claude-test");
    assert!(thoughts[1].redacted && thoughts[1].signature == "REDACTED");
    assert!(matches!(message.content[2], Block::ToolCall(_)));
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "Hmm, glob.");
}
