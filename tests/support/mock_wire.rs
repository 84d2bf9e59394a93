//! The mock's side of both wires: a turn as SSE frames (Anthropic events or OpenAI chunks), the
//! streamed body that delivers them in split pieces with delays, and the error bodies each API
//! really sends.

use std::time::Duration;

use axum::body::Bytes;
use futures_util::Stream;
use serde_json::{Value, json};

use super::issued::{Issued, sign};
use super::{MockUsage, Turn, Wire};

/// How a streamed body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// All frames, then a clean end.
    Complete,
    /// The frames, then the connection is aborted.
    Abort,
    /// The frames, then five minutes of silence.
    Stall,
    /// The frames, then this frame again every `ms` milliseconds, forever.
    Repeat(&'static str, u64),
}

/// Anthropic's keep-alive event.
pub const ANTHROPIC_PING: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
/// An SSE comment, as OpenRouter and proxies send to keep a connection open.
pub const SSE_COMMENT: &str = ": keep-alive\n\n";
/// More text for the open text block, on each wire.
pub const ANTHROPIC_MORE_TEXT: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"and more \"}}\n\n";
pub const OPENAI_MORE_TEXT: &str = "data: {\"id\":\"chatcmpl-endless\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"and more \"},\"finish_reason\":null}]}\n\n";

/// A turn as SSE frames, each a complete `event:`/`data:` block ending in a blank line. What
/// the client must send back unchanged (thinking signatures, reasoning items) goes to `issued`.
pub fn frames(
    wire: Wire,
    turn: &Turn,
    model: &str,
    usage: MockUsage,
    next_id: &mut dyn FnMut() -> u64,
    issued: &mut Issued,
    request: &Value,
) -> Vec<String> {
    match wire {
        Wire::Anthropic => anthropic_frames(turn, model, usage, next_id, issued),
        Wire::OpenAi => openai_frames(turn, model, usage, next_id),
        Wire::OpenAiResponses => super::responses::frames(turn, model, usage, next_id, issued, request),
    }
}

/// Enough frames to have started the answer, never the end.
pub fn first_half(mut frames: Vec<String>) -> Vec<String> {
    let keep = (frames.len() / 2).max(1);
    frames.truncate(keep);
    frames
}

/// Every frame of a complete turn except its ending (Anthropic `message_delta` and
/// `message_stop`; OpenAI the `finish_reason` chunk and what follows): tool calls whole, and
/// still not a finished response.
pub fn without_ending(wire: Wire, mut frames: Vec<String>) -> Vec<String> {
    let end = match wire {
        Wire::Anthropic => frames.iter().position(|f| f.starts_with("event: message_delta")),
        Wire::OpenAi => frames.iter().position(|f| f.contains("\"finish_reason\":\"")),
        Wire::OpenAiResponses => frames
            .iter()
            .position(|f| f.starts_with("event: response.completed") || f.starts_with("event: response.incomplete")),
    };
    frames.truncate(end.unwrap_or(frames.len()));
    frames
}

/// Pieces of `text` (up to `n`, split on character boundaries), so deltas arrive in parts.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Deltas a turn's text comes in: three unless the script says.
fn text_pieces(turn: &Turn) -> usize {
    if turn.pieces == 0 { 3 } else { turn.pieces }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn stop_reason(turn: &Turn) -> String {
    turn.stop.clone().unwrap_or_else(|| if turn.tool_calls.is_empty() { "end_turn" } else { "tool_use" }.to_string())
}

fn anthropic_frames(
    turn: &Turn,
    model: &str,
    usage: MockUsage,
    next_id: &mut dyn FnMut() -> u64,
    issued: &mut Issued,
) -> Vec<String> {
    let mut out = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{}", next_id()), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1,
                      "cache_read_input_tokens": usage.cache_read_input_tokens,
                      "cache_creation_input_tokens": usage.cache_creation_input_tokens},
        }}),
    )];
    let mut index = 0;
    if let Some(thinking) = &turn.thinking {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for piece in pieces(thinking, 2) {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": piece}}),
            ));
        }
        out.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "signature_delta", "signature": sign(thinking)}}),
        ));
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    if turn.redacted_thinking {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "redacted_thinking", "data": issued.redacted_data()}}),
        ));
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    out.push(event("ping", json!({"type": "ping"})));
    if !turn.text.is_empty() {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in pieces(&turn.text, text_pieces(turn)) {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for call in &turn.tool_calls {
        let id = call.id.clone().unwrap_or_else(|| format!("toolu_mock_{}", next_id()));
        if let Some(thinking) = &turn.thinking {
            issued.thinking_of_call.insert(id.clone(), sign(thinking));
        }
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
        ));
        let mut parts = vec![String::new()];
        parts.extend(pieces(&call.raw_arguments(), 3));
        for part in parts {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
        out.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    out.push(event(
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
        "usage": {"output_tokens": usage.output_tokens}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

fn openai_frames(turn: &Turn, model: &str, usage: MockUsage, next_id: &mut dyn FnMut() -> u64) -> Vec<String> {
    let id = format!("chatcmpl-mock-{}", next_id());
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null});
        format!("data: {data}\n\n")
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    if let Some(thinking) = &turn.thinking {
        for piece in pieces(thinking, 2) {
            out.push(chunk(json!({"reasoning_content": piece}), Value::Null));
        }
    }
    for piece in pieces(&turn.text, text_pieces(turn)) {
        out.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (index, call) in turn.tool_calls.iter().enumerate() {
        let call_id = call.id.clone().unwrap_or_else(|| format!("call_mock_{}", next_id()));
        out.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for part in pieces(&call.raw_arguments(), 3) {
            out.push(chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}), Value::Null));
        }
    }
    let finish = match stop_reason(turn).as_str() {
        "end_turn" | "stop_sequence" => "stop".to_string(),
        "tool_use" => "tool_calls".to_string(),
        "max_tokens" => "length".to_string(),
        "refusal" => "content_filter".to_string(),
        other => other.to_string(),
    };
    out.push(chunk(json!({}), json!(finish)));
    let prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let mut details = json!({"cached_tokens": usage.cache_read_input_tokens});
    if usage.cache_creation_input_tokens > 0 {
        // OpenRouter's name for what an Anthropic model wrote to its cache.
        details["cache_write_tokens"] = json!(usage.cache_creation_input_tokens);
    }
    let data = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
        "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": usage.output_tokens,
            "total_tokens": prompt + usage.output_tokens, "prompt_tokens_details": details}});
    out.push(format!("data: {data}\n\n"));
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// An error event inside an otherwise healthy stream.
pub fn error_event(wire: Wire) -> String {
    match wire {
        Wire::OpenAiResponses => super::responses::error_event(),
        Wire::Anthropic => {
            event("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
        }
        Wire::OpenAi => format!(
            "data: {}\n\n",
            json!({"error": {"message": "The server had an error while processing your request.",
                "type": "server_error", "param": null, "code": null}})
        ),
    }
}

/// The body each API sends with an error status.
pub fn error_body(wire: Wire, code: u16) -> Value {
    let (kind, message) = match code {
        400 => ("invalid_request_error", "Invalid request"),
        401 => ("authentication_error", "invalid x-api-key"),
        403 => ("permission_error", "Your API key does not have permission to use the specified resource."),
        404 => ("not_found_error", "The requested resource could not be found."),
        429 => ("rate_limit_error", "Rate limit exceeded; please slow down."),
        529 => ("overloaded_error", "Overloaded"),
        503 => ("overloaded_error", "The server is overloaded or not ready yet."),
        _ => ("api_error", "Internal server error"),
    };
    match wire {
        Wire::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
        Wire::OpenAi | Wire::OpenAiResponses => {
            let kind = match code {
                400 => "invalid_request_error",
                401 | 403 => "authentication_error",
                429 => "rate_limit_exceeded",
                _ => "server_error",
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        }
    }
}

/// The 400 body each API sends for an invalid request, with `message`.
pub fn refusal_body(wire: Wire, message: &str) -> Value {
    match wire {
        Wire::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
        Wire::OpenAi | Wire::OpenAiResponses => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
    }
}

/// The 400 body each API sends when the prompt does not fit.
pub fn context_length_body(wire: Wire) -> Value {
    match wire {
        Wire::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 208734 tokens > 200000 maximum"}}),
        Wire::OpenAi | Wire::OpenAiResponses => json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in \
                        131072 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
    }
}

#[derive(Clone)]
enum Step {
    Chunk(Bytes),
    Sleep(Duration),
    Abort,
}

/// The frames as a body: each frame in two byte pieces split mid-way (mid-line, possibly
/// mid-character) so clients must reassemble, with `delay` before every frame but the first.
pub fn body_stream(
    frames: Vec<String>,
    delay: Duration,
    ending: Ending,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let mut steps = Vec::new();
    for (i, frame) in frames.into_iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            steps.push(Step::Sleep(delay));
        }
        let bytes = Bytes::from(frame);
        let mid = bytes.len() / 2;
        steps.push(Step::Chunk(bytes.slice(..mid)));
        steps.push(Step::Chunk(bytes.slice(mid..)));
    }
    match ending {
        Ending::Complete => {}
        Ending::Abort => {
            // Let the frames reach the client first, so the break is mid-body, not mid-headers.
            steps.push(Step::Sleep(Duration::from_millis(50)));
            steps.push(Step::Abort);
        }
        Ending::Stall => steps.push(Step::Sleep(Duration::from_secs(300))),
        Ending::Repeat(..) => {}
    }
    let repeat = match ending {
        Ending::Repeat(frame, ms) => Some((Bytes::from_static(frame.as_bytes()), Duration::from_millis(ms))),
        Ending::Complete | Ending::Abort | Ending::Stall => None,
    };
    let steps = steps.into_iter().chain(repeat.into_iter().flat_map(|(frame, every)| {
        std::iter::repeat_n([Step::Sleep(every), Step::Chunk(frame)], usize::MAX).flatten()
    }));
    // Sleeps keep to a schedule (each frame `delay` after the one before it was due), so a
    // late wake-up on a busy machine is caught up rather than slowing the whole stream.
    let due: Option<tokio::time::Instant> = None;
    futures_util::stream::unfold((steps, due), |(mut steps, mut due)| async move {
        loop {
            match steps.next()? {
                Step::Chunk(bytes) => return Some((Ok(bytes), (steps, due))),
                Step::Sleep(d) => {
                    let at = due.unwrap_or_else(tokio::time::Instant::now) + d;
                    due = Some(at);
                    tokio::time::sleep_until(at).await
                }
                Step::Abort => {
                    let error = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "mock dropped the stream");
                    return Some((Err(error), (steps, due)));
                }
            }
        }
    })
}
