//! Notices: what the agent reports beside the conversation — retries, compaction, warnings,
//! errors, an interrupted turn, the cost of a finished turn.

use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
    /// Compaction started, finished or failed.
    Compaction,
    /// A failed request being retried.
    Retry,
    /// The quiet line under a finished turn: time, requests, tokens.
    TurnEnd,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoticeCell {
    pub kind: NoticeKind,
    pub text: String,
}

impl NoticeCell {
    pub fn new(kind: NoticeKind, text: impl Into<String>) -> NoticeCell {
        NoticeCell { kind, text: text.into() }
    }

    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let (icon, style) = match self.kind {
            NoticeKind::Info => ("ℹ ", theme.notice_info),
            NoticeKind::Warning => ("⚠ ", theme.notice_warning),
            NoticeKind::Error => ("✗ ", theme.notice_error),
            NoticeKind::Compaction => ("⇣ ", theme.notice_compaction),
            NoticeKind::Retry => ("↻ ", theme.notice_warning),
            NoticeKind::TurnEnd => ("  ", theme.faint),
        };
        let text_style = match self.kind {
            NoticeKind::Error => theme.notice_error,
            NoticeKind::TurnEnd => theme.faint,
            NoticeKind::Info | NoticeKind::Warning | NoticeKind::Compaction | NoticeKind::Retry => theme.dim,
        };
        let paras: Vec<Para> = self
            .text
            .trim_end()
            .split('\n')
            .enumerate()
            .map(|(i, line)| {
                Para::prefixed(
                    vec![Span::styled(if i == 0 { icon } else { "  " }, style)],
                    vec![Span::raw("  ")],
                    vec![Span::styled(line.to_string(), text_style)],
                )
            })
            .collect();
        wrap_paras(&paras, width)
    }
}
