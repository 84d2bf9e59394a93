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
                // A wrapped line hangs under its own text, indented lines (a list) included.
                let indent = line.len() - line.trim_start_matches(' ').len();
                Para::prefixed(
                    vec![Span::styled(if i == 0 { icon } else { "  " }, style)],
                    vec![Span::raw(" ".repeat(2 + indent))],
                    vec![Span::styled(line.to_string(), text_style)],
                )
            })
            .collect();
        wrap_paras(&paras, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_indented_line_wraps_under_its_own_text() {
        let theme = Theme::fallback(true);
        let cell =
            NoticeCell::new(NoticeKind::Info, "Jobs:\n    1  running  $ python3 -m http.server 8000 --bind 127.0.0.1");
        let rows: Vec<String> =
            cell.lines(40, &theme).iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect();
        assert_eq!(rows[1], "      1  running  $ python3 -m");
        assert_eq!(rows[2], "      http.server 8000 --bind 127.0.0.1", "{rows:?}");
    }
}
