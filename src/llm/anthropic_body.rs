//! The body of an Anthropic Messages request: role alternation (tool results travel in user
//! messages, neighbours of one role merge), cache breakpoints (the system prompt's, then a
//! rolling window over the newest messages, never on a thinking block), `(no content)` where a
//! message would be empty, thinking sent back as it came (only to the model that thought it),
//! images (inside tool results too, or as a note for a model without vision), the thinking
//! parameters, and the request's tail as the very last block, after every marker.
//!
//! Written straight to bytes from pieces serialised once per message ([`WireCache`]): only the
//! system prompt, the tools and the few messages carrying a breakpoint are written anew.

use std::sync::Arc;

use serde_json::{Value, json};

use super::wire_cache::{WireCache, body_start};
use super::{ChatRequest, Reasoning, ToolChoice};
use crate::config::CacheTtl;
use crate::conversation::SystemBlock;
use crate::conversation::{Block, Image, Message, Role, Thinking, ThinkingSource};

/// Anthropic refuses a request with more than four `cache_control` markers.
const MAX_BREAKPOINTS: usize = 4;
/// System breakpoints honoured: end of the static prompt and end of the frozen memory block.
const MAX_SYSTEM_BREAKPOINTS: usize = 2;
/// Stands in for a message that would otherwise be empty, which the API rejects.
const NO_CONTENT_BLOCK: &str = r#"{"type":"text","text":"(no content)"}"#;
/// The beta that lets Claude 4 models think between tool calls.
pub(crate) const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// One stored message on the wire: its role there and its content blocks, each as JSON text.
#[derive(Debug)]
pub(crate) struct WireMessage {
    role: &'static str,
    blocks: Vec<WireBlock>,
}

#[derive(Debug)]
struct WireBlock {
    kind: BlockKind,
    json: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    /// Goes first in a user message.
    ToolResult,
    /// Never carries a breakpoint; must open an assistant turn of a tool loop.
    Thinking,
    Other,
}

pub(crate) type BodyCache = WireCache<Arc<WireMessage>>;

/// A request body and what its headers must say about it.
pub(crate) struct Encoded {
    pub body: Vec<u8>,
    /// Thinking was asked for interleaved with tool calls: the beta header must be sent.
    pub interleaved: bool,
}

/// The JSON body of a streamed Messages request, as a value (for tests and inspection).
#[cfg(test)]
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    // Valid by construction: every piece is serialised JSON.
    serde_json::from_slice(&encode(request, &mut BodyCache::default(), Vec::new()).body).unwrap_or(Value::Null)
}

/// The body of a streamed Messages request, written into `buf` (emptied first), reusing what
/// `cache` holds of its messages.
pub(crate) fn encode(request: &ChatRequest, cache: &mut BodyCache, buf: Vec<u8>) -> Encoded {
    let marker = request.cache.map(cache_control);
    let (system, system_marks) = system_blocks(&request.system, marker.as_ref());
    // A message's wire form depends on the model (whose thinking it may carry) and on whether
    // the model sees images.
    cache.begin_with(&format!("{}\u{1}{}", request.model, request.images));
    // Neighbours of one role merge into one wire message.
    let mut groups: Vec<Vec<Arc<WireMessage>>> = Vec::new();
    for message in &request.messages {
        let wire = cache.get(message, |m| wire_message(m, &request.model, request.images));
        match groups.last_mut() {
            Some(group) if group[0].role == wire.role => group.push(wire),
            _ => groups.push(vec![wire]),
        }
    }
    cache.end();
    let (thinking, interleaved) = thinking_params(request.reasoning, &groups);
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
    // After every marker: it changes from request to request without moving a cached prefix.
    let tail = request
        .tail
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .map(|t| json!({"type": "text", "text": t}).to_string());
    let size: usize = tail.as_ref().map_or(0, String::len)
        + groups.iter().flatten().flat_map(|m| &m.blocks).map(|b| b.json.len() + 1).sum::<usize>()
        + groups.len() * (40 + marker.as_ref().map_or(0, String::len))
        + system.as_ref().map_or(0, String::len)
        + tools.as_ref().map_or(0, String::len)
        + request.model.len()
        + 256;
    let mut out = body_start(buf, size, &request.model);
    out.push_str(&format!(",\"max_tokens\":{}", request.max_tokens));
    if let Some(thinking) = &thinking {
        out.push_str(thinking);
    }
    out.push_str(",\"stream\":true,\"messages\":[");
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"role\":\"");
        out.push_str(group[0].role);
        out.push_str("\",\"content\":[");
        // Tool results first, each kind in its own order.
        let blocks = group.iter().flat_map(|m| &m.blocks);
        let ordered: Vec<&WireBlock> = blocks
            .clone()
            .filter(|b| b.kind == BlockKind::ToolResult)
            .chain(blocks.filter(|b| b.kind != BlockKind::ToolResult))
            .collect();
        if ordered.is_empty() {
            match (&marker, i >= marked_from) {
                (Some(marker), true) => push_marked(&mut out, NO_CONTENT_BLOCK, marker),
                _ => out.push_str(NO_CONTENT_BLOCK),
            }
        }
        // The breakpoint goes on the last block that may carry one: never a thinking block.
        let markable = ordered.iter().rposition(|b| b.kind != BlockKind::Thinking);
        for (j, block) in ordered.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            match (&marker, i >= marked_from && Some(j) == markable) {
                (Some(marker), true) => push_marked(&mut out, &block.json, marker),
                _ => out.push_str(&block.json),
            }
        }
        if i + 1 == groups.len()
            && group[0].role == "user"
            && let Some(tail) = &tail
        {
            out.push(',');
            out.push_str(tail);
        }
        out.push_str("]}");
    }
    // A history ending with the model's turn gets the tail as a user turn of its own.
    if let Some(tail) = &tail
        && groups.last().is_none_or(|g| g[0].role != "user")
    {
        if !groups.is_empty() {
            out.push(',');
        }
        out.push_str("{\"role\":\"user\",\"content\":[");
        out.push_str(tail);
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
        if request.tool_choice == ToolChoice::None {
            out.push_str(",\"tool_choice\":{\"type\":\"none\"}");
        }
    }
    out.push('}');
    Encoded { body: out.into_bytes(), interleaved }
}

/// Every block is a JSON object: the marker goes in before its closing brace.
fn push_marked(out: &mut String, block: &str, marker: &str) {
    out.push_str(&block[..block.len() - 1]);
    out.push_str(marker);
    out.push('}');
}

fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The `thinking` (and `output_config`) members of the body, each with its leading comma, and
/// whether thinking is interleaved with tool calls.
fn thinking_params(reasoning: Option<Reasoning>, groups: &[Vec<Arc<WireMessage>>]) -> (Option<String>, bool) {
    match reasoning {
        None | Some(Reasoning::Default) => (None, false),
        Some(Reasoning::Off) => (Some(r#","thinking":{"type":"disabled"}"#.to_string()), false),
        Some(Reasoning::Budget { tokens, interleaved }) => {
            if tool_loop_without_thinking(groups) {
                // The API refuses a tool loop whose last assistant turn does not open with
                // thinking (thinking was off, or came from another model, when it began):
                // this request goes without, the next prompt thinks again.
                tracing::debug!("the tool loop began without thinking; this request does not ask for it");
                return (None, false);
            }
            (Some(format!(r#","thinking":{{"type":"enabled","budget_tokens":{tokens}}}"#)), interleaved)
        }
        Some(Reasoning::Adaptive(effort) | Reasoning::Effort(effort)) => (
            Some(format!(
                r#","thinking":{{"type":"adaptive","display":"summarized"}},"output_config":{{"effort":"{}"}}"#,
                effort.as_str()
            )),
            false,
        ),
    }
}

/// Whether the request continues a tool loop (it ends in tool results) whose last assistant
/// turn does not start with a thinking block.
fn tool_loop_without_thinking(groups: &[Vec<Arc<WireMessage>>]) -> bool {
    let [.., assistant, last] = groups else { return false };
    let results_only = last.iter().flat_map(|m| &m.blocks).all(|b| b.kind == BlockKind::ToolResult)
        && last.iter().any(|m| !m.blocks.is_empty());
    let first = assistant.iter().flat_map(|m| &m.blocks).next();
    assistant[0].role == "assistant" && results_only && first.is_none_or(|b| b.kind != BlockKind::Thinking)
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

/// A stored message as a wire message of its own (merging comes later), for a request to
/// `model` (which takes images or not).
fn wire_message(message: &Message, model: &str, images: bool) -> Arc<WireMessage> {
    let role = match message.role {
        Role::User | Role::Tool => "user",
        Role::Assistant => "assistant",
    };
    let blocks = match message.role {
        // A tool's images travel inside its result.
        Role::Tool => match message.tool_result() {
            Some(result) => {
                let pictures: Vec<&Image> = message.images().collect();
                let mut value = json!({"type": "tool_result", "tool_use_id": result.call_id});
                match (pictures.is_empty(), result.content.is_empty()) {
                    // `content` is optional; an empty string would be an empty text block.
                    (true, true) => {}
                    (true, false) => value["content"] = Value::String(result.content.clone()),
                    (false, _) => {
                        let mut parts = Vec::new();
                        if !result.content.is_empty() {
                            parts.push(json!({"type": "text", "text": result.content}));
                        }
                        parts.extend(pictures.iter().map(|i| image_block(i, model, images)));
                        value["content"] = Value::Array(parts);
                    }
                }
                if result.is_error {
                    value["is_error"] = Value::Bool(true);
                }
                vec![WireBlock { kind: BlockKind::ToolResult, json: value.to_string() }]
            }
            None => Vec::new(),
        },
        Role::User | Role::Assistant => message
            .content
            .iter()
            .filter_map(|block| {
                let value = wire_block(block, model, images)?;
                let kind = match value["type"].as_str() {
                    Some("tool_result") => BlockKind::ToolResult,
                    Some("thinking" | "redacted_thinking") => BlockKind::Thinking,
                    _ => BlockKind::Other,
                };
                Some(WireBlock { kind, json: value.to_string() })
            })
            .collect(),
    };
    Arc::new(WireMessage { role, blocks })
}

fn wire_block(block: &Block, model: &str, images: bool) -> Option<Value> {
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
            if !result.content.is_empty() {
                value["content"] = Value::String(result.content.clone());
            }
            if result.is_error {
                value["is_error"] = Value::Bool(true);
            }
            Some(value)
        }
        Block::Thinking(thinking) => thinking_block(thinking, model),
        Block::Image(image) => Some(image_block(image, model, images)),
    }
}

/// Thinking goes back exactly as it came, and only to the model that thought it: another
/// model refuses the signature. Without a signature it cannot go back at all.
fn thinking_block(thinking: &Thinking, model: &str) -> Option<Value> {
    let ours = thinking.source == ThinkingSource::Anthropic && thinking.model == model;
    match (ours && !thinking.signature.is_empty(), thinking.redacted) {
        (false, _) => None,
        (true, true) => Some(json!({"type": "redacted_thinking", "data": thinking.signature})),
        (true, false) => Some(json!({"type": "thinking", "thinking": thinking.text, "signature": thinking.signature})),
    }
}

fn image_block(image: &Image, model: &str, images: bool) -> Value {
    if images {
        json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}})
    } else {
        json!({"type": "text", "text": image_note(image, model)})
    }
}

/// What a model without vision is told instead of an image.
pub(crate) fn image_note(image: &Image, model: &str) -> String {
    format!("[image {} not shown: {model} does not take image input]", image.describe())
}
