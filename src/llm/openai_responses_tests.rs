use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use super::*;
use crate::conversation::{SystemBlock, ToolResult, ToolSpec};
use crate::llm::responses_body::request_body;
use crate::llm::{Effort, Reasoning};

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "gpt-test".into(),
        system: vec![
            SystemBlock { text: "You are cairn.".into(), cache_breakpoint: true },
            SystemBlock { text: "Today is Monday.".into(), cache_breakpoint: false },
        ],
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        tools: vec![ToolSpec {
            name: "glob".into(),
            description: "Find files".into(),
            input_schema: json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
        }],
        tool_choice: crate::llm::ToolChoice::Auto,
        max_tokens: 2048,
        cache: None,
        tail: None,
        reasoning: Some(Reasoning::Effort(Effort::High)),
        images: true,
    }
}

fn reasoning(model: &str, summary: &[&str], encrypted: &str) -> Block {
    Block::Thinking(Thinking {
        source: ThinkingSource::OpenAiResponses,
        model: model.into(),
        text: summary.join("\n\n"),
        signature: encrypted.into(),
        redacted: false,
        id: Some("rs_1".into()),
        summary: summary.iter().map(|s| s.to_string()).collect(),
    })
}

#[test]
fn the_body_carries_instructions_items_tools_and_encrypted_reasoning() {
    let messages = vec![
        Message::user("fix it"),
        Message {
            role: Role::Assistant,
            content: vec![
                reasoning("gpt-test", &["Plan.", "Para two.\n\nwith a gap"], "gAAAA=="),
                Block::Text { text: "Looking.".into() },
                Block::ToolCall(ToolCall::new("call_1", "glob", r#"{"pattern":"*.rs"}"#)),
            ],
        },
        Message::tool(ToolResult::ok("call_1", "glob", "a.rs")),
    ];
    let body = request_body(&request(messages));
    assert_eq!(body["instructions"], "You are cairn.\n\nToday is Monday.");
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            {"type": "reasoning", "summary": [
                {"type": "summary_text", "text": "Plan."},
                {"type": "summary_text", "text": "Para two.\n\nwith a gap"},
            ], "encrypted_content": "gAAAA=="},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
            {"type": "function_call", "call_id": "call_1", "name": "glob", "arguments": "{\"pattern\":\"*.rs\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.rs"},
        ])
    );
    assert_eq!(body["tools"][0]["name"], "glob");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!((body["store"].as_bool(), body["stream"].as_bool()), (Some(false), Some(true)));
    assert_eq!(body["max_output_tokens"], 2048);
}

#[test]
fn a_model_that_does_not_reason_gets_no_reasoning_and_other_models_thinking_stays_home() {
    let messages = vec![
        Message::user("hi"),
        Message {
            role: Role::Assistant,
            content: vec![reasoning("gpt-other", &["x"], "enc"), Block::Text { text: "ok".into() }],
        },
        Message::user("again"),
    ];
    let mut req = request(messages);
    req.reasoning = None;
    let body = request_body(&req);
    assert!(body.get("reasoning").is_none() && body.get("include").is_none());
    assert!(!body.to_string().contains("enc"), "{body}");
}

#[test]
fn images_go_as_input_images_in_prompts_and_tool_outputs() {
    let image = crate::conversation::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        width: 10,
        height: 10,
        source: "shot.png".into(),
    };
    let mut tool = Message::tool(ToolResult::ok("call_1", "file_read", "shot.png: PNG image"));
    tool.content.push(Block::Image(image.clone()));
    let user = Message { role: Role::User, content: vec![Block::Image(image), Block::Text { text: "see".into() }] };
    let messages = vec![
        user,
        Message { role: Role::Assistant, content: vec![Block::ToolCall(ToolCall::new("call_1", "file_read", "{}"))] },
        tool,
    ];
    let body = request_body(&request(messages));
    let url = "data:image/png;base64,iVBORw0KGgo=";
    assert_eq!(body["input"][0]["content"][0], json!({"type": "input_image", "image_url": url, "detail": "auto"}));
    assert_eq!(
        body["input"][2]["output"],
        json!([{"type": "input_text", "text": "shot.png: PNG image"}, {"type": "input_image", "image_url": url, "detail": "auto"}])
    );
}

fn ev(event: &str, data: Value) -> SseEvent {
    SseEvent { event: event.to_string(), data: data.to_string() }
}

fn run(events_in: Vec<SseEvent>) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let mut state = StreamState::new("gpt-test");
    let mut result = None;
    for e in &events_in {
        match state.handle(e, &tx) {
            Ok(true) => break,
            Ok(false) => {}
            Err(err) => {
                result = Some(Err(err));
                break;
            }
        }
    }
    let result = result.unwrap_or_else(|| state.finish("http://test/v1/responses", "gpt-test"));
    drop(tx);
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (result, events)
}

fn tool_loop_stream() -> Vec<SseEvent> {
    vec![
        ev(
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1", "model": "gpt-test-2026", "status": "in_progress"}}),
        ),
        ev(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        ev(
            "response.reasoning_summary_part.added",
            json!({"type": "response.reasoning_summary_part.added",
            "output_index": 0, "summary_index": 0}),
        ),
        ev(
            "response.reasoning_summary_text.delta",
            json!({"type": "response.reasoning_summary_text.delta",
            "output_index": 0, "summary_index": 0, "delta": "Find the "}),
        ),
        ev(
            "response.reasoning_summary_text.delta",
            json!({"type": "response.reasoning_summary_text.delta",
            "output_index": 0, "summary_index": 0, "delta": "files."}),
        ),
        ev(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Find the files."}],
                     "encrypted_content": "gAAAAB"}}),
        ),
        ev(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "glob", "arguments": ""}}),
        ),
        ev(
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta",
            "output_index": 1, "item_id": "fc_1", "delta": "{\"pattern\":"}),
        ),
        ev(
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta",
            "output_index": 1, "item_id": "fc_1", "delta": "\"*\"}"}),
        ),
        ev(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 1,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "glob", "arguments": "{\"pattern\":\"*\"}"}}),
        ),
        ev(
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_1", "model": "gpt-test-2026",
            "status": "completed", "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024},
            "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 64}}}}),
        ),
    ]
}

#[test]
fn a_streamed_tool_loop_step_keeps_its_reasoning_and_call_and_normalises_usage() {
    let (result, events) = run(tool_loop_stream());
    let response = result.unwrap();
    assert_eq!(response.model, "gpt-test-2026");
    assert_eq!(response.stop, StopReason::ToolUse);
    let thinking: Vec<_> = response.message.thinking().collect();
    assert_eq!((thinking[0].text.as_str(), thinking[0].signature.as_str()), ("Find the files.", "gAAAAB"));
    assert_eq!((thinking[0].model.as_str(), thinking[0].source), ("gpt-test", ThinkingSource::OpenAiResponses));
    let call = response.message.tool_calls().next().unwrap();
    assert_eq!((call.id.as_str(), call.arguments.as_str()), ("call_1", "{\"pattern\":\"*\"}"));
    assert_eq!(
        (response.usage.input_tokens, response.usage.cache_read_input_tokens, response.usage.output_tokens),
        (176, 1024, 80)
    );
    assert!(events.contains(&StreamEvent::ToolCallStarted { id: "call_1".into(), name: "glob".into() }));
    assert!(events.contains(&StreamEvent::ThinkingDelta("Find the ".into())));
}

#[test]
fn a_stream_without_its_completion_is_transient() {
    let mut events = tool_loop_stream();
    events.pop();
    let (result, _) = run(events);
    let err = result.unwrap_err();
    assert!(err.is_transient() && err.to_string().contains("ended before the response was complete"), "{err}");
}

#[test]
fn failures_are_classified_by_their_code() {
    let failed = |code: &str| {
        run(vec![ev(
            "response.failed",
            json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": code, "message": format!("{code} happened")}}}),
        )])
        .0
        .unwrap_err()
    };
    assert!(failed("server_error").is_transient());
    let limited = failed("rate_limit_exceeded");
    assert!(limited.is_transient() && limited.to_string().contains("HTTP 429"), "{limited}");
    assert!(matches!(failed("context_length_exceeded"), LlmError::ContextLength { .. }));
    assert!(matches!(failed("invalid_prompt"), LlmError::Rejected { status: 400, .. }));
    let error_event = run(vec![ev("error", json!({"type": "error", "code": "server_error", "message": "boom"}))]).0;
    assert!(error_event.unwrap_err().is_transient());
    let bad = run(vec![SseEvent { event: "response.output_text.delta".into(), data: "{\"type\":".into() }]).0;
    assert!(bad.unwrap_err().is_transient());
}

#[test]
fn an_incomplete_response_is_complete_but_says_it_hit_the_cap() {
    let (result, events) = run(vec![
        ev(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Partial"}),
        ),
        ev(
            "response.incomplete",
            json!({"type": "response.incomplete", "response": {"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 10, "output_tokens": 5}}}),
        ),
    ]);
    let response = result.unwrap();
    assert_eq!(response.stop, StopReason::MaxTokens);
    assert_eq!(response.message.text(), "Partial");
    assert_eq!(events, [StreamEvent::TextDelta("Partial".into())]);
}

#[test]
fn the_tail_is_the_last_input_item() {
    let mut req = request(vec![Message::user("hi"), Message::assistant("hello")]);
    req.tail = Some("- [ ] 1: step".into());
    let body = request_body(&req);
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input.last().unwrap(),
        &json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "- [ ] 1: step"}]})
    );
    let without = request_body(&request(vec![Message::user("hi"), Message::assistant("hello")]));
    assert_eq!(input.len(), without["input"].as_array().unwrap().len() + 1);
    assert_eq!(input[..input.len() - 1], without["input"].as_array().unwrap()[..], "nothing before it moves");
}
