//! The body of an OpenAI-compatible chat completions request: system prompt, messages (a tool
//! message per result; images a tool returned follow the group's results in a user message,
//! since tool messages carry text only), tools, the output cap, `reasoning_effort` for
//! reasoning models, and — for endpoints that honour it (OpenRouter with Anthropic models) —
//! `cache_control` breakpoints in content parts, at most four, as on the Anthropic wire.
//!
//! Each stored message is serialised once ([`WireCache`]); a breakpoint is spliced into the
//! cached text where it goes, so a marked message costs one copy, not a re-serialisation.

use std::sync::Arc;

use serde_json::{Value, json};

use super::anthropic_body::image_note;
use super::wire_cache::{WireCache, body_start};
use super::{ChatRequest, Reasoning, ToolChoice};
use crate::config::CacheTtl;
use crate::conversation::{Block, Image, Message, Role};

/// Stands in for content that would otherwise be empty, which some servers reject.
const NO_CONTENT: &str = "(no content)";
/// Breakpoints an Anthropic model accepts, whoever forwards them.
const MAX_BREAKPOINTS: usize = 4;
/// System breakpoints honoured: end of the static prompt and end of the frozen memory block.
const MAX_SYSTEM_BREAKPOINTS: usize = 2;

/// One wire message as JSON text, and where a breakpoint would go (just before the closing
/// brace of its last content part) when its content is a list of parts.
#[derive(Clone, Debug)]
pub(crate) struct WirePiece {
    json: String,
    mark_at: Option<usize>,
    /// A user or tool message: the rolling window marks only these.
    input: bool,
}

/// A stored message on the wire: its messages, and the images a tool returned, as a user
/// message to send once every result of its group has been sent.
#[derive(Debug, Default)]
pub(crate) struct WireForm {
    pieces: Vec<WirePiece>,
    deferred: Option<WirePiece>,
}

pub(crate) type BodyCache = WireCache<Arc<WireForm>>;

/// What the request is written for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dialect {
    /// api.openai.com: `max_completion_tokens` rather than `max_tokens`.
    pub official: bool,
}

/// The JSON body of a streamed chat completions request, as a value (for tests).
#[cfg(test)]
pub(crate) fn request_body(request: &ChatRequest, official: bool) -> Value {
    // Valid by construction: every piece is serialised JSON.
    serde_json::from_slice(&encode(request, Dialect { official }, &mut WireCache::default(), Vec::new()))
        .unwrap_or(Value::Null)
}

/// The body of a streamed chat completions request, written from the messages' wire forms as
/// `cache` remembers them.
pub(crate) fn encode(request: &ChatRequest, dialect: Dialect, cache: &mut BodyCache, buf: Vec<u8>) -> Vec<u8> {
    let parts = request.cache.is_some();
    cache.begin_with(&format!("{}\u{1}{}\u{1}{}", request.model, request.images, parts));
    let forms: Vec<Arc<WireForm>> = request
        .messages
        .iter()
        .map(|m| cache.get(m, |m| Arc::new(wire_form(m, &request.model, request.images, parts))))
        .collect();
    cache.end();
    // In order: each message's pieces, a tool group's images once its last result is out.
    let mut pieces: Vec<&WirePiece> = Vec::new();
    let mut deferred: Vec<&WirePiece> = Vec::new();
    for (i, (form, message)) in forms.iter().zip(&request.messages).enumerate() {
        pieces.extend(&form.pieces);
        deferred.extend(&form.deferred);
        let group_ends =
            message.role == Role::Tool && request.messages.get(i + 1).is_none_or(|next| next.role != Role::Tool);
        if group_ends {
            pieces.append(&mut deferred);
        }
    }
    pieces.append(&mut deferred);
    let marker = request.cache.map(cache_control);
    let (system, system_marks) = system_message(request, marker.as_deref());
    let marked = marked_pieces(&pieces, marker.as_ref().map(|_| MAX_BREAKPOINTS - system_marks));
    let tools = (!request.tools.is_empty()).then(|| {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
        Value::Array(tools).to_string()
    });
    let size: usize = pieces.iter().map(|p| p.json.len() + 1).sum::<usize>()
        + system.as_ref().map_or(0, String::len)
        + tools.as_ref().map_or(0, String::len)
        + request.model.len()
        + 256;
    let mut out = body_start(buf, size, &request.model);
    out.push_str(",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"messages\":[");
    let mut first = true;
    if let Some(system) = &system {
        out.push_str(system);
        first = false;
    }
    for (i, piece) in pieces.iter().enumerate() {
        if !first {
            out.push(',');
        }
        first = false;
        match (&marker, piece.mark_at) {
            (Some(marker), Some(at)) if marked.contains(&i) => {
                out.push_str(&piece.json[..at]);
                out.push_str(",\"cache_control\":");
                out.push_str(marker);
                out.push_str(&piece.json[at..]);
            }
            _ => out.push_str(&piece.json),
        }
    }
    // Last, after every marker, so a cached prefix (automatic or marked) keeps every message.
    if let Some(tail) = request.tail.as_deref().filter(|t| !t.trim().is_empty()) {
        if !first {
            out.push(',');
        }
        out.push_str(&json!({"role": "user", "content": tail}).to_string());
    }
    let cap = if dialect.official { "max_completion_tokens" } else { "max_tokens" };
    out.push_str(&format!("],\"{cap}\":{}", request.max_tokens));
    // Only OpenAI's reasoning models take an effort here; Anthropic models behind a router
    // would need their thinking sent back, which this wire does not carry.
    if let Some(Reasoning::Effort(effort)) = request.reasoning {
        out.push_str(&format!(",\"reasoning_effort\":\"{}\"", effort.as_str()));
    }
    if let Some(tools) = &tools {
        out.push_str(",\"tools\":");
        out.push_str(tools);
        if request.tool_choice == ToolChoice::None {
            out.push_str(",\"tool_choice\":\"none\"");
        }
    }
    out.push('}');
    out.into_bytes()
}

fn cache_control(ttl: CacheTtl) -> String {
    match ttl {
        CacheTtl::FiveMinutes => r#"{"type":"ephemeral"}"#.to_string(),
        CacheTtl::OneHour => r#"{"type":"ephemeral","ttl":"1h"}"#.to_string(),
    }
}

/// The system message: one string, or — with breakpoints — a part per system block, the first
/// [`MAX_SYSTEM_BREAKPOINTS`] of those that end a cacheable prefix marked. Returns it and the
/// markers placed.
fn system_message(request: &ChatRequest, marker: Option<&str>) -> (Option<String>, usize) {
    let Some(marker) = marker else {
        let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).filter(|t| !t.is_empty()).collect();
        let system =
            (!system.is_empty()).then(|| json!({"role": "system", "content": system.join("\n\n")}).to_string());
        return (system, 0);
    };
    let mut blocks: Vec<(String, bool)> = Vec::new();
    for block in &request.system {
        if !block.text.is_empty() {
            blocks.push((block.text.clone(), block.cache_breakpoint));
        } else if let Some(previous) = blocks.last_mut() {
            previous.1 |= block.cache_breakpoint;
        }
    }
    if blocks.is_empty() {
        return (None, 0);
    }
    let marker: Value = serde_json::from_str(marker).unwrap_or(Value::Null);
    let mut marks = 0;
    let parts: Vec<Value> = blocks
        .into_iter()
        .map(|(text, breakpoint)| {
            let mut part = json!({"type": "text", "text": text});
            if breakpoint && marks < MAX_SYSTEM_BREAKPOINTS {
                part["cache_control"] = marker.clone();
                marks += 1;
            }
            part
        })
        .collect();
    (Some(json!({"role": "system", "content": parts}).to_string()), marks)
}

/// Which pieces carry a breakpoint: the last of each of the newest `budget` runs of user and
/// tool messages (a run is what one Anthropic user turn becomes), as the Anthropic wire marks
/// its newest user turns.
fn marked_pieces(pieces: &[&WirePiece], budget: Option<usize>) -> Vec<usize> {
    let Some(budget) = budget else { return Vec::new() };
    let mut ends: Vec<usize> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let run_ends = piece.input && pieces.get(i + 1).is_none_or(|next| !next.input);
        if run_ends && piece.mark_at.is_some() {
            ends.push(i);
        }
    }
    let skip = ends.len().saturating_sub(budget);
    ends.split_off(skip)
}

fn non_empty(text: String) -> String {
    if text.is_empty() { NO_CONTENT.to_string() } else { text }
}

/// `value` (a message) as a piece; with `parts`, its content is a list whose last part may
/// take a breakpoint.
fn piece(value: Value, input: bool) -> WirePiece {
    let json = value.to_string();
    // The message's last two bytes close its content list and itself (`…}]}`): a breakpoint
    // goes before the `}` that closes the last part, three bytes from the end.
    let parts = value["content"].as_array().is_some_and(|c| !c.is_empty()) && json.ends_with("}]}");
    let mark_at = parts.then(|| json.len() - 3);
    WirePiece { json, mark_at, input }
}

fn image_part(image: &Image, model: &str, images: bool) -> Value {
    if images {
        json!({"type": "image_url", "image_url": {"url": image.data_url()}})
    } else {
        json!({"type": "text", "text": image_note(image, model)})
    }
}

/// A stored message as wire messages. `parts`: content as lists of parts (so breakpoints can
/// be placed), as endpoints honouring `cache_control` need.
fn wire_form(message: &Message, model: &str, images: bool, parts: bool) -> WireForm {
    let mut form = WireForm::default();
    match message.role {
        Role::User => {
            let pictures: Vec<&Image> = message.images().collect();
            let text = message.text();
            let content = if pictures.is_empty() && !parts {
                Value::String(non_empty(text))
            } else {
                let mut list: Vec<Value> = pictures.iter().map(|i| image_part(i, model, images)).collect();
                if !text.is_empty() || list.is_empty() {
                    list.push(json!({"type": "text", "text": non_empty(text)}));
                }
                Value::Array(list)
            };
            form.pieces.push(piece(json!({"role": "user", "content": content}), true));
        }
        Role::Assistant => {
            let text = message.text();
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|call| {
                    let arguments = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
                    json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
                })
                .collect();
            let mut wire = json!({"role": "assistant"});
            wire["content"] = match (text.is_empty(), calls.is_empty()) {
                (false, _) => Value::String(text),
                (true, false) => Value::Null,
                (true, true) => Value::String(NO_CONTENT.to_string()),
            };
            if !calls.is_empty() {
                wire["tool_calls"] = Value::Array(calls);
            }
            form.pieces.push(piece(wire, false));
        }
        Role::Tool => {
            for block in &message.content {
                if let Block::ToolResult(result) = block {
                    let text = non_empty(result.content.clone());
                    let content = if parts { json!([{"type": "text", "text": text}]) } else { Value::String(text) };
                    form.pieces
                        .push(piece(json!({"role": "tool", "tool_call_id": result.call_id, "content": content}), true));
                }
            }
            let pictures: Vec<&Image> = message.images().collect();
            if !pictures.is_empty() {
                let call = message.tool_result().map(|r| format!("{} call {}", r.name, r.call_id)).unwrap_or_default();
                let mut list = vec![json!({"type": "text", "text": format!("The image(s) the {call} returned:")})];
                list.extend(pictures.iter().map(|i| image_part(i, model, images)));
                form.deferred = Some(piece(json!({"role": "user", "content": list}), true));
            }
        }
    }
    form
}
