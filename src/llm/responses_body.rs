//! The body of an OpenAI Responses API request: the system prompt as `instructions`, the
//! conversation as input items (messages, `reasoning` items sent back with their
//! `encrypted_content`, `function_call`s and their `function_call_output`s, images as
//! `input_image`), function tools, and — for reasoning models — `reasoning` with
//! `include: ["reasoning.encrypted_content"]` and `store: false`, so the model's reasoning
//! carries across tool calls without OpenAI keeping the conversation.
//!
//! Item ids are not sent (as Codex does not): with `store: false` there is nothing stored to
//! refer to; what carries the reasoning is its encrypted content.

use std::sync::Arc;

use serde_json::{Value, json};

use super::anthropic_body::image_note;
use super::wire_cache::{WireCache, body_start};
use super::{ChatRequest, Effort, Reasoning, ToolChoice};
use crate::conversation::{Block, Image, Message, Role, Thinking, ThinkingSource};

pub(crate) type BodyCache = WireCache<Arc<str>>;

/// The JSON body of a streamed Responses request, as a value (for tests).
#[cfg(test)]
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    // Valid by construction: every piece is serialised JSON.
    serde_json::from_slice(&encode(request, &mut WireCache::default(), Vec::new())).unwrap_or(Value::Null)
}

/// The body of a streamed Responses request, from the input items `cache` remembers.
pub(crate) fn encode(request: &ChatRequest, cache: &mut BodyCache, buf: Vec<u8>) -> Vec<u8> {
    cache.begin_with(&format!("{}\u{1}{}", request.model, request.images));
    let items: Vec<Arc<str>> =
        request.messages.iter().map(|m| cache.get(m, |m| input_items(m, &request.model, request.images))).collect();
    cache.end();
    let instructions: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).filter(|t| !t.is_empty()).collect();
    let tools = (!request.tools.is_empty()).then(|| {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.input_schema, "strict": false})
            })
            .collect();
        Value::Array(tools).to_string()
    });
    let size: usize = items.iter().map(|i| i.len() + 1).sum::<usize>()
        + instructions.iter().map(|t| t.len() + 2).sum::<usize>()
        + tools.as_ref().map_or(0, String::len)
        + request.model.len()
        + 320;
    let mut out = body_start(buf, size, &request.model);
    if !instructions.is_empty() {
        out.push_str(",\"instructions\":");
        out.push_str(&Value::String(instructions.join("\n\n")).to_string());
    }
    out.push_str(",\"input\":[");
    let mut first = true;
    for item in items.iter().filter(|i| !i.is_empty()) {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(item);
    }
    // Last, so the automatic prefix cache keeps every item before it.
    if let Some(tail) = request.tail.as_deref().filter(|t| !t.trim().is_empty()) {
        if !first {
            out.push(',');
        }
        let text = json!({"type": "input_text", "text": tail});
        out.push_str(&json!({"type": "message", "role": "user", "content": [text]}).to_string());
    }
    out.push(']');
    if let Some(tools) = &tools {
        out.push_str(",\"tools\":");
        out.push_str(tools);
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
        };
        out.push_str(&format!(",\"tool_choice\":\"{choice}\",\"parallel_tool_calls\":true"));
    }
    if let Some(reasoning) = reasoning_member(request.reasoning) {
        out.push_str(",\"reasoning\":");
        out.push_str(&reasoning);
        out.push_str(",\"include\":[\"reasoning.encrypted_content\"]");
    }
    out.push_str(&format!(",\"max_output_tokens\":{},\"store\":false,\"stream\":true}}", request.max_tokens));
    out.into_bytes()
}

/// `{"effort": …, "summary": "auto"}` for a model that reasons; `None` for one that does not.
fn reasoning_member(reasoning: Option<Reasoning>) -> Option<String> {
    let effort = match reasoning? {
        Reasoning::Default | Reasoning::Off => None,
        Reasoning::Effort(effort) | Reasoning::Adaptive(effort) => Some(effort),
        Reasoning::Budget { tokens, .. } => Some(match tokens {
            t if t >= 24_000 => Effort::High,
            t if t >= 8_000 => Effort::Medium,
            _ => Effort::Low,
        }),
    };
    Some(match effort {
        Some(effort) => format!(r#"{{"effort":"{}","summary":"auto"}}"#, effort.as_str()),
        None => r#"{"summary":"auto"}"#.to_string(),
    })
}

/// A stored message's input items as JSON text, comma-separated (empty when it has none).
fn input_items(message: &Message, model: &str, images: bool) -> Arc<str> {
    let mut items: Vec<Value> = Vec::new();
    match message.role {
        Role::User => {
            let mut content: Vec<Value> = message.images().map(|i| image_part(i, model, images)).collect();
            let text = message.text();
            if !text.is_empty() || content.is_empty() {
                let text = if text.is_empty() { "(no content)".to_string() } else { text };
                content.push(json!({"type": "input_text", "text": text}));
            }
            items.push(json!({"type": "message", "role": "user", "content": content}));
        }
        Role::Assistant => {
            // In order, so each reasoning item comes right before what it led to.
            let mut text = String::new();
            let flush = |text: &mut String, items: &mut Vec<Value>| {
                if !text.is_empty() {
                    items.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": std::mem::take(text)}]}));
                }
            };
            for block in &message.content {
                match block {
                    Block::Thinking(thinking) => {
                        if let Some(item) = reasoning_item(thinking, model) {
                            flush(&mut text, &mut items);
                            items.push(item);
                        }
                    }
                    Block::Text { text: t } => {
                        if !text.is_empty() && !t.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(t);
                    }
                    Block::ToolCall(call) => {
                        flush(&mut text, &mut items);
                        let arguments = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
                        items.push(json!({"type": "function_call", "call_id": call.id, "name": call.name,
                            "arguments": arguments}));
                    }
                    Block::ToolResult(_) | Block::Image(_) => {}
                }
            }
            flush(&mut text, &mut items);
        }
        Role::Tool => {
            if let Some(result) = message.tool_result() {
                let pictures: Vec<&Image> = message.images().collect();
                let output = if pictures.is_empty() {
                    Value::String(result.content.clone())
                } else {
                    let mut parts = vec![json!({"type": "input_text", "text": result.content})];
                    parts.extend(pictures.iter().map(|i| image_part(i, model, images)));
                    Value::Array(parts)
                };
                items.push(json!({"type": "function_call_output", "call_id": result.call_id, "output": output}));
            }
        }
    }
    items.iter().map(Value::to_string).collect::<Vec<_>>().join(",").into()
}

/// A reasoning item goes back only to the model that produced it, and only with its
/// encrypted content (without it, `store: false` leaves nothing to refer to).
fn reasoning_item(thinking: &Thinking, model: &str) -> Option<Value> {
    if thinking.source != ThinkingSource::OpenAiResponses || thinking.model != model || thinking.signature.is_empty() {
        return None;
    }
    let summary: Vec<Value> =
        thinking.summary.iter().map(|part| json!({"type": "summary_text", "text": part})).collect();
    Some(json!({"type": "reasoning", "summary": summary, "encrypted_content": thinking.signature}))
}

fn image_part(image: &Image, model: &str, images: bool) -> Value {
    if images {
        json!({"type": "input_image", "image_url": image.data_url(), "detail": "auto"})
    } else {
        json!({"type": "input_text", "text": image_note(image, model)})
    }
}
