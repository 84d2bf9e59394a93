//! Exact token counts from the model's own tokenizer (llama-server's `/tokenize`), kept per
//! message text: what the pipeline counts a message as when its count is known, instead of the
//! rough estimate. Pure data: the caller asks the server and fills it in; a message without a
//! count here is estimated as before.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::conversation::{Block, Message};

/// Counts by message text, and what the chat template adds around each message.
#[derive(Clone, Debug, Default)]
pub struct ExactCounts {
    /// Hash of [`text_of`] → tokens of that text.
    counts: HashMap<u64, u64>,
    /// Tokens the chat template puts around one message (its role header and end marker), as
    /// measured on the server; `None` until measured (no counts are used before).
    framing: Option<u64>,
}

/// The text of `message` as a chat template renders its content: the text, each tool call as
/// `{"name": …, "arguments": …}`, a tool result's output. `None` for a message holding an image
/// (a template does not render it as text) — such a message is estimated.
pub fn text_of(message: &Message) -> Option<String> {
    let mut out = String::new();
    for block in &message.content {
        match block {
            Block::Text { text } => out.push_str(text),
            Block::ToolCall(call) => {
                let name = serde_json::Value::String(call.name.clone());
                out.push_str(&format!("{{\"name\": {name}, \"arguments\": {}}}", call.arguments));
            }
            Block::ToolResult(result) => out.push_str(&result.content),
            // Thinking is not sent back on the wires that reach a local server.
            Block::Thinking(_) => {}
            Block::Image(_) => return None,
        }
    }
    Some(out)
}

fn key(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl ExactCounts {
    /// Counting is on once the template's framing is known.
    pub fn set_framing(&mut self, tokens: u64) {
        self.framing = Some(tokens);
    }

    pub fn is_on(&self) -> bool {
        self.framing.is_some()
    }

    /// The counted tokens of `text`'s content.
    pub fn content_tokens(&self, text: &str) -> Option<u64> {
        self.counts.get(&key(text)).copied()
    }

    /// Whether `text` still needs counting.
    pub fn needs(&self, text: &str) -> bool {
        self.is_on() && !self.counts.contains_key(&key(text))
    }

    pub fn insert(&mut self, text: &str, tokens: u64) {
        self.counts.insert(key(text), tokens);
    }

    /// Tokens `message` takes in a request (content and framing), when counted.
    pub fn tokens(&self, message: &Message) -> Option<u64> {
        let framing = self.framing?;
        let text = text_of(message)?;
        Some(self.content_tokens(&text)? + framing)
    }

    /// Content tokens of `message`, when counted.
    pub fn content_of(&self, message: &Message) -> Option<u64> {
        self.framing?;
        self.content_tokens(&text_of(message)?)
    }

    /// Tokens the template puts around each message.
    pub fn framing(&self) -> u64 {
        self.framing.unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ToolCall, ToolResult};

    #[test]
    fn a_counted_message_takes_its_count_and_the_framing_and_others_stay_estimated() {
        let mut exact = ExactCounts::default();
        let hello = Message::user("hello there");
        assert!(!exact.needs("hello there") && exact.tokens(&hello).is_none(), "off until the framing is known");
        exact.set_framing(5);
        assert!(exact.needs("hello there"));
        exact.insert("hello there", 2);
        assert_eq!(exact.tokens(&hello), Some(7));
        assert_eq!(exact.content_of(&hello), Some(2));
        assert_eq!(exact.tokens(&Message::user("something else")), None);
    }

    #[test]
    fn tool_calls_render_as_the_templates_json_and_results_as_their_output() {
        let mut m = Message::assistant("reading");
        m.content.push(Block::ToolCall(ToolCall::new("c1", "file_read", r#"{"path":"a.rs"}"#)));
        assert_eq!(text_of(&m).unwrap(), r#"reading{"name": "file_read", "arguments": {"path":"a.rs"}}"#);
        let r = Message::tool(ToolResult::ok("c1", "file_read", "fn main() {}"));
        assert_eq!(text_of(&r).unwrap(), "fn main() {}");
    }
}
