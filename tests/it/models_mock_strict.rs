//! The mock refuses what the real APIs refuse (with their 400 and error shape), so a run that
//! passes through it proves the requests were right: thinking signatures altered or missing,
//! a tool loop not opening with thinking, reasoning items without their encrypted content,
//! function calls without their reasoning, images that are not what they say, too many
//! breakpoints.

use std::io::Cursor;

use base64::Engine;
use serde_json::{Value, json};

use crate::support::llm::raw_client;
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

async fn post(url: String, body: &Value, anthropic: bool) -> (u16, String) {
    let mut post = raw_client().post(url).json(body);
    if anthropic {
        post = post.header("anthropic-version", "2023-06-01");
    }
    let response = post.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The `data:` objects of an SSE body.
fn events(sse: &str) -> Vec<Value> {
    sse.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|d| serde_json::from_str(d).ok()).collect()
}

fn png_base64(w: u32, h: u32) -> String {
    let mut out = Cursor::new(Vec::new());
    image::RgbImage::new(w, h).write_to(&mut out, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(out.into_inner())
}

/// One thinking tool call from the mock: its thinking block (as streamed) and tool_use id.
async fn issued_thinking(mock: &MockLlm) -> (Value, String) {
    let first = json!({"model": "m", "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "go"}]});
    let (status, sse) = post(format!("{}/v1/messages", mock.anthropic_base_url()), &first, true).await;
    assert_eq!(status, 200, "{sse}");
    let events = events(&sse);
    let text: String = events.iter().filter_map(|e| e["delta"]["thinking"].as_str()).collect();
    let signature = events.iter().find_map(|e| e["delta"]["signature"].as_str()).unwrap().to_string();
    let id = events.iter().find_map(|e| e["content_block"]["id"].as_str()).unwrap().to_string();
    (json!({"type": "thinking", "thinking": text, "signature": signature}), id)
}

fn anthropic_loop(thinking: Option<Value>, id: &str, enabled: bool) -> Value {
    let mut turn = vec![json!({"type": "tool_use", "id": id, "name": "glob", "input": {}})];
    if let Some(thinking) = thinking {
        turn.insert(0, thinking);
    }
    let mut body = json!({"model": "m", "max_tokens": 4000, "stream": true,
        "tools": [{"name": "glob", "description": "find files", "input_schema": {"type": "object"}}],
        "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": turn},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "a.rs"}]},
    ]});
    if enabled {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
    }
    body
}

#[tokio::test]
async fn anthropic_thinking_must_come_back_unchanged_and_first() {
    let script = Script::new()
        .turn(Turn::tool("glob", json!({})).with_thinking("Find the files."))
        .turn(Turn::text("ok"))
        .turn(Turn::text("ok"));
    let mock = MockLlm::start(script).await;
    let url = format!("{}/v1/messages", mock.anthropic_base_url());
    let (thinking, id) = issued_thinking(&mock).await;

    // Sent back as it came: accepted.
    let (status, body) = post(url.clone(), &anthropic_loop(Some(thinking.clone()), &id, true), true).await;
    assert_eq!(status, 200, "{body}");
    // Its text altered: the signature no longer verifies.
    let mut altered = thinking.clone();
    altered["thinking"] = json!("Find the files!");
    let (status, body) = post(url.clone(), &anthropic_loop(Some(altered), &id, true), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("Invalid `signature` in `thinking` block"), "{body}");
    // Left out while thinking is on: the loop's last turn must open with thinking.
    let (status, body) = post(url.clone(), &anthropic_loop(None, &id, true), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("must start with a thinking block"), "{body}");
    let problems = mock.problems();
    assert!(problems.iter().any(|p| p.contains("must be passed back unchanged")), "{problems:#?}");
    // Marked for caching: thinking blocks take no breakpoint.
    let mut marked = thinking.clone();
    marked["cache_control"] = json!({"type": "ephemeral"});
    let (status, body) = post(url, &anthropic_loop(Some(marked), &id, true), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("cache_control: Extra inputs are not permitted"), "{body}");
    assert!(!mock.problems().iter().any(|p| p.starts_with("request 2 ")), "{:#?}", mock.problems());
}

#[tokio::test]
async fn responses_reasoning_must_come_back_with_its_encrypted_content() {
    let script = Script::new().turn(Turn::tools(vec![MockCall::new("glob", json!({}))]).with_thinking("Plan."));
    let mock = MockLlm::start(script.turn(Turn::text("ok")).turn(Turn::text("ok")).turn(Turn::text("ok"))).await;
    let url = format!("{}/responses", mock.openai_base_url());
    let first = json!({"model": "gpt-5.4", "input": [{"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "go"}]}], "store": false, "stream": true,
        "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]});
    let (status, sse) = post(url.clone(), &first, false).await;
    assert_eq!(status, 200, "{sse}");
    let done: Vec<Value> = events(&sse)
        .into_iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .collect();
    let reasoning = done.iter().find(|i| i["type"] == "reasoning").unwrap().clone();
    let call = done.iter().find(|i| i["type"] == "function_call").unwrap().clone();
    let call_id = call["call_id"].as_str().unwrap();
    assert!(reasoning["encrypted_content"].as_str().is_some_and(|e| !e.is_empty()));
    let with = |items: Vec<Value>| {
        let mut input = vec![first["input"][0].clone()];
        input.extend(items);
        input.push(json!({"type": "function_call_output", "call_id": call_id, "output": "a.rs"}));
        json!({"model": "gpt-5.4", "input": input, "store": false, "stream": true})
    };
    let fc = json!({"type": "function_call", "call_id": call_id, "name": "glob", "arguments": "{}"});
    let sent_back = json!({"type": "reasoning", "summary": reasoning["summary"], "encrypted_content": reasoning["encrypted_content"]});
    let (status, body) = post(url.clone(), &with(vec![sent_back, fc.clone()]), false).await;
    assert_eq!(status, 200, "{body}");
    // The call without the reasoning that led to it.
    let (status, body) = post(url.clone(), &with(vec![fc.clone()]), false).await;
    assert_eq!(status, 400);
    assert!(body.contains("was provided without its required 'reasoning' item"), "{body}");
    // Reasoning by id alone: with store false there is nothing stored to find.
    let by_id = json!({"type": "reasoning", "id": reasoning["id"], "summary": []});
    let (status, body) = post(url.clone(), &with(vec![by_id, fc.clone()]), false).await;
    assert_eq!(status, 400);
    assert!(body.contains("Items are not persisted when `store` is set to false"), "{body}");
    // Encrypted content the server never issued.
    let forged = json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAAAforged"});
    let (status, body) = post(url, &with(vec![forged, fc]), false).await;
    assert_eq!(status, 400);
    assert!(body.contains("could not be verified"), "{body}");
}

#[tokio::test]
async fn images_must_be_what_they_say_and_small_enough() {
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    let url = format!("{}/v1/messages", mock.anthropic_base_url());
    let image = |media_type: &str, data: String| {
        json!({"model": "m", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}},
            {"type": "text", "text": "what is this?"}]}]})
    };
    let (status, body) = post(url.clone(), &image("image/png", png_base64(20, 10)), true).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(url.clone(), &image("image/jpeg", png_base64(20, 10)), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("but the image appears to be a image/png image"), "{body}");
    let (status, body) = post(url.clone(), &image("image/png", png_base64(8_100, 2)), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("exceed max allowed size: 8000 pixels"), "{body}");
    let (status, body) = post(url, &image("image/png", "A".repeat(5 * 1024 * 1024 + 4)), true).await;
    assert_eq!(status, 400);
    assert!(body.contains("image exceeds 5 MB maximum"), "{body}");
}

#[tokio::test]
async fn an_endpoint_honouring_cache_control_refuses_a_fifth_breakpoint() {
    let mock = MockLlm::start(Script::new().honour_cache_control().turn(Turn::text("ok")).turn(Turn::text("ok"))).await;
    let url = format!("{}/chat/completions", mock.openai_base_url());
    let marked = |n: usize| {
        let parts: Vec<Value> = (0..n)
            .map(|i| json!({"type": "text", "text": format!("part {i}"), "cache_control": {"type": "ephemeral"}}))
            .collect();
        json!({"model": "anthropic/claude-sonnet-4.5", "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": parts}]})
    };
    let (status, body) = post(url.clone(), &marked(4), false).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(url, &marked(5), false).await;
    assert_eq!(status, 400);
    assert!(body.contains("A maximum of 4 blocks with cache_control may be provided. Found 5."), "{body}");
}
