//! What the real APIs would refuse, checked on every request the mock receives: stream flags,
//! role order, tool calls paired with their results, empty text, stray `cache_control`. Each
//! problem is a sentence naming the message and what is wrong. (What they refuse with a 400 the
//! mock refuses too: `mock_strict.rs`.)

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::Wire;

pub fn request(
    wire: Wire,
    headers: &BTreeMap<String, String>,
    body: &Value,
    honours_cache_control: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    if body.is_null() {
        return problems;
    }
    if body["stream"] != Value::Bool(true) {
        problems.push("`stream` must be true".to_string());
    }
    if body["model"].as_str().is_none_or(str::is_empty) {
        problems.push("`model` is missing".to_string());
    }
    match wire {
        Wire::Anthropic => anthropic(headers, body, &mut problems),
        Wire::OpenAi => openai(body, honours_cache_control, &mut problems),
        Wire::OpenAiResponses => responses(body, &mut problems),
    }
    problems
}

fn responses(body: &Value, problems: &mut Vec<String>) {
    if body["store"] != Value::Bool(false) {
        problems
            .push("`store` must be false: cairn keeps its own history and sends reasoning back encrypted".to_string());
    }
    if !body["input"].is_array() {
        problems.push("`input` must be a list of items".to_string());
    }
    if !body["reasoning"].is_null()
        && !body["include"].as_array().is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"))
    {
        problems
            .push("with `store: false`, reasoning is lost unless `include` asks for its encrypted content".to_string());
    }
    if count_key(body, "cache_control") > 0 {
        problems.push("`cache_control` is not a Responses API field".to_string());
    }
    for (i, tool) in body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        if tool["type"] != "function"
            || tool["name"].as_str().is_none_or(str::is_empty)
            || !tool["parameters"].is_object()
        {
            problems
                .push(format!("tool {i} must be {{type: function, name, parameters}} (flat, not under `function`)"));
        }
    }
    for (i, item) in body["input"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        if item["type"] == "message" && item["content"].as_array().is_some_and(Vec::is_empty) {
            problems.push(format!("input {i}: a message with no content"));
        }
    }
}

/// How many times `key` appears as an object key anywhere in `value`.
pub fn count_key(value: &Value, key: &str) -> usize {
    match value {
        Value::Object(map) => map.iter().map(|(k, v)| usize::from(k == key) + count_key(v, key)).sum(),
        Value::Array(items) => items.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

fn anthropic(headers: &BTreeMap<String, String>, body: &Value, problems: &mut Vec<String>) {
    if !headers.contains_key("anthropic-version") {
        problems.push("the `anthropic-version` header is missing".to_string());
    }
    if !body["max_tokens"].is_u64() {
        problems.push("`max_tokens` is missing (Anthropic requires it)".to_string());
    }
    match &body["system"] {
        Value::Null | Value::String(_) => {}
        Value::Array(blocks) => {
            for (i, block) in blocks.iter().enumerate() {
                if block["type"] != "text" || block["text"].as_str().is_none_or(str::is_empty) {
                    problems.push(format!("system block {i} is not a non-empty text block"));
                }
            }
        }
        _ => problems.push("`system` must be a string or an array of text blocks".to_string()),
    }
    for (i, tool) in body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        if tool["name"].as_str().is_none_or(str::is_empty) || !tool["input_schema"].is_object() {
            problems.push(format!("tool {i} needs a `name` and an `input_schema` object"));
        }
    }
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        problems.push("`messages` must be a non-empty array".to_string());
        return;
    };
    if messages[0]["role"] != "user" {
        problems.push("the first message must come from the user".to_string());
    }
    let mut seen_ids = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("");
        if role != "user" && role != "assistant" {
            problems.push(format!("message {i} has role {role:?}; only user and assistant are allowed"));
        }
        if i > 0 && messages[i - 1]["role"] == message["role"] {
            problems.push(format!("messages {} and {i} are both {role}: roles must alternate", i - 1));
        }
        let blocks = anthropic_blocks(i, message, problems);
        let mut after_text = false;
        for block in &blocks {
            match block["type"].as_str().unwrap_or("") {
                "text" => {
                    after_text = true;
                    if block["text"].as_str().is_none_or(str::is_empty) {
                        problems.push(format!("message {i} has an empty text block"));
                    }
                }
                "tool_use" => {
                    if role != "assistant" {
                        problems.push(format!("message {i}: tool_use outside an assistant message"));
                    }
                    let id = block["id"].as_str().unwrap_or("");
                    if id.is_empty() || !seen_ids.insert(id.to_string()) {
                        problems.push(format!("message {i}: tool_use id {id:?} is empty or repeated"));
                    }
                    if !block["input"].is_object() {
                        problems.push(format!("message {i}: tool_use {id} has an `input` that is not an object"));
                    }
                }
                "tool_result" => {
                    if after_text {
                        problems.push(format!("message {i}: a tool_result follows a text block; results go first"));
                    }
                    if let Some(content) = block["content"].as_str().filter(|c| c.is_empty()) {
                        problems.push(format!("message {i}: tool_result has empty content {content:?}"));
                    }
                    for part in block["content"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
                        if part["type"] != "text" && part["type"] != "image" {
                            problems.push(format!("message {i}: a tool_result holds text and images only"));
                        }
                    }
                }
                // Checked with what the API refuses (mock_strict.rs).
                "thinking" | "redacted_thinking" | "image" => after_text = true,
                other => problems.push(format!("message {i}: unknown block type {other:?}")),
            }
        }
        // Every call is answered in the very next message, and every result answers a call of the
        // message just before.
        let calls = ids_of(&blocks, "tool_use", "id");
        let results = ids_of(&blocks, "tool_result", "tool_use_id");
        if !calls.is_empty() {
            let next = messages.get(i + 1).map(anthropic_blocks_quiet).unwrap_or_default();
            let answered = ids_of(&next, "tool_result", "tool_use_id");
            for id in calls.difference(&answered) {
                problems.push(format!("message {i}: tool_use {id} is not answered in the next message"));
            }
        }
        if !results.is_empty() {
            let previous = if i > 0 { anthropic_blocks_quiet(&messages[i - 1]) } else { Vec::new() };
            let asked = ids_of(&previous, "tool_use", "id");
            for id in results.difference(&asked) {
                problems.push(format!("message {i}: tool_result for {id} answers no tool_use of the message before"));
            }
        }
    }
}

fn anthropic_blocks(i: usize, message: &Value, problems: &mut Vec<String>) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) if text.is_empty() => {
            problems.push(format!("message {i} has empty content"));
            Vec::new()
        }
        Value::Array(blocks) if blocks.is_empty() => {
            problems.push(format!("message {i} has no content blocks"));
            Vec::new()
        }
        Value::Null => {
            problems.push(format!("message {i} has no content"));
            Vec::new()
        }
        _ => anthropic_blocks_quiet(message),
    }
}

fn anthropic_blocks_quiet(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn ids_of(blocks: &[Value], kind: &str, field: &str) -> BTreeSet<String> {
    blocks.iter().filter(|b| b["type"] == kind).filter_map(|b| b[field].as_str()).map(str::to_string).collect()
}

fn openai(body: &Value, honours_cache_control: bool, problems: &mut Vec<String>) {
    if body["stream_options"]["include_usage"] != Value::Bool(true) {
        problems.push("`stream_options.include_usage` must be true, or the stream reports no usage".to_string());
    }
    if !body["max_tokens"].is_null() && !body["max_completion_tokens"].is_null() {
        problems.push("both `max_tokens` and `max_completion_tokens` are set".to_string());
    }
    if !honours_cache_control && count_key(body, "cache_control") > 0 {
        problems.push("`cache_control` is an Anthropic field; OpenAI-compatible servers may refuse it".to_string());
    }
    for (i, tool) in body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]).iter().enumerate() {
        if tool["type"] != "function"
            || tool["function"]["name"].as_str().is_none_or(str::is_empty)
            || !tool["function"]["parameters"].is_object()
        {
            problems.push(format!("tool {i} must be {{type: function, function: {{name, parameters}}}}"));
        }
    }
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        problems.push("`messages` must be a non-empty array".to_string());
        return;
    };
    // Calls of the nearest assistant message not yet answered: (message index, ids).
    let mut open: Option<(usize, BTreeSet<String>)> = None;
    let mut asked: BTreeSet<String> = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("");
        if role != "tool" {
            if let Some((at, ids)) = open.take().filter(|(_, ids)| !ids.is_empty()) {
                problems.push(format!("message {at}: tool calls {ids:?} are not answered before message {i}"));
            }
            asked.clear();
        }
        match role {
            "system" | "developer" | "user" => {
                if message["content"].as_str().is_some_and(str::is_empty) || message["content"].is_null() {
                    problems.push(format!("message {i} ({role}) has empty content"));
                }
            }
            "assistant" => {
                let calls = message["tool_calls"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                if message["content"].is_null() && calls.is_empty() {
                    problems.push(format!("message {i}: an assistant message needs content or tool_calls"));
                }
                if message.get("tool_calls").is_some() && calls.is_empty() {
                    problems.push(format!("message {i}: `tool_calls` is present but empty"));
                }
                let mut ids = BTreeSet::new();
                for call in calls {
                    let id = call["id"].as_str().unwrap_or("");
                    if id.is_empty() || call["type"] != "function" || call["function"]["name"].as_str().is_none() {
                        problems.push(format!("message {i}: a tool call needs an id, type function and a name"));
                    }
                    if !call["function"]["arguments"].is_string() {
                        problems.push(format!("message {i}: tool call {id} has `arguments` that are not a string"));
                    }
                    ids.insert(id.to_string());
                }
                asked = ids.clone();
                open = Some((i, ids));
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or("");
                if !asked.contains(id) {
                    problems
                        .push(format!("message {i}: tool result for {id:?} answers no call of the assistant before"));
                }
                if let Some((_, ids)) = open.as_mut() {
                    ids.remove(id);
                }
                let text_parts = honours_cache_control
                    && message["content"]
                        .as_array()
                        .is_some_and(|parts| !parts.is_empty() && parts.iter().all(|p| p["type"] == "text"));
                if !(message["content"].is_string() || text_parts) {
                    problems.push(format!("message {i}: tool content must be a string"));
                }
            }
            other => problems.push(format!("message {i} has unknown role {other:?}")),
        }
    }
    if let Some((at, ids)) = open.filter(|(_, ids)| !ids.is_empty()) {
        problems.push(format!("message {at}: tool calls {ids:?} are never answered"));
    }
}
