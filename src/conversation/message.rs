use serde::{Deserialize, Serialize};

use super::content::{Image, Thinking};

/// Who said a message. System text is not a message: it travels separately in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// Carries exactly one [`ToolResult`] answering a call of the preceding assistant message.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// A call the model asked for. `arguments` is the raw JSON text the model produced: it may not
/// parse, and that must reach the model as an error result rather than be lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    /// The arguments as a JSON object, or the parse error to report to the model.
    pub fn parsed_arguments(&self) -> Result<serde_json::Value, String> {
        parse_arguments(&self.arguments)
    }
}

/// A call's arguments (JSON text, as the model sent them) as a JSON object, or the parse error
/// to report to the model.
pub(super) fn parse_arguments(text: &str) -> Result<serde_json::Value, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("arguments must be a JSON object, got {}", json_kind(&other))),
        Err(e) => Err(format!("arguments are not valid JSON ({e})")),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The answer to one [`ToolCall`], as sent to the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    /// The called tool's name, kept here so stages can reason about a result on its own.
    pub name: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Exit code of a process-running tool (bash), for placeholders and display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl ToolResult {
    pub fn ok(call_id: impl Into<String>, name: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
            exit_code: None,
        }
    }

    pub fn error(call_id: impl Into<String>, name: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResult { is_error: true, ..ToolResult::ok(call_id, name, content) }
    }
}

/// One piece of a message's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    ToolCall(ToolCall),
    ToolResult(ToolResult),
    /// The model's thinking, in an assistant message, before what it belongs to.
    Thinking(Thinking),
    /// An image: attached to a user message, or read by a tool (after its result).
    Image(Image),
}

/// An image counts as the characters its tokens would be at this rate: a little above the
/// estimator's default of 3.2, so the rough estimate of an image errs high.
pub const IMAGE_CHARS_PER_TOKEN: usize = 4;

/// A message as stored and as sent. Invariants (checked by the request invariant, not by the
/// type): user messages hold text and images; assistant messages hold thinking, text and tool
/// calls; tool messages hold exactly one tool result, then any images it returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message { role: Role::User, content: vec![Block::Text { text: text.into() }] }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        let text = text.into();
        let content = if text.is_empty() { Vec::new() } else { vec![Block::Text { text }] };
        Message { role: Role::Assistant, content }
    }

    pub fn tool(result: ToolResult) -> Self {
        Message { role: Role::Tool, content: vec![Block::ToolResult(result)] }
    }

    /// All text blocks joined with blank lines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Block::Text { text } = block {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(text);
            }
        }
        out
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolCall(call) => Some(call),
            Block::Text { .. } | Block::ToolResult(_) | Block::Thinking(_) | Block::Image(_) => None,
        })
    }

    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls().next().is_some()
    }

    pub fn tool_result(&self) -> Option<&ToolResult> {
        self.content.iter().find_map(|b| match b {
            Block::ToolResult(result) => Some(result),
            Block::Text { .. } | Block::ToolCall(_) | Block::Thinking(_) | Block::Image(_) => None,
        })
    }

    /// The thinking blocks, in order.
    pub fn thinking(&self) -> impl Iterator<Item = &Thinking> {
        self.content.iter().filter_map(|b| match b {
            Block::Thinking(thinking) => Some(thinking),
            Block::Text { .. } | Block::ToolCall(_) | Block::ToolResult(_) | Block::Image(_) => None,
        })
    }

    /// The images, in order.
    pub fn images(&self) -> impl Iterator<Item = &Image> {
        self.content.iter().filter_map(|b| match b {
            Block::Image(image) => Some(image),
            Block::Text { .. } | Block::ToolCall(_) | Block::ToolResult(_) | Block::Thinking(_) => None,
        })
    }

    /// The same message without thinking: what a wire that cannot take it back is sent, and
    /// what the pipeline may send of turns before the last prompt.
    pub fn without_thinking(&self) -> Message {
        let content = self.content.iter().filter(|b| !matches!(b, Block::Thinking(_))).cloned().collect();
        Message { role: self.role, content }
    }

    /// Characters of content, the unit of the rough token estimate. Thinking counts by its
    /// text (signatures are not tokens the model reads); an image by its token cost
    /// ([`IMAGE_CHARS_PER_TOKEN`]), not by the length of its base64.
    pub fn char_len(&self) -> usize {
        self.content
            .iter()
            .map(|b| match b {
                Block::Text { text } => text.len(),
                Block::ToolCall(c) => c.name.len() + c.arguments.len() + c.id.len(),
                Block::ToolResult(r) => r.content.len() + r.call_id.len(),
                Block::Thinking(t) => t.text.len(),
                Block::Image(i) => i.tokens() as usize * IMAGE_CHARS_PER_TOKEN,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparsable_arguments_report_why() {
        let call = ToolCall::new("c1", "file_read", "{\"path\": ");
        let err = call.parsed_arguments().unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
        let call = ToolCall::new("c1", "file_read", "[1]");
        assert!(call.parsed_arguments().unwrap_err().contains("an array"));
        let call = ToolCall::new("c1", "glob", "");
        assert!(call.parsed_arguments().unwrap().is_object());
    }

    #[test]
    fn blocks_round_trip_through_json() {
        let msg = Message {
            role: Role::Assistant,
            content: vec![
                Block::Text { text: "hi".into() },
                Block::ToolCall(ToolCall::new("c1", "bash", r#"{"command":"ls"}"#)),
            ],
        };
        let json = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<Message>(&json).unwrap(), msg);
    }

    fn thinking() -> Thinking {
        Thinking {
            source: super::super::ThinkingSource::Anthropic,
            model: "claude-sonnet-5".into(),
            text: "Let me look.".into(),
            signature: "c2ln".into(),
            redacted: false,
            id: None,
            summary: Vec::new(),
        }
    }

    #[test]
    fn thinking_and_images_round_trip_and_old_rows_still_load() {
        let image = Image {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
            width: 300,
            height: 200,
            source: "shot.png".into(),
        };
        let msg = Message {
            role: Role::Assistant,
            content: vec![Block::Thinking(thinking()), Block::Text { text: "hi".into() }, Block::Image(image)],
        };
        let json = serde_json::to_string(&msg.content).unwrap();
        assert!(json.contains(r#"{"type":"thinking","source":"anthropic""#), "{json}");
        assert_eq!(serde_json::from_str::<Vec<Block>>(&json).unwrap(), msg.content);
        // A row written before these blocks existed.
        let old = r#"[{"type":"text","text":"hi"},{"type":"tool_call","id":"c1","name":"bash","arguments":"{}"}]"#;
        assert_eq!(serde_json::from_str::<Vec<Block>>(old).unwrap().len(), 2);
    }

    #[test]
    fn thinking_counts_by_its_text_and_images_by_their_tokens() {
        let mut msg = Message::assistant("abcd");
        msg.content.insert(0, Block::Thinking(thinking()));
        assert_eq!(msg.char_len(), 4 + "Let me look.".len());
        assert_eq!(msg.without_thinking(), Message::assistant("abcd"));
        let image = Image {
            media_type: "image/png".into(),
            data: "x".repeat(100_000),
            width: 750,
            height: 100,
            source: String::new(),
        };
        let user = Message { role: Role::User, content: vec![Block::Image(image)] };
        assert_eq!(user.char_len(), 100 * IMAGE_CHARS_PER_TOKEN, "the base64 is not what the model reads");
    }
}
