//! The model's thinking: one quiet line, `✻ thinking…`, that expands (Ctrl+O, or a click) to
//! the text the model showed of it. Redacted thinking has nothing to show and says so.

use ratatui::text::{Line, Span};

use crate::tui::keys::{Action, GlobalAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThinkingCell {
    pub text: String,
    pub streaming: bool,
    pub expanded: bool,
}

impl ThinkingCell {
    pub fn streaming(expanded: bool) -> ThinkingCell {
        ThinkingCell { text: String::new(), streaming: true, expanded }
    }

    pub fn stored(text: impl Into<String>, expanded: bool) -> ThinkingCell {
        ThinkingCell { text: text.into(), streaming: false, expanded }
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let words = self.text.split_whitespace().count();
        let label = if self.streaming { "thinking…" } else { "thought" };
        let mut head = vec![Span::styled("✻ ", theme.dim), Span::styled(label.to_string(), theme.dim)];
        let body = self.text.trim();
        if !self.expanded || body.is_empty() {
            let detail = match (words, self.streaming) {
                (0, true) => String::new(),
                (0, false) => " (not shown by the model)".to_string(),
                (n, _) => {
                    let toggle = crate::tui::keys::hint(Action::Global(GlobalAction::ToggleToolOutput));
                    format!(" ({n} word{}) · {toggle} to expand", if n == 1 { "" } else { "s" })
                }
            };
            head.push(Span::styled(detail, theme.faint));
            return wrap_paras(&[Para::plain(head)], width);
        }
        let mut paras = vec![Para::plain(head)];
        paras.extend(body.split('\n').map(|line| {
            Para::prefixed(
                vec![Span::raw("  ")],
                vec![Span::raw("  ")],
                vec![Span::styled(line.to_string(), theme.dim)],
            )
        }));
        wrap_paras(&paras, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cell: &ThinkingCell, width: u16) -> Vec<String> {
        cell.lines(width, &Theme::fallback(true))
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect()
    }

    #[test]
    fn thinking_is_one_line_until_expanded() {
        let mut cell = ThinkingCell::stored("First I read the test.\nThen the fixture.", false);
        let collapsed = text(&cell, 80);
        assert_eq!(collapsed.len(), 1);
        assert!(collapsed[0].starts_with("✻ thought (8 words) · "), "{collapsed:?}");
        assert!(collapsed[0].ends_with("to expand"), "{collapsed:?}");
        cell.expanded = true;
        assert_eq!(text(&cell, 80), ["✻ thought", "  First I read the test.", "  Then the fixture."]);
        assert_eq!(text(&ThinkingCell::streaming(false), 80), ["✻ thinking…"]);
        assert_eq!(text(&ThinkingCell::stored("", true), 80), ["✻ thought (not shown by the model)"]);
    }
}
