//! An answer of the model, rendered as markdown; while it streams it is the only cell whose
//! lines are recomputed. An interrupted answer keeps its text and says so.

use std::sync::Arc;

use ratatui::text::{Line, Span};

use crate::conversation::{Block, Message};
use crate::tui::markdown;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

/// What the agent appends to a partial answer it keeps after an interrupt (agent/turn.rs);
/// shown as a marker instead of as text.
use crate::agent::INTERRUPTED_MARK;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssistantCell {
    pub text: AnswerText,
    pub streaming: bool,
    pub interrupted: bool,
}

/// An answer's text: owned while it streams, or shared with the agent's stored message (a long
/// resumed session would otherwise hold every answer twice).
#[derive(Clone, Debug)]
pub enum AnswerText {
    Owned(String),
    /// The message's only text block, up to `len` bytes (the interrupt mark cut off).
    Shared {
        message: Arc<Message>,
        len: usize,
    },
}

/// Equal when they read the same.
impl PartialEq for AnswerText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for AnswerText {}

impl Default for AnswerText {
    fn default() -> Self {
        AnswerText::Owned(String::new())
    }
}

impl AnswerText {
    pub fn as_str(&self) -> &str {
        match self {
            AnswerText::Owned(text) => text,
            AnswerText::Shared { message, len } => match message.content.first() {
                Some(Block::Text { text }) => &text[..*len],
                // `shared` only builds this for a message whose first block is its text.
                Some(Block::ToolCall(_) | Block::ToolResult(_) | Block::Thinking(_) | Block::Image(_)) | None => "",
            },
        }
    }

    /// Append streamed text (a shared text becomes owned first).
    pub fn push_str(&mut self, more: &str) {
        if let AnswerText::Shared { .. } = self {
            *self = AnswerText::Owned(self.as_str().to_string());
        }
        if let AnswerText::Owned(text) = self {
            text.push_str(more);
        }
    }
}

/// `text` without a trailing interrupt mark, and whether it had one.
fn without_mark(text: &str) -> (&str, bool) {
    let trimmed = text.trim_end();
    match trimmed.strip_suffix(INTERRUPTED_MARK) {
        Some(rest) => (rest.trim_end(), true),
        None => (trimmed, false),
    }
}

impl AssistantCell {
    pub fn streaming() -> AssistantCell {
        AssistantCell { streaming: true, ..AssistantCell::default() }
    }

    /// A stored answer; the interrupt mark becomes the marker.
    pub fn stored(text: &str) -> AssistantCell {
        let (kept, interrupted) = without_mark(text);
        AssistantCell { text: AnswerText::Owned(kept.to_string()), streaming: false, interrupted }
    }

    /// A stored answer sharing the agent's message, when its text is one block.
    pub fn shared(message: Arc<Message>) -> AssistantCell {
        let texts = message.content.iter().filter(|b| matches!(b, Block::Text { .. })).count();
        match message.content.first() {
            Some(Block::Text { text }) if texts == 1 => {
                let (kept, interrupted) = without_mark(text);
                let len = kept.len();
                AssistantCell { text: AnswerText::Shared { message, len }, streaming: false, interrupted }
            }
            Some(_) | None => AssistantCell::stored(&message.text()),
        }
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        answer_lines(self.text.as_str(), self.interrupted, width, theme)
    }

    /// The rows of the first `bytes` bytes of the answer alone: while it streams, what the
    /// scrollback may take of it once they are the first rows of the whole.
    pub fn prefix_lines(&self, bytes: usize, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let text = self.text.as_str();
        // As `Cell::lines` does: no cell is laid out narrower than 8 columns.
        answer_lines(text.get(..bytes).unwrap_or(text), false, width.max(8), theme)
    }
}

fn answer_lines(text: &str, interrupted: bool, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut paras = markdown::render(text, theme);
    if paras.is_empty() && !interrupted {
        paras.push(Para::plain(vec![Span::styled("…", theme.dim)]));
    }
    for (i, p) in paras.iter_mut().enumerate() {
        let lead = if i == 0 { Span::styled("● ", theme.assistant_prefix) } else { Span::raw("  ") };
        p.first.insert(0, lead);
        p.rest.insert(0, Span::raw("  "));
    }
    if interrupted {
        paras.push(Para::prefixed(
            vec![Span::styled(if text.trim().is_empty() { "● " } else { "  " }, theme.interrupted)],
            vec![Span::raw("  ")],
            vec![Span::styled("⏹ interrupted — the partial answer is kept", theme.interrupted)],
        ));
    }
    wrap_paras(&paras, width)
}
