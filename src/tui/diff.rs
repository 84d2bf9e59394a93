//! Unified diffs (as the edit tools produce them) parsed into rows and drawn unified or side by
//! side, with line numbers, added/removed backgrounds and the file's syntax colours.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::highlight;
use super::theme::Theme;
use super::wrap::{Para, truncate_spans, width, wrap_para};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Context,
    Added,
    Removed,
    Hunk,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    pub old: Option<u32>,
    pub new: Option<u32>,
    pub text: String,
}

/// A parsed diff: the file it changes and its rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub path: String,
    pub rows: Vec<Row>,
    pub added: usize,
    pub removed: usize,
}

impl Diff {
    pub fn parse(text: &str) -> Diff {
        let mut diff = Diff::default();
        let (mut old, mut new) = (0u32, 0u32);
        for line in text.lines() {
            if let Some(path) = line.strip_prefix("+++ ") {
                diff.path = path.trim_start_matches("b/").to_string();
            } else if line.starts_with("--- ") && diff.rows.is_empty() {
                continue;
            } else if let Some(rest) = line.strip_prefix("@@") {
                let (o, n) = parse_hunk(rest);
                old = o;
                new = n;
                // Shown as written: `@@ -1,3 +1,3 @@ fn main`.
                diff.rows.push(Row { kind: RowKind::Hunk, old: Some(o), new: Some(n), text: line.to_string() });
            } else if let Some(t) = line.strip_prefix('+') {
                diff.rows.push(Row { kind: RowKind::Added, old: None, new: Some(new), text: t.to_string() });
                diff.added += 1;
                new += 1;
            } else if let Some(t) = line.strip_prefix('-') {
                diff.rows.push(Row { kind: RowKind::Removed, old: Some(old), new: None, text: t.to_string() });
                diff.removed += 1;
                old += 1;
            } else if line.starts_with('\\') {
                continue; // "\ No newline at end of file"
            } else {
                let t = line.strip_prefix(' ').unwrap_or(line);
                diff.rows.push(Row { kind: RowKind::Context, old: Some(old), new: Some(new), text: t.to_string() });
                old += 1;
                new += 1;
            }
        }
        diff
    }

    fn number_width(&self) -> usize {
        let max = self.rows.iter().filter_map(|r| r.old.max(r.new)).max().unwrap_or(1);
        max.to_string().len().max(2)
    }

    /// Syntax colours for each row's text, when the language is known and colours are on.
    fn highlighted(&self, theme: &Theme) -> Vec<Option<Vec<Span<'static>>>> {
        if !theme.syntax_in_diffs {
            return vec![None; self.rows.len()];
        }
        let lang = highlight::lang_of_path(&self.path);
        // Old and new sides are highlighted as separate texts, so each keeps its own state.
        let side = |keep: fn(RowKind) -> bool| {
            let text: String = self.rows.iter().filter(|r| keep(r.kind)).map(|r| format!("{}\n", r.text)).collect();
            highlight::highlight(&text, &lang, theme.syntax.as_deref())
        };
        let old = side(|k| matches!(k, RowKind::Context | RowKind::Removed));
        let new = side(|k| matches!(k, RowKind::Added));
        let (mut oi, mut ni) = (0, 0);
        self.rows
            .iter()
            .map(|r| match r.kind {
                RowKind::Context | RowKind::Removed => {
                    oi += 1;
                    old.as_ref().and_then(|h| h.get(oi - 1).cloned())
                }
                RowKind::Added => {
                    ni += 1;
                    new.as_ref().and_then(|h| h.get(ni - 1).cloned())
                }
                RowKind::Hunk => None,
            })
            .collect()
    }

    /// One row per diff line: `  12 + text`, cut to `w` columns.
    pub fn unified(&self, theme: &Theme, w: u16) -> Vec<Line<'static>> {
        let nw = self.number_width();
        let colours = self.highlighted(theme);
        let w = w as usize;
        self.rows
            .iter()
            .zip(colours)
            .map(|(row, colours)| {
                if row.kind == RowKind::Hunk {
                    return hunk_line(row, theme, w);
                }
                let (sign, base) = row_style(row.kind, theme);
                let number = match row.kind {
                    RowKind::Removed => row.old,
                    RowKind::Added | RowKind::Context | RowKind::Hunk => row.new,
                };
                let mut spans = vec![
                    Span::styled(
                        format!("{:>nw$} ", number.map(|n| n.to_string()).unwrap_or_default()),
                        theme.diff_line_number,
                    ),
                    Span::styled(format!("{sign} "), base),
                ];
                spans.extend(text_spans(&row.text, colours, base, row.kind));
                fill(spans, w, base, row.kind)
            })
            .collect()
    }
}

impl Diff {
    /// As [`Diff::unified`], but a line too long for `w` columns wraps under its text (the
    /// number column left blank) instead of being cut: what a dialog asks about is shown whole.
    pub fn unified_wrapped(&self, theme: &Theme, w: u16) -> Vec<Line<'static>> {
        let colours = self.highlighted(theme);
        let mut out = Vec::new();
        for (row, colours) in self.rows.iter().zip(colours) {
            let number = match row.kind {
                RowKind::Removed => row.old,
                RowKind::Added | RowKind::Context | RowKind::Hunk => row.new,
            };
            wrap_para(&self.row_para(row, colours, number, theme), w as usize, &mut out);
        }
        out
    }

    /// Old on the left, new on the right; removed and added runs are paired line by line, each
    /// half wrapping within its column.
    pub fn side_by_side(&self, theme: &Theme, w: u16) -> Vec<Line<'static>> {
        let w = w as usize;
        let half = w.saturating_sub(2) / 2;
        let colours = self.highlighted(theme);
        let rows: Vec<(&Row, Option<Vec<Span<'static>>>)> = self.rows.iter().zip(colours).collect();
        let cell = |row: Option<&(&Row, Option<Vec<Span<'static>>>)>| -> Vec<Line<'static>> {
            let Some((row, colours)) = row else { return Vec::new() };
            let number = if row.kind == RowKind::Added { row.new } else { row.old };
            let mut lines = Vec::new();
            wrap_para(&self.row_para(row, colours.clone(), number, theme), half, &mut lines);
            lines
        };
        let sep = Span::styled("│ ", theme.border);
        let pair = |left: Vec<Line<'static>>, right: Vec<Line<'static>>, out: &mut Vec<Line<'static>>| {
            for k in 0..left.len().max(right.len()) {
                let mut spans = pad(left.get(k), half, theme);
                spans.push(sep.clone());
                spans.extend(pad(right.get(k), half, theme));
                out.push(Line::from(spans));
            }
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < rows.len() {
            let row = rows[i].0;
            match row.kind {
                RowKind::Hunk => {
                    wrap_para(&self.row_para(row, None, None, theme), w, &mut out);
                    i += 1;
                }
                RowKind::Context => {
                    let right = Row { old: row.new, ..row.clone() };
                    pair(cell(Some(&rows[i])), cell(Some(&(&right, rows[i].1.clone()))), &mut out);
                    i += 1;
                }
                RowKind::Removed | RowKind::Added => {
                    let removed: Vec<_> = rows[i..].iter().take_while(|r| r.0.kind == RowKind::Removed).collect();
                    let j = i + removed.len();
                    let added: Vec<_> = rows[j..].iter().take_while(|r| r.0.kind == RowKind::Added).collect();
                    for k in 0..removed.len().max(added.len()) {
                        pair(cell(removed.get(k).copied()), cell(added.get(k).copied()), &mut out);
                    }
                    i = j + added.len();
                }
            }
        }
        out
    }

    /// One row as a paragraph: the number and sign first, blank columns under them after.
    fn row_para(&self, row: &Row, colours: Option<Vec<Span<'static>>>, number: Option<u32>, theme: &Theme) -> Para {
        if row.kind == RowKind::Hunk {
            return Para::plain(vec![Span::styled(row.text.trim_end().to_string(), theme.diff_hunk)]);
        }
        let nw = self.number_width();
        let (sign, base) = row_style(row.kind, theme);
        let fill = if row.kind == RowKind::Context { Style::default() } else { base };
        Para {
            first: vec![
                Span::styled(
                    format!("{:>nw$} ", number.map(|n| n.to_string()).unwrap_or_default()),
                    theme.diff_line_number,
                ),
                Span::styled(format!("{sign} "), base),
            ],
            rest: vec![Span::styled(" ".repeat(nw + 1), theme.diff_line_number), Span::styled("  ", base)],
            spans: text_spans(&row.text, colours, base, row.kind),
            fill: Some(fill),
            // Broken at a space where one fits, so a wrapped token reads whole.
            hard: false,
        }
    }
}

/// A half row of a side-by-side diff, padded to `half` columns (blank when the side has none).
fn pad(line: Option<&Line<'static>>, half: usize, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = line.map(|l| l.spans.clone()).unwrap_or_default();
    let used: usize = spans.iter().map(|s| width(&s.content)).sum();
    if used < half {
        spans.push(Span::styled(" ".repeat(half - used), theme.faint));
    }
    spans
}

fn parse_hunk(rest: &str) -> (u32, u32) {
    let mut old = 1;
    let mut new = 1;
    for part in rest.split_whitespace() {
        let num = |s: &str| s.split(',').next().and_then(|n| n.parse().ok());
        if let Some(o) = part.strip_prefix('-').and_then(num) {
            old = o;
        } else if let Some(n) = part.strip_prefix('+').and_then(num) {
            new = n;
        }
    }
    (old, new)
}

fn row_style(kind: RowKind, theme: &Theme) -> (&'static str, Style) {
    match kind {
        RowKind::Added => ("+", theme.diff_add),
        RowKind::Removed => ("-", theme.diff_remove),
        RowKind::Context | RowKind::Hunk => (" ", theme.diff_context),
    }
}

/// The row's text: syntax colours on the row's background, or the row style alone.
fn text_spans(text: &str, colours: Option<Vec<Span<'static>>>, base: Style, kind: RowKind) -> Vec<Span<'static>> {
    match colours {
        Some(spans) if kind != RowKind::Context => spans
            .into_iter()
            .map(|s| {
                let mut style = base.patch(s.style);
                style.bg = base.bg;
                Span::styled(s.content, style)
            })
            .collect(),
        Some(spans) => {
            spans.into_iter().map(|s| Span::styled(s.content, s.style.patch(Style { fg: None, ..base }))).collect()
        }
        None => vec![Span::styled(text.replace('\t', "    "), base)],
    }
}

/// Cut to `w` columns, and paint the rest of an added or removed row.
fn fill(spans: Vec<Span<'static>>, w: usize, base: Style, kind: RowKind) -> Line<'static> {
    let mut spans = truncate_spans(spans, w);
    let used: usize = spans.iter().map(|s| width(&s.content)).sum();
    if used < w {
        let style = if kind == RowKind::Context { Style::default() } else { base };
        spans.push(Span::styled(" ".repeat(w - used), style));
    }
    Line::from(spans)
}

fn hunk_line(row: &Row, theme: &Theme, w: usize) -> Line<'static> {
    Line::from(truncate_spans(vec![Span::styled(row.text.trim_end().to_string(), theme.diff_hunk)], w))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-fn b() {}\n+fn b() -> u8 { 1 }\n fn c() {}\n";

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
            .collect()
    }

    #[test]
    fn parses_paths_numbers_and_counts() {
        let d = Diff::parse(DIFF);
        assert_eq!(d.path, "src/lib.rs");
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(d.rows[2], Row { kind: RowKind::Removed, old: Some(2), new: None, text: "fn b() {}".into() });
        assert_eq!(d.rows[3].new, Some(2));
    }

    #[test]
    fn unified_shows_old_and_new_lines_with_signs() {
        let d = Diff::parse(DIFF);
        let theme = Theme::fallback(true);
        assert_eq!(
            text(&d.unified(&theme, 60)),
            ["@@ -1,3 +1,3 @@", " 1   fn a() {}", " 2 - fn b() {}", " 2 + fn b() -> u8 { 1 }", " 3   fn c() {}"]
        );
    }

    #[test]
    fn side_by_side_pairs_removed_with_added() {
        let d = Diff::parse(DIFF);
        let theme = Theme::fallback(true);
        let lines = text(&d.side_by_side(&theme, 61));
        assert_eq!(lines[2], " 2 - fn b() {}               │  2 + fn b() -> u8 { 1 }");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_long_line_wraps_under_its_text_whole() {
        let long =
            format!("+        let gross: Money = {};", "self.items.iter().map(|i| i.price * i.qty).sum() + ".repeat(2));
        let diff = Diff::parse(&format!("--- a/a.rs\n+++ b/a.rs\n@@ -1,1 +1,2 @@\n fn a() {{}}\n{long}\n"));
        let theme = Theme::fallback(true);
        let rows = text(&diff.unified_wrapped(&theme, 40));
        assert_eq!(rows[1], " 1   fn a() {}");
        assert!(rows[2].starts_with(" 2 +         let gross"), "{rows:#?}");
        assert!(rows.len() > 4, "wrapped: {rows:#?}");
        for continuation in &rows[3..] {
            assert!(continuation.starts_with("     "), "hangs under the text: {rows:#?}");
        }
        // Nothing is cut: the rows hold the whole line.
        let squeeze = |t: &str| t.replace(' ', "");
        let joined: String = rows[2..].iter().map(|r| r.get(5..).unwrap_or("")).collect();
        assert_eq!(squeeze(&joined), squeeze(&long[1..]));
        let sides = text(&diff.side_by_side(&theme, 61));
        let right: String = sides[2..]
            .iter()
            .filter_map(|r| r.split_once("│ ").map(|(_, r)| r.get(5..).unwrap_or("").to_string()))
            .collect();
        assert_eq!(squeeze(&right), squeeze(&long[1..]));
    }

    #[test]
    fn colours_mark_added_and_removed_rows() {
        let d = Diff::parse(DIFF);
        let theme = Theme::fallback(false);
        let lines = d.unified(&theme, 40);
        assert_eq!(lines[2].spans.last().unwrap().style.bg, theme.diff_remove.bg);
        assert_eq!(lines[3].spans.last().unwrap().style.bg, theme.diff_add.bg);
    }
}
