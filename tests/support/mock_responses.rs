//! The mock's side of the OpenAI Responses API: a turn as the event stream OpenAI sends
//! (`response.created` … `response.completed`), with a reasoning item when the turn thinks
//! (its encrypted content only when the request asked for it with `include`), a message for
//! the text and a `function_call` item per call.

use serde_json::{Value, json};

use super::issued::Issued;
use super::{MockUsage, Turn};

fn event(name: &str, mut data: Value, sequence: &mut u64) -> String {
    data["type"] = json!(name);
    data["sequence_number"] = json!(*sequence);
    *sequence += 1;
    format!("event: {name}\ndata: {data}\n\n")
}

/// Pieces of `text` (up to `n`), split on character boundaries.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

pub fn frames(
    turn: &Turn,
    model: &str,
    usage: MockUsage,
    next_id: &mut dyn FnMut() -> u64,
    issued: &mut Issued,
    request: &Value,
) -> Vec<String> {
    let mut seq = 0;
    let id = format!("resp_mock_{}", next_id());
    let mut out = Vec::new();
    let shell = json!({"id": id, "object": "response", "created_at": 1_700_000_000, "status": "in_progress",
        "model": model, "output": []});
    out.push(event("response.created", json!({"response": shell}), &mut seq));
    out.push(event("response.in_progress", json!({"response": shell}), &mut seq));
    let include_encrypted =
        request["include"].as_array().is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    let mut output: Vec<Value> = Vec::new();
    let mut reasoning_enc: Option<String> = None;
    if let Some(thinking) = &turn.thinking {
        let index = output.len();
        let (rs, encrypted) = issued.reasoning_item(thinking);
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": rs, "type": "reasoning", "summary": []}}),
            &mut seq,
        ));
        out.push(event(
            "response.reasoning_summary_part.added",
            json!({"item_id": rs, "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            &mut seq,
        ));
        for piece in pieces(thinking, 2) {
            out.push(event(
                "response.reasoning_summary_text.delta",
                json!({"item_id": rs, "output_index": index, "summary_index": 0, "delta": piece}),
                &mut seq,
            ));
        }
        out.push(event(
            "response.reasoning_summary_text.done",
            json!({"item_id": rs, "output_index": index, "summary_index": 0, "text": thinking}),
            &mut seq,
        ));
        let mut item = json!({"id": rs, "type": "reasoning", "summary": [{"type": "summary_text", "text": thinking}]});
        if include_encrypted {
            item["encrypted_content"] = json!(encrypted);
            reasoning_enc = Some(encrypted);
        }
        out.push(event("response.output_item.done", json!({"output_index": index, "item": item}), &mut seq));
        output.push(item);
    }
    if !turn.text.is_empty() {
        let index = output.len();
        let msg = format!("msg_mock_{}", next_id());
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": msg, "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}}),
            &mut seq,
        ));
        out.push(event(
            "response.content_part.added",
            json!({"item_id": msg, "output_index": index, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}}),
            &mut seq,
        ));
        for piece in pieces(&turn.text, 3) {
            out.push(event(
                "response.output_text.delta",
                json!({"item_id": msg, "output_index": index, "content_index": 0, "delta": piece}),
                &mut seq,
            ));
        }
        out.push(event(
            "response.output_text.done",
            json!({"item_id": msg, "output_index": index, "content_index": 0, "text": turn.text}),
            &mut seq,
        ));
        let part = json!({"type": "output_text", "text": turn.text, "annotations": []});
        out.push(event(
            "response.content_part.done",
            json!({"item_id": msg, "output_index": index, "content_index": 0, "part": part}),
            &mut seq,
        ));
        let item = json!({"id": msg, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
        out.push(event("response.output_item.done", json!({"output_index": index, "item": item}), &mut seq));
        output.push(item);
    }
    for call in &turn.tool_calls {
        let index = output.len();
        let fc = format!("fc_mock_{}", next_id());
        let call_id = call.id.clone().unwrap_or_else(|| format!("call_mock_{}", next_id()));
        if let Some(enc) = &reasoning_enc {
            issued.reasoning_of_call.insert(call_id.clone(), enc.clone());
        }
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": fc, "type": "function_call", "status": "in_progress",
                "call_id": call_id, "name": call.name, "arguments": ""}}),
            &mut seq,
        ));
        let arguments = call.raw_arguments();
        for piece in pieces(&arguments, 3) {
            out.push(event(
                "response.function_call_arguments.delta",
                json!({"item_id": fc, "output_index": index, "delta": piece}),
                &mut seq,
            ));
        }
        out.push(event(
            "response.function_call_arguments.done",
            json!({"item_id": fc, "output_index": index, "arguments": arguments}),
            &mut seq,
        ));
        let item = json!({"id": fc, "type": "function_call", "status": "completed", "call_id": call_id,
            "name": call.name, "arguments": arguments});
        out.push(event("response.output_item.done", json!({"output_index": index, "item": item}), &mut seq));
        output.push(item);
    }
    let input_total = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let usage = json!({"input_tokens": input_total, "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
        "output_tokens": usage.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_total + usage.output_tokens});
    let (name, status, details) = match turn.stop.as_deref() {
        Some("max_tokens") => ("response.incomplete", "incomplete", json!({"reason": "max_output_tokens"})),
        _ => ("response.completed", "completed", Value::Null),
    };
    out.push(event(
        name,
        json!({"response": {"id": id, "object": "response", "created_at": 1_700_000_000, "status": status,
            "incomplete_details": details, "model": model, "output": output, "usage": usage}}),
        &mut seq,
    ));
    out
}

/// More text for the open message, forever (EndlessText).
pub const MORE_TEXT: &str = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"and more \"}\n\n";

/// A failure inside an otherwise healthy stream.
pub fn error_event() -> String {
    format!(
        "event: error\ndata: {}\n\n",
        json!({"type": "error", "code": "server_error", "param": null,
            "message": "The server had an error while processing your request."})
    )
}
