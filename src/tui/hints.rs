//! A row of key hints (`y once · n no · Esc stop the turn`) fitted to a width: when they do not
//! all fit, the least important hints are left out whole — a hint is never cut mid-word — and
//! the ones kept stay in their order.

use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::width;

/// One key and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    pub key: String,
    pub label: String,
    /// How much it matters: the lowest is left out first (the later one of two equals).
    pub rank: u8,
}

impl Hint {
    pub fn new(key: impl Into<String>, label: impl Into<String>, rank: u8) -> Hint {
        Hint { key: key.into(), label: label.into(), rank }
    }

    fn width(&self) -> usize {
        width(&self.key) + 1 + width(&self.label)
    }
}

/// Hints in the order given, each more important than the next.
pub fn in_order(hints: impl IntoIterator<Item = (String, String)>) -> Vec<Hint> {
    let hints: Vec<(String, String)> = hints.into_iter().collect();
    let n = hints.len();
    hints.into_iter().enumerate().map(|(i, (key, label))| Hint::new(key, label, (n - i).min(255) as u8)).collect()
}

/// Columns `hints` take as ` k label · k label `.
fn row_width(hints: &[&Hint]) -> usize {
    if hints.is_empty() {
        return 0;
    }
    hints.iter().map(|h| h.width()).sum::<usize>() + 3 * (hints.len() - 1) + 2
}

/// The hints that fit in `max` columns, in their order: the least important left out first.
pub fn fitting(hints: &[Hint], max: usize) -> Vec<&Hint> {
    let mut kept: Vec<&Hint> = hints.iter().collect();
    while row_width(&kept) > max && !kept.is_empty() {
        // The lowest rank goes; of equals, the later one.
        let (drop, _) = kept
            .iter()
            .enumerate()
            .min_by_key(|(i, h)| (h.rank, std::cmp::Reverse(*i)))
            .expect("not empty: checked by the loop");
        kept.remove(drop);
    }
    kept
}

/// The hints that fit in `max` columns as a styled row: ` k label · k label `.
pub fn fit(hints: &[Hint], max: usize, theme: &Theme) -> Line<'static> {
    let kept = fitting(hints, max);
    let mut spans = Vec::new();
    if kept.is_empty() {
        return Line::default();
    }
    spans.push(Span::raw(" "));
    for (i, h) in kept.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.faint));
        }
        spans.push(Span::styled(h.key.clone(), theme.key));
        spans.push(Span::styled(format!(" {}", h.label), theme.dim));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn the_least_important_hints_go_first_and_none_is_cut() {
        let theme = Theme::fallback(true);
        let hints = vec![
            Hint::new("y", "once", 9),
            Hint::new("a", "this session", 7),
            Hint::new("p", "this project", 6),
            Hint::new("n", "no", 8),
            Hint::new("d", "side by side", 2),
            Hint::new("Esc", "stop the turn", 4),
        ];
        let all = " y once · a this session · p this project · n no · d side by side · Esc stop the turn ";
        assert_eq!(text(&fit(&hints, 200, &theme)), all);
        assert_eq!(
            text(&fit(&hints, all.chars().count() - 1, &theme)),
            " y once · a this session · p this project · n no · Esc stop the turn "
        );
        assert_eq!(text(&fit(&hints, 40, &theme)), " y once · a this session · n no ");
        assert_eq!(text(&fit(&hints, 16, &theme)), " y once · n no ");
        assert_eq!(text(&fit(&hints, 5, &theme)), "");
    }

    #[test]
    fn in_order_ranks_the_first_highest() {
        let hints = in_order([("Esc".to_string(), "close".to_string()), ("↑↓".into(), "select".into())]);
        assert!(hints[0].rank > hints[1].rank);
        let kept: Vec<&str> = fitting(&hints, 12).iter().map(|h| h.label.as_str()).collect();
        assert_eq!(kept, ["close"]);
    }
}
