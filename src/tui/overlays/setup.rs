//! The setup screen: shown when no model provider can be found, it says exactly what to set
//! (the same facts headless mode prints) and leaves on q, Esc or Enter.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{footer, frame};
use crate::tui::keys::{Action, SetupAction};
use crate::tui::theme::Theme;

pub fn render_setup(message: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let w = area.width.min(96);
    let h = area.height.min(20);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
    let foot = footer(&[(Action::Setup(SetupAction::Leave), "leave")], theme);
    let inner = frame(rect, buf, theme, "cairn needs a model provider", foot);
    let mut lines = vec![Line::default()];
    let mut first = true;
    for raw in message.lines() {
        let text = if first {
            first = false;
            let mut s = raw.to_string();
            if let Some(c) = s.get(..1) {
                s = c.to_uppercase() + &s[1..];
            }
            s
        } else {
            raw.to_string()
        };
        let style = if raw.starts_with("  ") { theme.key } else { theme.text };
        lines.push(Line::from(Span::styled(text, style)));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Set one, then start cairn again.", theme.dim)));
    let inner = Rect::new(inner.x + 2, inner.y, inner.width.saturating_sub(4), inner.height);
    Paragraph::new(lines).wrap(Wrap { trim: false }).render(inner, buf);
}
