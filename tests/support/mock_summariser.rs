//! A deterministic summariser behind the mock, for benchmarks that price a replay with its
//! summaries written over HTTP (`cargo run --example mock_llm -- --summarise`,
//! `SUMMARIES=http benches/context-costs.sh`) and for tests: every request is answered as
//! `cairn context replay --summaries scripted` answers it — a reply exactly as long as the
//! request asks for ("at most about N tokens", else `max_tokens`, at four characters a token),
//! with the trailing sections its instruction asks for, built from what it was sent. A
//! conversation read in place is read back from the wire into messages (the instruction is its
//! last text, after every breakpoint); a transcript request is one message of its own. The
//! mock reports usage from its prompt cache, as the API does.

use std::collections::HashMap;
use std::sync::Arc;

use cairn::context::{ScriptedSummarizer, USAGE_CHARS_PER_TOKEN};
use cairn::conversation::{Block, Message, Role, ToolCall, ToolResult};
use serde_json::Value;

use super::{RecordedRequest, Reply, Turn, Wire};

/// The reply to `req`; `None` for a request with no message.
pub fn reply(req: &RecordedRequest) -> Option<Reply> {
    let scripted = ScriptedSummarizer { window: u64::MAX, chars_per_token: USAGE_CHARS_PER_TOKEN };
    let max_tokens = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| req.body[*k].as_u64())
        .unwrap_or(4_096)
        .min(u32::MAX as u64) as u32;
    let mut messages = messages(req);
    let last = messages.pop()?;
    let text = if messages.is_empty() {
        // A request of its own: the transcript and the instruction in one message.
        scripted.reply(&last.text(), max_tokens)
    } else {
        scripted.reply_in_place(&messages, &last.text(), max_tokens)
    };
    Some(Reply::Turn(Turn::text(text)))
}

/// The request's messages as cairn held them (system prompt aside): each wire block a message
/// of its own where the wire merged neighbours, thinking left out.
pub fn messages(req: &RecordedRequest) -> Vec<Arc<Message>> {
    let mut out = Messages::default();
    match req.wire {
        Wire::Anthropic => {
            for m in req.messages() {
                let blocks = match &m["content"] {
                    Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
                    Value::Array(blocks) => blocks.clone(),
                    _ => Vec::new(),
                };
                if m["role"] == "assistant" {
                    let text = texts(&blocks, "text");
                    let calls = blocks
                        .iter()
                        .filter(|b| b["type"] == "tool_use")
                        .map(|b| (str_of(&b["id"]), str_of(&b["name"]), b["input"].to_string()));
                    out.assistant(text, calls.collect());
                    continue;
                }
                for b in &blocks {
                    match b["type"].as_str() {
                        Some("tool_result") => {
                            let content = match &b["content"] {
                                Value::Array(parts) => texts(parts, "text"),
                                other => other.as_str().unwrap_or_default().to_string(),
                            };
                            out.result(str_of(&b["tool_use_id"]), content, b["is_error"] == true);
                        }
                        Some("text") => out.user(str_of(&b["text"])),
                        _ => {}
                    }
                }
            }
        }
        Wire::OpenAi => {
            for m in req.messages() {
                let content = match &m["content"] {
                    Value::Array(parts) => texts(parts, "text"),
                    other => other.as_str().unwrap_or_default().to_string(),
                };
                match m["role"].as_str() {
                    Some("user") => out.user(content),
                    Some("assistant") => {
                        let calls = m["tool_calls"].as_array().into_iter().flatten().map(|c| {
                            (str_of(&c["id"]), str_of(&c["function"]["name"]), str_of(&c["function"]["arguments"]))
                        });
                        out.assistant(content, calls.collect());
                    }
                    Some("tool") => out.result(str_of(&m["tool_call_id"]), content, false),
                    _ => {}
                }
            }
        }
        Wire::OpenAiResponses => {
            for item in req.messages() {
                match item["type"].as_str().unwrap_or("message") {
                    "message" => {
                        let parts = item["content"].as_array().cloned().unwrap_or_default();
                        let text = texts(&parts, "input_text") + &texts(&parts, "output_text");
                        match item["role"].as_str() {
                            Some("assistant") => out.assistant(text, Vec::new()),
                            _ => out.user(text),
                        }
                    }
                    "function_call" => {
                        out.call(str_of(&item["call_id"]), str_of(&item["name"]), str_of(&item["arguments"]))
                    }
                    "function_call_output" => {
                        let output = match &item["output"] {
                            Value::Array(parts) => texts(parts, "input_text"),
                            other => other.as_str().unwrap_or_default().to_string(),
                        };
                        out.result(str_of(&item["call_id"]), output, false);
                    }
                    _ => {}
                }
            }
        }
    }
    out.list
}

#[derive(Default)]
struct Messages {
    list: Vec<Arc<Message>>,
    /// The tool each call id named, for its result.
    names: HashMap<String, String>,
}

impl Messages {
    fn user(&mut self, text: String) {
        self.list.push(Arc::new(Message::user(text)));
    }

    fn assistant(&mut self, text: String, calls: Vec<(String, String, String)>) {
        let mut m = Message::assistant(text);
        for (id, name, arguments) in calls {
            self.names.insert(id.clone(), name.clone());
            m.content.push(Block::ToolCall(ToolCall::new(id, name, arguments)));
        }
        self.list.push(Arc::new(m));
    }

    /// A call of its own item (Responses): it joins the assistant message before it.
    fn call(&mut self, id: String, name: String, arguments: String) {
        self.names.insert(id.clone(), name.clone());
        let call = Block::ToolCall(ToolCall::new(id, name, arguments));
        match self.list.last_mut().map(Arc::make_mut) {
            Some(m) if m.role == Role::Assistant => m.content.push(call),
            _ => self.list.push(Arc::new(Message { role: Role::Assistant, content: vec![call] })),
        }
    }

    fn result(&mut self, call_id: String, content: String, is_error: bool) {
        let name = self.names.get(&call_id).cloned().unwrap_or_default();
        self.list.push(Arc::new(Message::tool(ToolResult { call_id, name, content, is_error, exit_code: None })));
    }
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The text of the blocks of type `kind`, joined as cairn joins a message's text blocks.
fn texts(blocks: &[Value], kind: &str) -> String {
    blocks.iter().filter(|b| b["type"] == kind).filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n\n")
}
