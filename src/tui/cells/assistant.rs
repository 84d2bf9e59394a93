//! An answer of the model, rendered as markdown; while it streams it is the only cell whose
//! lines are recomputed. An interrupted answer keeps its text and says so.

use ratatui::text::{Line, Span};

use crate::tui::markdown;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

/// What the agent appends to a partial answer it keeps after an interrupt (agent/turn.rs);
/// shown as a marker instead of as text.
pub use crate::agent::INTERRUPTED_MARK;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssistantCell {
    pub text: String,
    pub streaming: bool,
    pub interrupted: bool,
}

impl AssistantCell {
    pub fn streaming() -> AssistantCell {
        AssistantCell { streaming: true, ..AssistantCell::default() }
    }

    /// A stored answer; the interrupt mark becomes the marker.
    pub fn stored(text: &str) -> AssistantCell {
        let trimmed = text.trim_end();
        match trimmed.strip_suffix(INTERRUPTED_MARK) {
            Some(rest) => AssistantCell { text: rest.trim_end().to_string(), streaming: false, interrupted: true },
            None => AssistantCell { text: trimmed.to_string(), streaming: false, interrupted: false },
        }
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut paras = markdown::render(&self.text, theme);
        if paras.is_empty() && !self.interrupted {
            paras.push(Para::plain(vec![Span::styled("…", theme.dim)]));
        }
        for (i, p) in paras.iter_mut().enumerate() {
            let lead = if i == 0 { Span::styled("● ", theme.assistant_prefix) } else { Span::raw("  ") };
            p.first.insert(0, lead);
            p.rest.insert(0, Span::raw("  "));
        }
        if self.interrupted {
            paras.push(Para::prefixed(
                vec![Span::styled(if self.text.trim().is_empty() { "● " } else { "  " }, theme.interrupted)],
                vec![Span::raw("  ")],
                vec![Span::styled("⏹ interrupted — the partial answer is kept", theme.interrupted)],
            ));
        }
        wrap_paras(&paras, width)
    }
}
