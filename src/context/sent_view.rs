//! What the next request carries, asked of the pipeline once per request (as Codex asks its
//! history `for_prompt`): the messages in order, and the figures read from the same state —
//! their rough tokens, the request's, and the calibrated estimate every display and the
//! calibration read. Nothing here decides anything; the pre-flight has already run.

use std::sync::Arc;

use super::pipeline::Pipeline;
use crate::conversation::Message;

/// The messages of the next request and what they weigh.
#[derive(Clone, Debug)]
pub struct SentView {
    /// The messages to send, in order; always a valid sequence.
    pub messages: Vec<Arc<Message>>,
    /// Rough tokens of the messages standing in for what was compacted or trimmed away (the
    /// first message sent again, the continuation message).
    pub carried_tokens: u64,
    /// Rough tokens of the messages shown as they were stored (or as a stage rewrote them).
    pub visible_tokens: u64,
    /// Rough tokens of the whole request: the overhead given plus the two above.
    pub raw_tokens: u64,
    /// The calibrated estimate of the request: the last reported usage plus what changed since.
    pub estimate: u64,
}

impl Pipeline {
    /// The next request's messages and figures, for a system prompt and tools of `overhead`
    /// tokens in a window of `window`.
    pub fn for_request(&mut self, overhead: u64, window: u64) -> SentView {
        let messages = self.view(window);
        let (carried_tokens, visible_tokens) = self.parts(window);
        let raw_tokens = overhead + carried_tokens + visible_tokens;
        SentView {
            messages,
            carried_tokens,
            visible_tokens,
            raw_tokens,
            estimate: self.calibrated_estimate(raw_tokens),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ContextConfig;
    use crate::conversation::{ToolCall, ToolResult};

    /// A session of a few reads, one of them large, with a reported usage to calibrate on.
    fn session() -> Pipeline {
        let mut p = Pipeline::new(ContextConfig::default());
        p.append(1, Message::user("read the three files"));
        for (i, size) in [(0, 40), (1, 4_000), (2, 400)] {
            let mut call = Message::assistant("");
            call.content.push(crate::conversation::Block::ToolCall(ToolCall::new(
                format!("c{i}"),
                "file_read",
                format!(r#"{{"path": "f{i}.txt"}}"#),
            )));
            p.append(2 + 2 * i, call);
            p.append(3 + 2 * i, Message::tool(ToolResult::ok(format!("c{i}"), "file_read", "x ".repeat(size))));
        }
        p.report_usage(2_500, 2_000);
        p
    }

    #[test]
    fn one_call_gives_the_view_and_the_figures_the_separate_calls_give() {
        let (overhead, window) = (1_234, 32_000);
        let mut p = session();
        let sent = p.for_request(overhead, window);
        assert_eq!(sent.messages, p.view(window));
        assert_eq!((sent.carried_tokens, sent.visible_tokens), p.parts(window));
        assert_eq!(sent.raw_tokens, p.raw_tokens(overhead, window));
        assert_eq!(sent.estimate, p.estimate(overhead, window));
        assert_ne!(sent.estimate, sent.raw_tokens, "calibrated on the reported usage");
    }
}
