//! Markdown to styled paragraphs, with pulldown-cmark: headings, paragraphs, emphasis, lists
//! (nested, ordered, task lists), block quotes, links, rules, tables, and fenced code highlighted
//! by syntect. The output is width-independent; [`crate::tui::wrap`] lays it out per width, so an
//! answer is parsed once per change and wrapped once per width.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::Span;

use super::highlight;
use super::theme::Theme;
use super::wrap::{Para, width};

/// Render `text` to paragraphs in `theme`'s styles.
pub fn render(text: &str, theme: &Theme) -> Vec<Para> {
    let mut r = Renderer::new(theme);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|p| p.spans.is_empty() && p.first.is_empty()) {
        r.out.pop();
    }
    r.out
}

struct ListState {
    next: Option<u64>,
}

struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct Renderer<'t> {
    theme: &'t Theme,
    out: Vec<Para>,
    /// Inline spans of the paragraph being built.
    spans: Vec<Span<'static>>,
    /// Inline styles in effect (emphasis inside a link, …).
    styles: Vec<Style>,
    lists: Vec<ListState>,
    /// Marker of the list item whose first paragraph is pending.
    item_marker: Option<String>,
    quote_depth: usize,
    code: Option<(String, String)>,
    link: Option<String>,
    table: Option<Table>,
    /// A blank line is owed before the next block.
    gap: bool,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme) -> Self {
        Renderer {
            theme,
            out: Vec::new(),
            spans: Vec::new(),
            styles: Vec::new(),
            lists: Vec::new(),
            item_marker: None,
            quote_depth: 0,
            code: None,
            link: None,
            table: None,
            gap: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.iter().fold(self.theme.text, |acc, s| acc.patch(*s))
    }

    /// Prefixes for the block about to be emitted: quote bars and list indentation.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for _ in 0..self.quote_depth {
            first.push(Span::styled("▌ ", self.theme.quote));
            rest.push(Span::styled("▌ ", self.theme.quote));
        }
        let depth = self.lists.len();
        if depth > 0 {
            let indent = "  ".repeat(depth - 1);
            match self.item_marker.take() {
                Some(marker) => {
                    let w = width(&marker);
                    first.push(Span::raw(indent.clone()));
                    first.push(Span::styled(marker, self.theme.list_marker));
                    rest.push(Span::raw(format!("{indent}{}", " ".repeat(w))));
                }
                None => {
                    // A later paragraph of the same item lines up with its text.
                    let pad = format!("{indent}  ");
                    first.push(Span::raw(pad.clone()));
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn block_start(&mut self) {
        if self.gap && !self.out.is_empty() {
            let (_, rest) = self.prefixes_peek();
            self.out.push(Para::prefixed(rest.clone(), rest, Vec::new()));
        }
        self.gap = false;
    }

    /// The continuation prefix without consuming a pending item marker (for blank lines).
    fn prefixes_peek(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let bars: Vec<Span<'static>> = (0..self.quote_depth).map(|_| Span::styled("▌", self.theme.quote)).collect();
        (bars.clone(), bars)
    }

    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let (first, rest) = self.prefixes();
        self.out.push(Para::prefixed(first, rest, spans));
    }

    fn push_text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        if let Some(table) = &mut self.table {
            let style = self.styles.iter().fold(self.theme.text, |acc, s| acc.patch(*s));
            if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                cell.push(Span::styled(text.to_string(), style));
            }
            return;
        }
        let style = self.style();
        self.spans.push(Span::styled(text.to_string(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push_text(&text),
            Event::Code(code) => {
                if let Some(table) = &mut self.table {
                    if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                        cell.push(Span::styled(code.to_string(), self.theme.code_inline));
                    }
                } else {
                    let style = self.style().patch(self.theme.code_inline);
                    self.spans.push(Span::styled(code.to_string(), style));
                }
            }
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.block_start();
                self.out.push(Para::plain(vec![Span::styled("─".repeat(40), self.theme.rule)]));
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                self.spans.push(Span::styled(mark, self.theme.list_marker));
            }
            Event::Html(html) | Event::InlineHtml(html) => self.push_text(&html),
            Event::FootnoteReference(r) => self.push_text(&format!("[{r}]")),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.push_text(&m),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_start(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.block_start();
                let style = match level {
                    HeadingLevel::H1 => self.theme.heading1,
                    HeadingLevel::H2 => self.theme.heading2,
                    _ => self.theme.heading3,
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.block_start();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.block_start();
                }
                self.lists.push(ListState { next: start });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(ListState { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    Some(ListState { next: None }) => {
                        if self.lists.len() % 2 == 1 {
                            "• ".to_string()
                        } else {
                            "◦ ".to_string()
                        }
                    }
                    None => String::new(),
                };
                self.item_marker = Some(marker);
                self.gap = false;
            }
            Tag::Emphasis => self.styles.push(self.theme.emphasis),
            Tag::Strong => self.styles.push(self.theme.strong),
            Tag::Strikethrough => {
                self.styles.push(self.theme.strikethrough.add_modifier(ratatui::style::Modifier::CROSSED_OUT))
            }
            Tag::Link { dest_url, .. } => {
                self.styles.push(self.theme.link);
                self.link = Some(dest_url.to_string());
            }
            Tag::Image { dest_url, .. } => {
                self.push_text("[image: ");
                self.link = Some(dest_url.to_string());
            }
            Tag::Table(alignments) => {
                self.flush();
                self.block_start();
                self.table = Some(Table { alignments, rows: Vec::new(), header_rows: 0 });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(Vec::new());
                }
            }
            Tag::FootnoteDefinition(_)
            | Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_)
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                // Every level is drawn by its style alone; the markup's hashes never show.
                self.styles.pop();
                self.flush();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.gap = self.lists.is_empty();
            }
            TagEnd::Item => {
                self.flush();
                self.item_marker = None;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.spans.iter().map(|s| s.content.as_ref()).collect();
                    if !shown.ends_with(url.as_str()) && !url.starts_with('#') {
                        self.spans.push(Span::styled(format!(" ({url})"), self.theme.dim));
                    }
                }
            }
            TagEnd::Image => {
                if let Some(url) = self.link.take() {
                    self.push_text(&format!("] ({url})"));
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table(table);
                }
                self.gap = true;
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::TableRow
            | TagEnd::TableCell
            | TagEnd::FootnoteDefinition
            | TagEnd::HtmlBlock
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        let code = code.strip_suffix('\n').unwrap_or(code);
        let (first, rest) = self.prefixes();
        let fill = self.theme.code_block;
        let label = lang.split([',', ' ']).next().unwrap_or("").trim();
        if !label.is_empty() {
            let mut spans = first.clone();
            spans.push(Span::styled(format!(" {label} "), self.theme.code_lang.patch(fill)));
            self.out.push(Para { first: spans, rest: rest.clone(), fill: Some(fill), ..Para::default() });
        }
        let highlighted = highlight::highlight(code, lang, self.theme.syntax.as_deref());
        let plain = self.theme.text.patch(fill);
        for (i, line) in code.split('\n').enumerate() {
            let spans: Vec<Span<'static>> = match highlighted.as_ref().and_then(|h| h.get(i)) {
                Some(spans) => spans.iter().map(|s| Span::styled(s.content.clone(), fill.patch(s.style))).collect(),
                None => vec![Span::styled(line.replace('\t', "    "), plain)],
            };
            let mut content = vec![Span::styled(" ", fill)];
            content.extend(spans);
            let lead = if i == 0 && label.is_empty() { first.clone() } else { rest.clone() };
            self.out.push(Para { first: lead, rest: rest.clone(), spans: content, fill: Some(fill), hard: true });
        }
    }

    fn table(&mut self, table: Table) {
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                let w: usize = cell.iter().map(|s| width(&s.content)).sum();
                widths[i] = widths[i].max(w);
            }
        }
        let (_, rest) = self.prefixes();
        let border = self.theme.border;
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = Vec::new();
            for (i, w) in widths.iter().enumerate() {
                spans.push(Span::styled(if i == 0 { "│ " } else { " │ " }, border));
                let cell = row.get(i).cloned().unwrap_or_default();
                let used: usize = cell.iter().map(|s| width(&s.content)).sum();
                let pad = w.saturating_sub(used);
                let (left, right) = match table.alignments.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    Some(Alignment::Left) | Some(Alignment::None) | None => (0, pad),
                };
                spans.push(Span::raw(" ".repeat(left)));
                let header = r < table.header_rows;
                spans.extend(cell.into_iter().map(|s| if header { s.patch_style(self.theme.strong) } else { s }));
                spans.push(Span::raw(" ".repeat(right)));
            }
            spans.push(Span::styled(" │", border));
            self.out.push(Para { first: rest.clone(), rest: rest.clone(), spans, fill: None, hard: true });
            if r + 1 == table.header_rows {
                let line: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
                let sep = format!("├{}┤", line.join("┼"));
                self.out.push(Para {
                    first: rest.clone(),
                    rest: rest.clone(),
                    spans: vec![Span::styled(sep, border)],
                    fill: None,
                    hard: true,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::wrap::wrap_paras;

    fn lines(md: &str, w: u16) -> Vec<String> {
        let theme = Theme::fallback(false);
        wrap_paras(&render(md, &theme), w)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
            .collect()
    }

    #[test]
    fn headings_paragraphs_and_lists_are_laid_out() {
        let md = "# Title\n\nSome *text* here.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n";
        assert_eq!(
            lines(md, 40),
            ["Title", "", "Some text here.", "", "• one", "• two", "  ◦ nested", "", "1. first", "2. second"]
        );
    }

    #[test]
    fn deep_headings_show_their_text_without_hashes() {
        let out = lines("### Third\n\n#### Fourth\n\n###### Sixth\n", 40);
        assert_eq!(out, ["Third", "", "Fourth", "", "Sixth"]);
    }

    #[test]
    fn list_items_wrap_under_their_text() {
        assert_eq!(lines("- alpha beta gamma delta", 14), ["• alpha beta", "  gamma delta"]);
    }

    #[test]
    fn code_blocks_keep_their_lines_and_name_the_language() {
        let out = lines("```rust\nfn main() {\n    x();\n}\n```\n", 30);
        assert_eq!(out, [" rust", " fn main() {", "     x();", " }"]);
    }

    #[test]
    fn quotes_links_and_inline_code() {
        assert_eq!(lines("> quoted", 20), ["▌ quoted"]);
        assert_eq!(lines("see [docs](https://x.y) and `f()`", 60), ["see docs (https://x.y) and f()"]);
    }

    #[test]
    fn tables_line_up_their_columns() {
        let out = lines("| a | long |\n|---|---:|\n| xx | 1 |\n", 40);
        assert_eq!(out, ["│ a  │ long │", "├────┼──────┤", "│ xx │    1 │"]);
    }

    #[test]
    fn emphasis_is_styled_not_starred() {
        let theme = Theme::fallback(false);
        let paras = render("**bold**", &theme);
        assert_eq!(paras[0].spans[0].content, "bold");
        assert!(paras[0].spans[0].style.add_modifier.contains(ratatui::style::Modifier::BOLD));
    }
}
