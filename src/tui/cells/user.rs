//! A prompt the user sent: a tinted band with a `›` marker, so turns are easy to find when
//! scrolling back.

use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCell {
    pub text: String,
}

impl UserCell {
    pub fn new(text: impl Into<String>) -> UserCell {
        UserCell { text: text.into() }
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let fill = theme.user_text;
        let paras: Vec<Para> = self
            .text
            .trim_end()
            .split('\n')
            .enumerate()
            .map(|(i, line)| Para {
                first: vec![if i == 0 {
                    Span::styled("› ", theme.user_prefix.patch(fill))
                } else {
                    Span::styled("  ", fill)
                }],
                rest: vec![Span::styled("  ", fill)],
                spans: vec![Span::styled(line.to_string(), fill)],
                fill: Some(fill),
                hard: false,
            })
            .collect();
        wrap_paras(&paras, width)
    }
}
