//! Wrapping styled text to a width: word-wrap across spans, hard breaks for words wider than a
//! line, and prefixes (list markers, quote bars, gutters) that hang over continuation lines.

use ratatui::buffer::CellWidth;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

/// Columns one grapheme cluster takes, as ratatui lays it out: a cluster holding a control
/// character is not drawn at all.
fn cluster_width(g: &str) -> usize {
    if g.contains(char::is_control) { 0 } else { g.cell_width() as usize }
}

/// Display width of a string, as the terminal lays it out.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(cluster_width).sum()
}

/// Width of a set of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

/// A logical line before wrapping: `first` prefixes the first row, `rest` every further row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Para {
    pub first: Vec<Span<'static>>,
    pub rest: Vec<Span<'static>>,
    pub spans: Vec<Span<'static>>,
    /// Fill the rest of each row with this style (code blocks, user messages).
    pub fill: Option<Style>,
    /// Break anywhere rather than at spaces (code keeps its spacing).
    pub hard: bool,
}

impl Para {
    pub fn plain(spans: Vec<Span<'static>>) -> Para {
        Para { spans, ..Para::default() }
    }

    pub fn prefixed(first: Vec<Span<'static>>, rest: Vec<Span<'static>>, spans: Vec<Span<'static>>) -> Para {
        Para { first, rest, spans, ..Para::default() }
    }
}

/// Wrap paragraphs to `width` columns.
pub fn wrap_paras(paras: &[Para], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for p in paras {
        wrap_para(p, width as usize, &mut out);
    }
    out
}

/// One styled grapheme cluster with its width (a tab is a space; a wide one counts 2).
#[derive(Clone, Copy)]
struct Glyph<'a> {
    g: &'a str,
    style: Style,
    w: usize,
}

impl Glyph<'_> {
    fn is_space(&self) -> bool {
        self.g == " "
    }
}

pub fn wrap_para(p: &Para, width: usize, out: &mut Vec<Line<'static>>) {
    let first_w = spans_width(&p.first);
    let rest_w = spans_width(&p.rest);
    let glyphs: Vec<Glyph<'_>> = p
        .spans
        .iter()
        .flat_map(|s| {
            let style = s.style;
            let text: &str = &s.content;
            // Plain ASCII (most text) is one cluster a byte; "\r\n" is dropped either way.
            let clusters: Box<dyn Iterator<Item = &str>> = if text.is_ascii() {
                Box::new((0..text.len()).map(move |i| &text[i..=i]))
            } else {
                Box::new(text.graphemes(true))
            };
            clusters.filter(|g| !matches!(*g, "\n" | "\r\n")).map(move |g| {
                let g = if g == "\t" { " " } else { g };
                Glyph { g, style, w: cluster_width(g) }
            })
        })
        .collect();
    let mut start = 0;
    let mut row = 0;
    loop {
        let prefix_w = if row == 0 { first_w } else { rest_w };
        // At least one column of text, whatever the prefix.
        let avail = width.saturating_sub(prefix_w).max(1);
        let (end, next) = if p.hard { hard_break(&glyphs, start, avail) } else { soft_break(&glyphs, start, avail) };
        let mut spans: Vec<Span<'static>> = if row == 0 { p.first.clone() } else { p.rest.clone() };
        push_glyphs(&mut spans, &glyphs[start..end]);
        if let Some(fill) = p.fill {
            let used = prefix_w + glyphs[start..end].iter().map(|g| g.w).sum::<usize>();
            if used < width {
                spans.push(Span::styled(" ".repeat(width - used), fill));
            }
        }
        out.push(Line::from(spans));
        row += 1;
        if next >= glyphs.len() {
            break;
        }
        start = next;
    }
}

/// Fill up to `avail` columns; returns (end of this row, start of the next).
fn hard_break(glyphs: &[Glyph<'_>], start: usize, avail: usize) -> (usize, usize) {
    let mut used = 0;
    let mut i = start;
    while i < glyphs.len() && used + glyphs[i].w <= avail {
        used += glyphs[i].w;
        i += 1;
    }
    if i == start && i < glyphs.len() {
        i += 1; // a glyph wider than the row still has to go somewhere
    }
    (i, i)
}

/// Break at the last space that fits; a word longer than the row is broken hard.
fn soft_break(glyphs: &[Glyph<'_>], start: usize, avail: usize) -> (usize, usize) {
    let (hard_end, _) = hard_break(glyphs, start, avail);
    if hard_end >= glyphs.len() {
        return (hard_end, hard_end);
    }
    // The row is full: is the next glyph a space (a clean break) or mid-word?
    if glyphs[hard_end].is_space() {
        let mut next = hard_end;
        while next < glyphs.len() && glyphs[next].is_space() {
            next += 1;
        }
        return (trim_end(glyphs, start, hard_end), next);
    }
    match (start..hard_end).rev().find(|&i| glyphs[i].is_space()) {
        Some(space) if space > start => {
            let mut next = space;
            while next < glyphs.len() && glyphs[next].is_space() {
                next += 1;
            }
            (trim_end(glyphs, start, space), next)
        }
        _ => (hard_end, hard_end),
    }
}

fn trim_end(glyphs: &[Glyph<'_>], start: usize, mut end: usize) -> usize {
    while end > start && glyphs[end - 1].is_space() {
        end -= 1;
    }
    end
}

/// Append glyphs, merging runs of one style into one span.
fn push_glyphs(spans: &mut Vec<Span<'static>>, glyphs: &[Glyph<'_>]) {
    let mut run = String::new();
    let mut style = None;
    for g in glyphs {
        if style != Some(g.style) {
            if let Some(s) = style {
                spans.push(Span::styled(std::mem::take(&mut run), s));
            }
            style = Some(g.style);
        }
        run.push_str(g.g);
    }
    if let Some(s) = style {
        spans.push(Span::styled(run, s));
    }
}

/// Cut a string to `max` columns, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = cluster_width(g);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('…');
    out
}

/// Cut a string to `max` columns at a word, ending in `…` when cut (mid-word only when its
/// first word alone is too long).
pub fn truncate_words(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let cut = truncate(s, max);
    let body = cut.trim_end_matches('…');
    match body.rfind(' ') {
        Some(space) if space > 0 => format!("{}…", body[..space].trim_end()),
        Some(_) | None => cut,
    }
}

/// Cut styled spans to `max` columns, ending in `…` when cut.
pub fn truncate_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    if spans_width(&spans) <= max {
        return spans;
    }
    let mut out = Vec::new();
    let mut left = max.saturating_sub(1);
    let mut last_style = Style::default();
    for span in spans {
        if left == 0 {
            break;
        }
        last_style = span.style;
        let w = width(&span.content);
        if w <= left {
            left -= w;
            out.push(span);
        } else {
            let cut = truncate(&span.content, left + 1);
            let cut = cut.trim_end_matches('…').to_string();
            left = 0;
            out.push(Span::styled(cut, span.style));
        }
    }
    out.push(Span::styled("…", last_style));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_keep_their_styles() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let p = Para::plain(vec![Span::raw("hello "), Span::styled("brave new", bold), Span::raw(" world")]);
        let lines = wrap_paras(&[p], 11);
        assert_eq!(text(&lines), ["hello brave", "new world"]);
        assert_eq!(lines[0].spans[1].style, bold);
        assert_eq!(lines[1].spans[0].style, bold);
    }

    #[test]
    fn long_words_break_hard_and_prefixes_hang() {
        let p = Para::prefixed(vec![Span::raw("- ")], vec![Span::raw("  ")], vec![Span::raw("abcdefghij klm")]);
        assert_eq!(text(&wrap_paras(&[p], 6)), ["- abcd", "  efgh", "  ij", "  klm"]);
    }

    #[test]
    fn code_keeps_spaces_and_fills_rows() {
        let p = Para { spans: vec![Span::raw("a  b  c")], hard: true, fill: Some(Style::default()), ..Para::default() };
        assert_eq!(text(&wrap_paras(&[p], 4)), ["a  b", "  c "]);
    }

    #[test]
    fn empty_paragraph_is_one_blank_row_and_wide_chars_count_double() {
        assert_eq!(text(&wrap_paras(&[Para::default()], 10)), [""]);
        let p = Para::plain(vec![Span::raw("日本語テキスト")]);
        assert_eq!(text(&wrap_paras(&[p], 6)), ["日本語", "テキス", "ト"]);
    }

    #[test]
    fn a_code_row_with_emoji_sequences_fills_to_the_same_edge_as_the_others() {
        let fill = Style::default().bg(ratatui::style::Color::Blue);
        let rows: Vec<Para> = ["let ok = true;", "// ⚠️ careful: 👩‍💻 at work, 🇫🇷 flag", "// 日本語 and café"]
            .iter()
            .map(|t| Para { spans: vec![Span::raw(t.to_string())], fill: Some(fill), hard: true, ..Para::default() })
            .collect();
        let lines = wrap_paras(&rows, 40);
        // Drawn as the terminal is drawn: every row ends at the same column.
        let area = ratatui::layout::Rect::new(0, 0, 40, lines.len() as u16);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        for (y, line) in lines.iter().enumerate() {
            buf.set_line(0, y as u16, line, 40);
        }
        for y in 0..area.height {
            let painted = (0..40).rev().find(|&x| buf[(x, y)].bg == ratatui::style::Color::Blue).map(|x| x + 1);
            assert_eq!(painted, Some(40), "row {y} ends early: {:?}", lines[y as usize]);
        }
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        let spans = truncate_spans(vec![Span::raw("ab"), Span::raw("cdef")], 4);
        assert_eq!(spans.iter().map(|s| s.content.as_ref()).collect::<String>(), "abc…");
        assert_eq!(truncate_words("waiting for your approval", 16), "waiting for…");
        assert_eq!(truncate_words("waiting for your approval", 40), "waiting for your approval");
        assert_eq!(truncate_words("unbreakable", 5), "unbr…");
    }
}
