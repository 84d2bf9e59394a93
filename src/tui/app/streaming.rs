//! What streams in for an answer: its text and thinking as they arrive, the message once it is
//! whole (its calls' cells named), and what a retry voids.

use super::{Activity, App};
use crate::conversation::Message;
use crate::conversation::tool_names::TASK;
use crate::tui::cells::{AssistantCell, Cell, SubagentStatus, ThinkingCell, ToolCell, ToolStatus};

impl App {
    pub(super) fn on_delta(&mut self, text: &str) {
        self.turn.activity = Activity::Streaming;
        let i = match self.turn.streaming {
            Some(i) => i,
            None => {
                self.transcript.push(Cell::Assistant(AssistantCell::streaming()));
                let i = self.transcript.len() - 1;
                self.turn.streaming = Some(i);
                i
            }
        };
        self.transcript.update(i, |c| {
            if let Cell::Assistant(a) = c {
                a.text.push_str(text);
            }
        });
    }

    /// Thinking streaming in: one collapsed cell per stretch of thinking.
    pub(super) fn on_thinking(&mut self, text: &str) {
        let last = self.transcript.len().checked_sub(1);
        let open = last.filter(|&i| matches!(self.transcript.get(i), Some(Cell::Thinking(t)) if t.streaming));
        let i = match open {
            Some(i) => i,
            None => {
                self.end_stream();
                self.transcript.push(Cell::Thinking(ThinkingCell::streaming(self.expand_all)));
                self.transcript.len() - 1
            }
        };
        self.transcript.update(i, |c| {
            if let Cell::Thinking(t) = c {
                t.text.push_str(text);
            }
        });
    }

    /// The thinking that was streaming is over.
    pub(super) fn end_thinking(&mut self) {
        let last = self.transcript.len().checked_sub(1);
        if let Some(i) = last.filter(|&i| matches!(self.transcript.get(i), Some(Cell::Thinking(t)) if t.streaming)) {
            self.transcript.update(i, |c| {
                if let Cell::Thinking(t) = c {
                    t.streaming = false;
                }
            });
        }
    }

    /// A stored (or unstreamed) message's thinking, as one collapsed cell.
    pub(super) fn push_thinking(&mut self, message: &Message) {
        if message.thinking().next().is_none() {
            return;
        }
        let text: Vec<&str> = message.thinking().map(|t| t.text.trim()).filter(|t| !t.is_empty()).collect();
        self.transcript.push(Cell::Thinking(ThinkingCell::stored(text.join("\n\n"), self.expand_all)));
    }

    /// A retry voids what the failed attempt streamed: its text and its half-written calls.
    pub(super) fn discard_attempt(&mut self) {
        self.turn.streaming = None;
        let mut i = self.transcript.len();
        while i > self.turn.attempt_from {
            i -= 1;
            let void = match self.transcript.get(i) {
                Some(Cell::Assistant(_) | Cell::Thinking(_)) => true,
                Some(Cell::Tool(t)) => t.status == ToolStatus::Preparing,
                Some(Cell::Subagent(s)) => s.status == SubagentStatus::Preparing,
                Some(Cell::User(_) | Cell::Notice(_) | Cell::Changes(_)) | None => false,
            };
            if void {
                self.transcript.remove(i);
            }
        }
    }

    pub(super) fn on_assistant_message(&mut self, message: &Message) {
        let text = message.text();
        let streamed = (self.turn.attempt_from..self.transcript.len())
            .any(|i| matches!(self.transcript.get(i), Some(Cell::Assistant(_))));
        let thought = (self.turn.attempt_from..self.transcript.len())
            .any(|i| matches!(self.transcript.get(i), Some(Cell::Thinking(_))));
        self.end_thinking();
        self.end_stream();
        if !thought {
            self.push_thinking(message);
        }
        if !streamed && !text.trim().is_empty() {
            // An answer that was not streamed (some local servers send it whole).
            self.transcript.push(Cell::Assistant(AssistantCell::stored(&text)));
        }
        for call in message.tool_calls() {
            if call.name == TASK {
                self.update_subagent(&call.id, |s| s.take_arguments(&call.arguments));
                continue;
            }
            let i = self.tool_cell(&call.id, &call.name);
            let guess = ToolCell::summary_from_arguments(&call.arguments);
            self.transcript.update(i, |c| {
                if let Cell::Tool(t) = c
                    && t.summary.is_empty()
                {
                    t.summary = guess;
                }
            });
        }
        self.turn.attempt_from = self.transcript.len();
        if self.turn.busy {
            self.turn.activity = Activity::Thinking;
        }
    }
}
