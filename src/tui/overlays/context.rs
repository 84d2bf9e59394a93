//! `/context`: what the model sees, part by part, as bars that add up to the total, with the
//! budget thresholds and the cache figures — the same numbers as the status line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, footer, frame, view_area};
use crate::agent::ContextBreakdown;
use crate::context::BudgetLevel;
use crate::conversation::format_tokens;
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, width, wrap_paras};

pub struct ContextView {
    /// `None` until the agent answers.
    pub breakdown: Option<ContextBreakdown>,
    /// Rows scrolled past: on a small screen the breakdown is longer than the view.
    pub scroll: usize,
}

pub fn level_style(level: BudgetLevel, theme: &Theme) -> Style {
    match level {
        BudgetLevel::Ok => theme.context_ok,
        BudgetLevel::Warning => theme.context_warning,
        BudgetLevel::Compact => theme.context_compact,
        BudgetLevel::Blocking => theme.context_blocking,
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 }
}

/// The mark of a part the model's own tokenizer counted.
const COUNTED: &str = "  counted";

/// The breakdown as lines for `w` columns.
pub fn context_lines(b: &ContextBreakdown, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let window = b.budget.window.max(1);
    let mut out = Vec::new();
    let level = level_style(b.level, theme);
    out.push(Line::from(vec![
        Span::styled(format!("{} of {} tokens", format_tokens(b.total), format_tokens(window)), theme.title),
        Span::styled(
            format!("  {}% of the window · level ", crate::conversation::percent_of(b.total, window)),
            theme.dim,
        ),
        Span::styled(b.level.as_str().to_string(), level),
    ]));
    out.push(Line::default());
    let name_w = b.parts.iter().map(|p| p.name.len()).max().unwrap_or(8).max(8);
    let any_counted = b.parts.iter().any(|p| p.exact);
    // Room for each part's "  counted" mark when the tokenizer counted any.
    let mark_w = if any_counted { COUNTED.len() } else { 0 };
    let bar_w = w.saturating_sub(name_w + 24 + mark_w).clamp(10, 60);
    // Stacked bar: each part in turn, then free space, with thresholds marked below.
    // The last part (the messages, usually the largest) is solid; the others lighter.
    let shades = ['█', '▓', '▒', '░', '▞', '▚'];
    let count = b.parts.len();
    let glyph = |i: usize| shades[(count - 1 - i) % shades.len()];
    let mut stacked = Vec::new();
    let mut used_cells = 0usize;
    for (i, part) in b.parts.iter().enumerate() {
        let cells = ((part.tokens as f64 / window as f64) * bar_w as f64).round() as usize;
        let cells = cells.min(bar_w - used_cells);
        used_cells += cells;
        stacked.push(Span::styled(glyph(i).to_string().repeat(cells), level));
    }
    stacked.push(Span::styled("·".repeat(bar_w - used_cells), theme.bar_empty));
    let mut head = vec![Span::styled(format!("{:<name_w$}  ", "window"), theme.dim)];
    head.extend(stacked);
    out.push(Line::from(head));
    let mut marks = vec![' '; bar_w];
    for (at, c) in [(b.budget.warning, 'w'), (b.budget.auto_compact, 'c'), (b.budget.blocking, 'b')] {
        let i = ((at as f64 / window as f64) * bar_w as f64) as usize;
        if let Some(m) = marks.get_mut(i.min(bar_w - 1)) {
            *m = c;
        }
    }
    out.push(Line::from(vec![
        Span::styled(format!("{:<name_w$}  ", ""), theme.dim),
        Span::styled(marks.into_iter().collect::<String>(), theme.faint),
    ]));
    out.push(Line::default());
    for (i, part) in b.parts.iter().enumerate() {
        let cells = ((part.tokens as f64 / b.total.max(1) as f64) * bar_w as f64).round() as usize;
        out.push(Line::from(vec![
            Span::styled(format!("{:<name_w$}  ", part.name), theme.text),
            Span::styled(glyph(i).to_string().repeat(cells.min(bar_w)), level),
            Span::styled("·".repeat(bar_w - cells.min(bar_w)), theme.bar_empty),
            Span::styled(format!(" {:>7}  {:>5.1}%", format_tokens(part.tokens), pct(part.tokens, b.total)), theme.dim),
            Span::styled(if part.exact { COUNTED } else { "" }, theme.faint),
        ]));
    }
    let sum: u64 = b.parts.iter().map(|p| p.tokens).sum();
    if any_counted {
        let note = "counted: by the model's own tokenizer; the rest estimated";
        out.push(Line::from(Span::styled(format!("{:<name_w$}  {note}", ""), theme.faint)));
    }
    out.push(Line::from(vec![
        Span::styled(format!("{:<name_w$}  ", "total"), theme.title),
        Span::styled(" ".repeat(bar_w), theme.text),
        Span::styled(format!(" {:>7}  {:>5.1}%", format_tokens(sum), pct(sum, b.total)), theme.title),
    ]));
    out.push(Line::default());
    out.push(Line::from(Span::styled("Thresholds", theme.heading2)));
    let th = |name: &str, at: u64, what: &str| {
        Line::from(vec![
            Span::styled(format!("  {name:<14}"), theme.text),
            Span::styled(format!("{:>7}  {:>4.0}%  ", format_tokens(at), pct(at, window)), theme.key),
            Span::styled(what.to_string(), theme.dim),
        ])
    };
    out.push(th("warning (w)", b.budget.warning, "old tool results may be pruned"));
    out.push(th("compact (c)", b.budget.auto_compact, "older messages are summarised"));
    out.push(th("blocking (b)", b.budget.blocking, "oldest turns are trimmed so the request fits"));
    out.push(th("reply reserve", b.budget.reserve_output, "kept free for the model's answer"));
    out.push(Line::default());
    out.push(Line::from(Span::styled("Cache", theme.heading2)));
    let rate = |r: Option<f64>| r.map(|r| format!("{:.0}%", r * 100.0)).unwrap_or_else(|| "—".into());
    out.push(Line::from(vec![
        Span::styled("  session hit rate  ", theme.text),
        Span::styled(rate(b.cache.session_hit_rate), theme.key),
    ]));
    match &b.cache.last_request {
        Some(u) => out.extend(wrap_paras(
            &[Para {
                first: vec![Span::styled("  last request      ", theme.text)],
                rest: vec![Span::raw(" ".repeat(20.min(w / 2)))],
                spans: vec![Span::styled(
                    format!(
                        "{} read from cache · {} written to cache · {} uncached · {} out ({})",
                        format_tokens(u.cache_read_input_tokens),
                        format_tokens(u.cache_creation_input_tokens),
                        format_tokens(u.input_tokens),
                        format_tokens(u.output_tokens),
                        rate(Some(u.cache_hit_rate()))
                    ),
                    theme.dim,
                )],
                ..Para::default()
            }],
            w as u16,
        )),
        None => out.push(Line::from(Span::styled("  no request yet in this session", theme.dim))),
    }
    for brk in &b.cache.breaks {
        out.extend(hanging("  cache break: ", brk, theme.notice_warning, w));
    }
    let k = &b.cache.keep_alive;
    if k.pings > 0 || k.last.is_some() {
        let cost = k.cost_usd.map(crate::config::format_usd).unwrap_or_else(|| "no price known".into());
        out.push(Line::from(Span::styled(
            format!("  keep-alive: {} ping{} ({cost})", k.pings, if k.pings == 1 { "" } else { "s" }),
            theme.text,
        )));
        if let Some(last) = &k.last {
            out.push(Line::from(Span::styled(format!("    last: {last}"), theme.dim)));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("Cost", theme.heading2)));
    let usd = |c: Option<f64>| c.map(crate::config::format_usd).unwrap_or_else(|| "no price known".into());
    out.extend(wrap_paras(
        &[Para {
            first: vec![Span::styled("  this session      ", theme.text)],
            rest: vec![Span::raw(" ".repeat(20.min(w / 2)))],
            spans: vec![
                Span::styled(usd(b.cost.session_usd), theme.key),
                Span::styled("  (auxiliary calls and subagents included; catalog prices)", theme.dim),
            ],
            ..Para::default()
        }],
        w as u16,
    ));
    out.push(Line::from(vec![
        Span::styled("  last request      ", theme.text),
        Span::styled(usd(b.cost.last_request_usd), theme.key),
    ]));
    instruction_lines(&b.instruction_files, theme, w, &mut out);
    if !b.segments.is_empty() {
        out.push(Line::default());
        out.push(Line::from(Span::styled("Segments (topics of this session)", theme.heading2)));
        for s in &b.segments {
            let indent =
                "  ".repeat(1 + b.segments.iter().map(|x| x.level).max().unwrap_or(0).saturating_sub(s.level) as usize);
            let state = match (s.shown, s.summarized) {
                (true, _) => "shown verbatim",
                (false, true) => "summarised",
                (false, false) => "hidden, summary pending",
            };
            out.push(Line::from(vec![
                Span::styled(format!("{indent}L{} messages {}–{}  ", s.level, s.first_seq, s.last_seq), theme.text),
                Span::styled(format!("{} · {state}", format_tokens(s.tokens)), theme.dim),
            ]));
        }
    }
    let c = &b.counters;
    out.push(Line::default());
    out.push(Line::from(Span::styled("Pipeline so far", theme.heading2)));
    out.extend(hanging(
        "  ",
        &format!(
            "{} truncated · {} deduplicated · {} pruned · {} ({} failed) · {} trimmed",
            c.truncations,
            c.dedup_replacements,
            c.pruned_results,
            counted(c.compactions, "compaction", "compactions"),
            c.compaction_failures,
            counted(c.trimmed_messages, "message", "messages")
        ),
        theme.dim,
        w,
    ));
    out.into_iter().map(|l| Line::from(truncate_spans(l.spans, w))).collect()
}

/// Which AGENTS.md / CLAUDE.md files the prompt holds, and those left out with why; nothing
/// when the project has none.
fn instruction_lines(
    files: &crate::agent::InstructionFilesReport,
    theme: &Theme,
    w: usize,
    out: &mut Vec<Line<'static>>,
) {
    if files.read.is_empty() && files.skipped.is_empty() {
        return;
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("Instruction files", theme.heading2)));
    for path in &files.read {
        out.push(Line::from(vec![
            Span::styled(format!("  {path}  "), theme.text),
            Span::styled("in the prompt", theme.dim),
        ]));
    }
    for skipped in &files.skipped {
        out.extend(wrap_paras(
            &[Para {
                first: vec![Span::styled(format!("  {}  ", skipped.path), theme.text)],
                rest: vec![Span::raw("    ")],
                spans: vec![Span::styled(format!("skipped: {}", skipped.reason), theme.notice_warning)],
                ..Para::default()
            }],
            w as u16,
        ));
    }
}

/// `label` then `text`, wrapped to `w` columns under the text: a line that must be read whole.
fn hanging(label: &str, text: &str, style: Style, w: usize) -> Vec<Line<'static>> {
    let indent = " ".repeat(width(label).min(w / 2));
    wrap_paras(
        &[Para {
            first: vec![Span::styled(label.to_string(), style)],
            rest: vec![Span::raw(indent)],
            spans: vec![Span::styled(text.to_string(), style)],
            ..Para::default()
        }],
        w as u16,
    )
}

impl ContextView {
    pub fn new(breakdown: Option<ContextBreakdown>) -> ContextView {
        ContextView { breakdown, scroll: 0 }
    }

    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        super::scroll_only(&mut self.scroll, key)
    }

    pub fn scroll_by(&mut self, by: isize) {
        self.scroll = self.scroll.saturating_add_signed(by);
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = view_area(area, usize::MAX).width.saturating_sub(4);
        let lines = match &self.breakdown {
            Some(b) => context_lines(b, width as usize, theme),
            None => vec![Line::from(Span::styled("Asking the agent…", theme.dim))],
        };
        let area = view_area(area, lines.len());
        let mut actions = vec![(Action::Overlay(OverlayAction::Close), "close")];
        if lines.len() + 2 > area.height as usize {
            actions.push((Action::Overlay(OverlayAction::Next), "scroll"));
        }
        let foot = footer(&actions, theme);
        let inner = frame(area, buf, theme, "Context — what the model sees", foot);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        let start = self.scroll.min(lines.len().saturating_sub(inner.height as usize));
        for (i, line) in lines.iter().skip(start).take(inner.height as usize).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }
}

/// `1 compaction`, `3 compactions`.
fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_cache_break_wraps_whole_under_its_label() {
        let theme = Theme::fallback(true);
        let why = "request 7: UNEXPECTED, 41203 fewer tokens read: the project's instruction files changed (first difference: block 2, the system prompt's dynamic part)";
        let breakdown = ContextBreakdown {
            parts: Vec::new(),
            total: 1_000,
            budget: crate::context::ContextBudget::new(200_000, &crate::config::ContextConfig::default()),
            level: BudgetLevel::Ok,
            counters: Default::default(),
            cache: crate::agent::CacheReport { breaks: vec![why.into()], ..Default::default() },
            segments: Vec::new(),
            cost: Default::default(),
            instruction_files: Default::default(),
        };
        let rows: Vec<String> = context_lines(&breakdown, 76, &theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect();
        let first = rows.iter().position(|r| r.starts_with("  cache break: ")).expect("the break");
        let joined: String =
            rows[first..].iter().take_while(|r| !r.is_empty()).map(|r| r.trim()).collect::<Vec<_>>().join(" ");
        assert!(joined.contains(why), "cut: {rows:#?}");
        assert!(rows.iter().all(|r| !r.contains('…')), "{rows:#?}");
    }
}
