//! Reading recorded sessions (TRAJECTORY.md JSONL): one message a line. Unknown fields are
//! ignored, foreign tool names kept as they are, lines that do not parse counted and skipped,
//! lines a conversation rewind took out (`"rewound": true`) counted and skipped, and a tool
//! result whose call is missing (an orphan) kept as plain context.

use serde::Deserialize;

use crate::conversation::{Block, Message, Role, ToolCall, ToolResult};

#[derive(Debug, Default)]
pub struct Trajectory {
    /// The recorded system prompt, if the file has one.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub skipped_lines: usize,
    pub orphans: usize,
    /// Messages a conversation rewind took out of what the session sends.
    pub rewound: usize,
}

#[derive(Deserialize)]
struct Line {
    role: String,
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    tool_calls: Vec<LineCall>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    rewound: bool,
}

#[derive(Deserialize)]
struct LineCall {
    id: String,
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

/// Content is text; a list of text parts (as some exporters write) is joined.
fn content_text(v: Option<serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s,
        Some(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

pub fn parse_trajectory(text: &str) -> Trajectory {
    let mut t = Trajectory::default();
    // Calls of the latest assistant message not yet answered.
    let mut open_calls: Vec<String> = Vec::new();
    for raw in text.lines() {
        if raw.trim().is_empty() {
            continue;
        }
        let Ok(line) = serde_json::from_str::<Line>(raw) else {
            t.skipped_lines += 1;
            continue;
        };
        if line.rewound {
            t.rewound += 1;
            continue;
        }
        let content = content_text(line.content);
        match line.role.as_str() {
            "system" => match &mut t.system {
                Some(s) => {
                    s.push_str("\n\n");
                    s.push_str(&content);
                }
                None => t.system = Some(content),
            },
            "user" => {
                open_calls.clear();
                t.messages.push(Message::user(content));
            }
            "assistant" => {
                let mut m = Message::assistant(content);
                open_calls.clear();
                for call in line.tool_calls {
                    let arguments = match call.arguments {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Null => "{}".to_string(),
                        other => other.to_string(),
                    };
                    open_calls.push(call.id.clone());
                    m.content.push(Block::ToolCall(ToolCall::new(call.id, call.name, arguments)));
                }
                t.messages.push(m);
            }
            "tool" => {
                let id = line.tool_call_id.unwrap_or_default();
                let name = line.name.unwrap_or_else(|| "tool".into());
                match open_calls.iter().position(|c| *c == id) {
                    Some(pos) => {
                        open_calls.remove(pos);
                        let result = ToolResult { is_error: line.is_error, ..ToolResult::ok(id, name, content) };
                        t.messages.push(Message::tool(result));
                    }
                    None => {
                        t.orphans += 1;
                        t.messages.push(Message {
                            role: Role::User,
                            content: vec![Block::Text {
                                text: format!("[output of an earlier `{name}` call]\n{content}"),
                            }],
                        });
                    }
                }
            }
            _ => t.skipped_lines += 1,
        }
    }
    t
}

/// One message as a TRAJECTORY.md line. `full_output` replaces a tool result's sent content
/// when the full output is known (exports write what the tool produced).
pub fn trajectory_line(message: &Message, full_output: Option<&str>, timestamp: Option<&str>) -> serde_json::Value {
    let mut line = match message.role {
        Role::User => serde_json::json!({"role": "user", "content": message.text()}),
        Role::Assistant => {
            let calls: Vec<serde_json::Value> = message
                .tool_calls()
                .map(|c| {
                    let arguments = c
                        .parsed_arguments()
                        .unwrap_or_else(|_| serde_json::json!({ "_unparsed_arguments": c.arguments }));
                    serde_json::json!({"id": c.id, "name": c.name, "arguments": arguments})
                })
                .collect();
            let mut v = serde_json::json!({"role": "assistant", "content": message.text()});
            if !calls.is_empty() {
                v["tool_calls"] = serde_json::Value::Array(calls);
            }
            v
        }
        Role::Tool => match message.tool_result() {
            Some(r) => {
                let mut v = serde_json::json!({
                    "role": "tool", "tool_call_id": r.call_id, "name": r.name,
                    "content": full_output.unwrap_or(&r.content),
                });
                if r.is_error {
                    v["is_error"] = serde_json::Value::Bool(true);
                }
                v
            }
            None => serde_json::json!({"role": "tool", "content": ""}),
        },
    };
    add_thinking_and_images(&mut line, message);
    if let Some(ts) = timestamp {
        line["timestamp"] = serde_json::Value::String(ts.to_string());
    }
    line
}

/// Fields beyond the format's (readers ignore unknown fields): the model's visible thinking as
/// `"thinking"` text, and each image as `{media_type, width, height, source}` under
/// `"images"` — described, not embedded, so an export stays readable.
fn add_thinking_and_images(line: &mut serde_json::Value, message: &Message) {
    let thinking: Vec<&str> = message.thinking().map(|t| t.text.as_str()).filter(|t| !t.is_empty()).collect();
    if !thinking.is_empty() {
        line["thinking"] = serde_json::Value::String(thinking.join("\n\n"));
    }
    let images: Vec<serde_json::Value> = message
        .images()
        .map(|i| {
            serde_json::json!({"media_type": i.media_type, "width": i.width, "height": i.height, "source": i.source})
        })
        .collect();
    if !images.is_empty() {
        line["images"] = serde_json::Value::Array(images);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_format_tolerating_unknown_fields_broken_lines_and_orphans() {
        let text = r#"{"role": "system", "content": "You are helpful."}
{"role": "user", "content": "Fix it", "timestamp": "2026-11-22T10:00:00Z", "extra": 1}
{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "str_replace_editor", "arguments": {"path": "a"}}]}
{"role": "tool", "tool_call_id": "c1", "name": "str_replace_editor", "content": "done", "source_tool": "x"}
this line is not JSON
{"role": "tool", "tool_call_id": "zz", "name": "bash", "content": "stray"}
{"role": "assistant", "content": "Fixed."}
"#;
        let t = parse_trajectory(text);
        assert_eq!(t.system.as_deref(), Some("You are helpful."));
        assert_eq!((t.skipped_lines, t.orphans), (1, 1));
        assert_eq!(t.messages.len(), 5);
        assert_eq!(t.messages[1].tool_calls().next().unwrap().name, "str_replace_editor");
        assert_eq!(t.messages[2].tool_result().unwrap().content, "done");
        assert_eq!(t.messages[3].role, Role::User, "the orphan is plain context");
        assert!(crate::context::check_request(&t.messages).is_ok());
    }

    #[test]
    fn lines_a_rewind_took_out_are_skipped_as_resume_skips_them() {
        let text = r#"{"role": "user", "content": "first"}
{"role": "assistant", "content": "one"}
{"role": "user", "content": "second", "rewound": true}
{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "arguments": {}}], "rewound": true}
{"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "ok", "rewound": true}
{"role": "user", "content": "second, again"}
"#;
        let t = parse_trajectory(text);
        assert_eq!(t.rewound, 3);
        let texts: Vec<String> = t.messages.iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["first", "one", "second, again"]);
    }
}
