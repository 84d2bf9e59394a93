//! The setup screen: shown when no model provider can be found, it says exactly what to set
//! (the same facts headless mode prints) and leaves on q, Esc or Enter.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{footer, frame};
use crate::tui::keys::{Action, SetupAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, width, wrap_paras};

pub fn render_setup(message: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let w = area.width.min(96);
    let h = area.height.min(20);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
    let foot = footer(&[(Action::Setup(SetupAction::Leave), "leave")], theme);
    let inner = frame(rect, buf, theme, "cairn needs a model provider", foot);
    let inner = Rect::new(inner.x + 2, inner.y, inner.width.saturating_sub(4), inner.height);
    for (i, line) in setup_lines(message, inner.width, theme).iter().take(inner.height as usize).enumerate() {
        buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
    }
}

/// The message as rows of `width`: a row of the table of settings (`  NAME=…   what it is`)
/// wraps under its description, a line of prose two columns in.
fn setup_lines(message: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut paras = vec![Para::default()];
    for (i, raw) in message.lines().enumerate() {
        let text = if i == 0 {
            let mut chars = raw.chars();
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
        } else {
            raw.to_string()
        };
        let style = if raw.starts_with("  ") { theme.key } else { theme.text };
        // A continuation row never starts where a line of its own would.
        let hang = description_column(raw).filter(|&c| c * 2 < width as usize).unwrap_or(2);
        paras.push(Para {
            rest: vec![Span::raw(" ".repeat(hang))],
            spans: vec![Span::styled(text, style)],
            ..Para::default()
        });
    }
    paras.push(Para::default());
    paras.push(Para::plain(vec![Span::styled("Set one, then start cairn again.", theme.dim)]));
    wrap_paras(&paras, width)
}

/// Where the description of a table row starts: after its indent, its name and a run of two
/// or more spaces.
fn description_column(row: &str) -> Option<usize> {
    let name = row.strip_prefix("  ")?.trim_start();
    let indent = row.len() - name.len();
    let gap = name.find("  ")?;
    let after = name[gap..].trim_start();
    Some(width(&row[..indent + gap]) + (name.len() - gap - after.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_row_of_the_table_wraps_under_its_description() {
        let theme = Theme::fallback(true);
        let message = "no model provider is configured. Set one of:\n  ANTHROPIC_API_KEY=…              Anthropic (Claude)\n  OPENAI_BASE_URL=http://HOST/v1   any OpenAI-compatible server (OpenRouter, vLLM, LM Studio, …)\nor start Ollama, which cairn finds by itself.";
        let rows: Vec<String> = setup_lines(message, 72, &theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect();
        assert_eq!(rows[1], "No model provider is configured. Set one of:");
        let row = rows.iter().position(|r| r.starts_with("  OPENAI_BASE_URL")).unwrap();
        let column = rows[row].find("any").unwrap();
        assert!(rows[row + 1].len() > column, "{rows:#?}");
        assert!(rows[row + 1][..column].trim().is_empty(), "back at the margin: {rows:#?}");
        assert!(rows[row + 1].contains("LM Studio"), "{rows:#?}");
    }
}
