//! A prompt the user sent: a tinted band with a `›` marker, so turns are easy to find when
//! scrolling back.

use ratatui::text::{Line, Span};

use crate::agent::Attachment;
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCell {
    pub text: String,
    /// What the prompt's `@path` mentions attached (or could not).
    pub attachments: Vec<Attachment>,
}

impl UserCell {
    pub fn new(text: impl Into<String>) -> UserCell {
        UserCell { text: text.into(), attachments: Vec::new() }
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
        let mut lines = wrap_paras(&paras, width);
        let attached = self.attachments.iter().map(|a| {
            let (what, style) = if a.attached {
                (format!("  ↳ attached {} · {}", a.path, a.detail), theme.dim)
            } else {
                (format!("  ↳ not attached: {} · {}", a.path, a.detail), theme.notice_warning)
            };
            Para::plain(vec![Span::styled(what, style)])
        });
        lines.extend(wrap_paras(&attached.collect::<Vec<_>>(), width));
        lines
    }
}
