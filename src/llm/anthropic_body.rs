//! The body of an Anthropic Messages request: role alternation (tool results travel in user
//! messages, neighbours of one role merge), cache breakpoints (the system prompt's, then a
//! rolling window over the newest messages), and `(no content)` where a message would be empty.
//!
//! Written straight to bytes from pieces serialised once per message ([`WireCache`]): only the
//! system prompt, the tools and the few messages carrying a breakpoint are written anew.

use std::sync::Arc;

use serde_json::{Value, json};

use super::ChatRequest;
use super::wire_cache::WireCache;
use crate::config::CacheTtl;
use crate::conversation::SystemBlock;
use crate::conversation::{Block, Message, Role};

/// Anthropic refuses a request with more than four `cache_control` markers.
const MAX_BREAKPOINTS: usize = 4;
/// System breakpoints honoured: end of the static prompt and end of the frozen memory block.
const MAX_SYSTEM_BREAKPOINTS: usize = 2;
/// Stands in for a message that would otherwise be empty, which the API rejects.
const NO_CONTENT_BLOCK: &str = r#"{"type":"text","text":"(no content)"}"#;

/// One stored message on the wire: its role there and its content blocks, each as JSON text.
#[derive(Debug)]
pub(crate) struct WireMessage {
    role: &'static str,
    blocks: Vec<WireBlock>,
}

#[derive(Debug)]
struct WireBlock {
    /// Tool results go first in a user message.
    tool_result: bool,
    json: String,
}

pub(crate) type BodyCache = WireCache<Arc<WireMessage>>;

/// The JSON body of a streamed Messages request, as a value (for tests and inspection).
#[cfg(test)]
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    // Valid by construction: every piece is serialised JSON.
    serde_json::from_slice(&encode(request, &mut BodyCache::default(), Vec::new())).unwrap_or(Value::Null)
}

/// The body of a streamed Messages request, written into `buf` (emptied first), reusing what
/// `cache` holds of its messages.
pub(crate) fn encode(request: &ChatRequest, cache: &mut BodyCache, buf: Vec<u8>) -> Vec<u8> {
    let marker = request.cache.map(cache_control);
    let (system, system_marks) = system_blocks(&request.system, marker.as_ref());
    cache.begin();
    // Neighbours of one role merge into one wire message.
    let mut groups: Vec<Vec<Arc<WireMessage>>> = Vec::new();
    for message in &request.messages {
        let wire = cache.get(message, wire_message);
        match groups.last_mut() {
            Some(group) if group[0].role == wire.role => group.push(wire),
            _ => groups.push(vec![wire]),
        }
    }
    cache.end();
    // The rolling window: the newest messages get whatever the system prompt left over.
    let marked_from = match &marker {
        Some(_) => groups.len().saturating_sub(MAX_BREAKPOINTS - system_marks),
        None => groups.len(),
    };
    let marker = marker.map(|m| format!(",\"cache_control\":{m}"));
    let system = (!system.is_empty()).then(|| Value::Array(system).to_string());
    let tools = (!request.tools.is_empty()).then(|| {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        Value::Array(tools).to_string()
    });
    let size: usize = groups.iter().flatten().flat_map(|m| &m.blocks).map(|b| b.json.len() + 1).sum::<usize>()
        + groups.len() * (40 + marker.as_ref().map_or(0, String::len))
        + system.as_ref().map_or(0, String::len)
        + tools.as_ref().map_or(0, String::len)
        + request.model.len()
        + 128;
    let mut buf = buf;
    buf.clear();
    // Empty, so valid UTF-8.
    let mut out = String::from_utf8(buf).unwrap_or_default();
    out.reserve(size);
    out.push_str("{\"model\":");
    out.push_str(&json_string(&request.model));
    out.push_str(&format!(",\"max_tokens\":{},\"stream\":true,\"messages\":[", request.max_tokens));
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"role\":\"");
        out.push_str(group[0].role);
        out.push_str("\",\"content\":[");
        // Tool results first, each kind in its own order.
        let blocks = group.iter().flat_map(|m| &m.blocks);
        let count = blocks.clone().count();
        let ordered = blocks.clone().filter(|b| b.tool_result).chain(blocks.filter(|b| !b.tool_result));
        let ordered: Box<dyn Iterator<Item = &str>> = if count == 0 {
            Box::new(std::iter::once(NO_CONTENT_BLOCK))
        } else {
            Box::new(ordered.map(|b| b.json.as_str()))
        };
        let last = count.max(1) - 1;
        for (j, block) in ordered.enumerate() {
            if j > 0 {
                out.push(',');
            }
            match (&marker, i >= marked_from && j == last) {
                // Every block is a JSON object: the marker goes in before its closing brace.
                (Some(marker), true) => {
                    out.push_str(&block[..block.len() - 1]);
                    out.push_str(marker);
                    out.push('}');
                }
                _ => out.push_str(block),
            }
        }
        out.push_str("]}");
    }
    out.push(']');
    if let Some(system) = &system {
        out.push_str(",\"system\":");
        out.push_str(system);
    }
    if let Some(tools) = &tools {
        out.push_str(",\"tools\":");
        out.push_str(tools);
    }
    out.push('}');
    out.into_bytes()
}

fn json_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The system prompt as text blocks, with at most [`MAX_SYSTEM_BREAKPOINTS`] markers (the
/// first ones: the most stable prefixes). Returns the blocks and the markers placed.
fn system_blocks(system: &[SystemBlock], marker: Option<&Value>) -> (Vec<Value>, usize) {
    let mut blocks: Vec<(String, bool)> = Vec::new();
    for block in system {
        if !block.text.is_empty() {
            blocks.push((block.text.clone(), block.cache_breakpoint));
        } else if let Some(previous) = blocks.last_mut() {
            // An empty block cannot be sent, but the prefix it ends still can be cached.
            previous.1 |= block.cache_breakpoint;
        }
    }
    let mut marks = 0;
    let out = blocks
        .into_iter()
        .map(|(text, breakpoint)| {
            let mut value = json!({"type": "text", "text": text});
            if let Some(marker) = marker.filter(|_| breakpoint && marks < MAX_SYSTEM_BREAKPOINTS) {
                value["cache_control"] = marker.clone();
                marks += 1;
            }
            value
        })
        .collect();
    (out, marks)
}

/// A stored message as a wire message of its own (merging comes later).
fn wire_message(message: &Message) -> Arc<WireMessage> {
    let role = match message.role {
        Role::User | Role::Tool => "user",
        Role::Assistant => "assistant",
    };
    let blocks = message
        .content
        .iter()
        .filter_map(|block| {
            let value = wire_block(block)?;
            Some(WireBlock { tool_result: value["type"] == "tool_result", json: value.to_string() })
        })
        .collect();
    Arc::new(WireMessage { role, blocks })
}

fn wire_block(block: &Block) -> Option<Value> {
    match block {
        Block::Text { text } if text.is_empty() => None,
        Block::Text { text } => Some(json!({"type": "text", "text": text})),
        Block::ToolCall(call) => {
            // Arguments that do not parse were already reported to the model as an error result;
            // the call itself must still be sent with an object so its result has a partner.
            let input = call.parsed_arguments().unwrap_or_else(|_| json!({}));
            Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
        }
        Block::ToolResult(result) => {
            let mut value = json!({"type": "tool_result", "tool_use_id": result.call_id});
            // `content` is optional; an empty string would be an empty text block.
            if !result.content.is_empty() {
                value["content"] = Value::String(result.content.clone());
            }
            if result.is_error {
                value["is_error"] = Value::Bool(true);
            }
            Some(value)
        }
    }
}
