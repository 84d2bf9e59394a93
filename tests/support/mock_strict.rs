//! What the real APIs answer with a 400: checked on every request, and a request that fails
//! any of these gets the API's error instead of a turn (and the problem is recorded).
//!
//! Anthropic: thinking blocks whose signature does not match their text, redacted data never
//! issued, thinking outside assistant turns or carrying `cache_control`, a tool loop whose last
//! assistant turn does not open with thinking while thinking is on, thinking of the current
//! tool loop left out, bad budgets, more than four breakpoints, and images that are not what
//! they say or too large. The Responses API: reasoning items without (or with unknown)
//! encrypted content under `store: false`, function calls sent without the reasoning that led
//! to them, outputs without calls and calls without outputs, bad images. Chat completions:
//! more than four breakpoints, bad images.

use std::collections::BTreeSet;

use base64::Engine;
use serde_json::Value;

use super::Wire;
use super::issued::{Issued, verifies};

/// Anthropic refuses a request with more than four `cache_control` markers.
const MAX_BREAKPOINTS: usize = 4;
/// Anthropic's limit on one image, measured on its base64 text.
const ANTHROPIC_MAX_IMAGE_BASE64: usize = 5 * 1024 * 1024;
/// Anthropic refuses images with an edge above this.
const ANTHROPIC_MAX_EDGE: u32 = 8_000;
/// OpenAI's limit on one image.
const OPENAI_MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;
const MIN_BUDGET: u64 = 1_024;
const INTERLEAVED_BETA: &str = "interleaved-thinking-2025-05-14";

pub fn check(
    wire: Wire,
    headers: &std::collections::BTreeMap<String, String>,
    body: &Value,
    issued: &Issued,
    honours_cache_control: bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    if body.is_null() {
        return errors;
    }
    let markers = super::validate::count_key(body, "cache_control");
    let breakpoints_count = match wire {
        Wire::Anthropic => true,
        Wire::OpenAi => honours_cache_control,
        Wire::OpenAiResponses => false,
    };
    if breakpoints_count && markers > MAX_BREAKPOINTS {
        errors.push(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {markers}."
        ));
    }
    match wire {
        Wire::Anthropic => anthropic(headers, body, issued, &mut errors),
        Wire::OpenAi => chat_images(body, &mut errors),
        Wire::OpenAiResponses => responses(body, issued, &mut errors),
    }
    if wire != Wire::Anthropic && !body["tool_choice"].is_null() {
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            errors.push(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.".into(),
            );
        }
        if body["tool_choice"].is_string()
            && !["none", "auto", "required"].contains(&body["tool_choice"].as_str().unwrap_or(""))
        {
            errors.push(format!("Invalid value for 'tool_choice': {}", body["tool_choice"]));
        }
    }
    errors
}

fn blocks(message: &Value) -> Vec<Value> {
    message["content"].as_array().cloned().unwrap_or_default()
}

fn anthropic(
    headers: &std::collections::BTreeMap<String, String>,
    body: &Value,
    issued: &Issued,
    errors: &mut Vec<String>,
) {
    let thinking = &body["thinking"];
    let enabled = thinking["type"] == "enabled";
    let interleaved = headers.get("anthropic-beta").is_some_and(|b| b.split(',').any(|p| p.trim() == INTERLEAVED_BETA));
    if enabled {
        let budget = thinking["budget_tokens"].as_u64().unwrap_or(0);
        let max_tokens = body["max_tokens"].as_u64().unwrap_or(0);
        if budget < MIN_BUDGET {
            errors
                .push(format!("thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_BUDGET}"));
        }
        if budget >= max_tokens && !interleaved {
            errors.push("`max_tokens` must be greater than `thinking.budget_tokens`".to_string());
        }
    }
    if thinking["type"] == "adaptive" {
        let effort = body["output_config"]["effort"].as_str();
        if effort.is_some_and(|e| !["low", "medium", "high", "max"].contains(&e)) {
            errors.push(format!("output_config.effort: {effort:?} is not one of low, medium, high, max"));
        }
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let tool_blocks = messages.iter().flat_map(blocks).any(|b| b["type"] == "tool_use" || b["type"] == "tool_result");
    if tool_blocks && !has_tools {
        errors.push("Requests which include `tool_use` or `tool_result` blocks must define tools.".to_string());
    }
    let choice = &body["tool_choice"];
    if !choice.is_null() {
        match choice["type"].as_str() {
            Some("auto" | "any" | "none") => {}
            Some("tool") if choice["name"].as_str().is_some_and(|n| !n.is_empty()) => {}
            _ => errors.push(format!("tool_choice: {choice} is not one of auto, any, tool (with a name), none")),
        }
        if !has_tools {
            errors.push("tool_choice may only be specified while providing tools.".to_string());
        }
    }
    for (i, message) in messages.iter().enumerate() {
        for (j, block) in blocks(message).iter().enumerate() {
            let kind = block["type"].as_str().unwrap_or("");
            if kind == "thinking" || kind == "redacted_thinking" {
                if message["role"] != "assistant" {
                    errors.push(format!(
                        "messages.{i}.content.{j}: thinking blocks may only appear in assistant messages"
                    ));
                }
                if block.get("cache_control").is_some() {
                    errors
                        .push(format!("messages.{i}.content.{j}.{kind}.cache_control: Extra inputs are not permitted"));
                }
            }
            if kind == "thinking"
                && !verifies(block["thinking"].as_str().unwrap_or(""), block["signature"].as_str().unwrap_or(""))
            {
                errors.push(format!("messages.{i}.content.{j}: Invalid `signature` in `thinking` block"));
            }
            if kind == "redacted_thinking" && !issued.redacted.contains(block["data"].as_str().unwrap_or("")) {
                errors.push(format!("messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"));
            }
            for image in std::iter::once(block).chain(block["content"].as_array().into_iter().flatten()) {
                if image["type"] == "image" {
                    anthropic_image(&format!("messages.{i}.content.{j}"), image, errors);
                }
            }
        }
    }
    // The current turn: every assistant message after the last prompt (a user message with
    // more than tool results).
    let prompt = messages
        .iter()
        .rposition(|m| m["role"] == "user" && blocks(m).iter().any(|b| b["type"] != "tool_result"))
        .or_else(|| messages.iter().rposition(|m| m["role"] == "user" && !m["content"].is_array()))
        .unwrap_or(0);
    let in_loop = messages.last().is_some_and(|m| {
        m["role"] == "user" && !blocks(m).is_empty() && blocks(m).iter().all(|b| b["type"] == "tool_result")
    });
    if enabled && in_loop && messages.len() >= 2 {
        let last_assistant = messages.len() - 2;
        let first = blocks(&messages[last_assistant]).first().map(|b| b["type"].as_str().unwrap_or("").to_string());
        if !matches!(first.as_deref(), Some("thinking" | "redacted_thinking")) {
            errors.push(format!(
                "messages.{last_assistant}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. \
                 When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
                first.unwrap_or_default()
            ));
        }
    }
    let thinks = thinking.is_object() && thinking["type"] != "disabled";
    for (i, message) in messages.iter().enumerate().skip(prompt) {
        if !thinks || message["role"] != "assistant" {
            continue;
        }
        let content = blocks(message);
        let signatures: BTreeSet<&str> = content.iter().filter_map(|b| b["signature"].as_str()).collect();
        for block in content.iter().filter(|b| b["type"] == "tool_use") {
            let id = block["id"].as_str().unwrap_or("");
            if let Some(signature) = issued.thinking_of_call.get(id)
                && !signatures.contains(signature.as_str())
            {
                errors.push(format!(
                    "messages.{i}: the thinking block that preceded tool_use {id} must be passed back unchanged \
                     within the current tool use loop"
                ));
            }
        }
    }
}

fn anthropic_image(at: &str, block: &Value, errors: &mut Vec<String>) {
    let source = &block["source"];
    if source["type"] != "base64" {
        errors.push(format!("{at}.image.source: only base64 sources are expected from cairn"));
        return;
    }
    let media_type = source["media_type"].as_str().unwrap_or("");
    let data = source["data"].as_str().unwrap_or("");
    if data.len() > ANTHROPIC_MAX_IMAGE_BASE64 {
        errors.push(format!(
            "{at}.image.source.base64: image exceeds 5 MB maximum: {} bytes > {ANTHROPIC_MAX_IMAGE_BASE64} bytes",
            data.len()
        ));
        return;
    }
    match image_facts(data) {
        Err(e) => errors.push(format!("{at}.image.source.base64: {e}")),
        Ok((actual, w, h)) => {
            if actual != media_type {
                errors.push(format!(
                    "{at}.image.source.base64: The image was specified using the {media_type} media type, but the image appears to be a {actual} image"
                ));
            }
            if w > ANTHROPIC_MAX_EDGE || h > ANTHROPIC_MAX_EDGE {
                errors.push(format!("{at}.image.source.base64: image dimensions exceed max allowed size: 8000 pixels"));
            }
        }
    }
}

/// The media type and size an encoded image really has.
pub fn image_facts(data: &str) -> Result<(String, u32, u32), String> {
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| format!("invalid base64 data: {e}"))?;
    let format = image::guess_format(&bytes).map_err(|_| "The image is not a supported format".to_string())?;
    let media_type = match format {
        image::ImageFormat::Png => "image/png",
        image::ImageFormat::Jpeg => "image/jpeg",
        image::ImageFormat::Gif => "image/gif",
        image::ImageFormat::WebP => "image/webp",
        _ => return Err("The image is not a supported format".to_string()),
    };
    let (w, h) = image::ImageReader::with_format(std::io::Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(|e| format!("Could not process image: {e}"))?;
    Ok((media_type.to_string(), w, h))
}

/// `data:image/png;base64,…` as OpenAI takes it.
fn openai_image(at: &str, url: &str, errors: &mut Vec<String>) {
    let Some(rest) = url.strip_prefix("data:") else {
        errors.push(format!("{at}: cairn sends images inline as data URLs, not {url:.40}"));
        return;
    };
    let Some((media_type, data)) = rest.split_once(";base64,") else {
        errors.push(format!("{at}: Invalid image URL: expected data:<type>;base64,<data>"));
        return;
    };
    if data.len() / 4 * 3 > OPENAI_MAX_IMAGE_BYTES {
        errors.push(format!("{at}: Image too large: over {OPENAI_MAX_IMAGE_BYTES} bytes"));
        return;
    }
    match image_facts(data) {
        Err(e) => errors.push(format!("{at}: Invalid image: {e}")),
        Ok((actual, _, _)) if actual != media_type => {
            errors.push(format!("{at}: Invalid image: declared {media_type} but it is {actual}"))
        }
        Ok(_) => {}
    }
}

fn chat_images(body: &Value, errors: &mut Vec<String>) {
    for (i, message) in body["messages"].as_array().into_iter().flatten().enumerate() {
        for (j, part) in message["content"].as_array().into_iter().flatten().enumerate() {
            if part["type"] == "image_url" {
                if message["role"] != "user" {
                    errors.push(format!("messages[{i}].content[{j}]: image_url is only supported in user messages"));
                }
                openai_image(
                    &format!("messages[{i}].content[{j}]"),
                    part["image_url"]["url"].as_str().unwrap_or(""),
                    errors,
                );
            }
        }
    }
}

fn responses(body: &Value, issued: &Issued, errors: &mut Vec<String>) {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let stored = body["store"].as_bool().unwrap_or(true);
    // Reasoning items seen in the current stretch of model output (since the last input item).
    let mut segment: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    let mut outputs: BTreeSet<String> = BTreeSet::new();
    for (i, item) in input.iter().enumerate() {
        match item["type"].as_str().unwrap_or("message") {
            "reasoning" => {
                let encrypted = item["encrypted_content"].as_str();
                match encrypted {
                    None if !stored => errors.push(format!(
                        "input[{i}]: Item with id '{}' not found. Items are not persisted when `store` is set to false. \
                         Try again with `store` set to true, or pass the item's encrypted content",
                        item["id"].as_str().unwrap_or("rs_?")
                    )),
                    None => {}
                    Some(enc) if !issued.reasoning.contains_key(enc) => {
                        errors.push(format!("input[{i}]: The encrypted content could not be verified."))
                    }
                    Some(enc) => segment.push(enc.to_string()),
                }
                if !item["summary"].is_array() {
                    errors.push(format!("input[{i}].summary: Missing required parameter"));
                }
            }
            "function_call" => {
                let id = item["call_id"].as_str().unwrap_or("").to_string();
                if let Some(needed) = issued.reasoning_of_call.get(&id)
                    && !segment.contains(needed)
                {
                    let rs = issued.reasoning.get(needed).cloned().unwrap_or_default();
                    errors.push(format!(
                        "input[{i}]: Item '{id}' of type 'function_call' was provided without its required 'reasoning' item: '{rs}'."
                    ));
                }
                calls.push(id);
            }
            "function_call_output" => {
                segment.clear();
                let id = item["call_id"].as_str().unwrap_or("").to_string();
                if !calls.contains(&id) {
                    errors.push(format!("input[{i}]: No tool call found for function call output with call_id {id}."));
                }
                outputs.insert(id);
                responses_images(&format!("input[{i}].output"), &item["output"], errors);
            }
            "message" => {
                if item["role"] == "user" {
                    segment.clear();
                }
                responses_images(&format!("input[{i}].content"), &item["content"], errors);
            }
            other => errors.push(format!("input[{i}]: Invalid value: '{other}'")),
        }
    }
    for id in calls.iter().filter(|id| !outputs.contains(*id)) {
        errors.push(format!("No tool output found for function call {id}."));
    }
}

fn responses_images(at: &str, parts: &Value, errors: &mut Vec<String>) {
    for (j, part) in parts.as_array().into_iter().flatten().enumerate() {
        if part["type"] == "input_image" {
            openai_image(&format!("{at}[{j}]"), part["image_url"].as_str().unwrap_or(""), errors);
        }
    }
}
