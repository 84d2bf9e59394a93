//! Views drawn over the transcript: `/help`, `/sessions` and `/resume`, `/memories`,
//! `/context`, the approval dialog and the setup screen. Each owns its state and draws it; key
//! handling lives in `input.rs`, which maps keys through the one binding table.

mod approval;
mod context;
mod help;
mod memories;
mod sessions;
mod setup;

pub use approval::{ApprovalDialog, reason_editor};
pub use context::{ContextView, level_style};
pub use help::HelpView;
pub use memories::MemoriesView;
pub use sessions::SessionsView;
pub use setup::render_setup;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::keys::{self, Action};
use super::theme::Theme;

/// A view over the transcript.
pub enum Overlay {
    Help(HelpView),
    Sessions(SessionsView),
    Memories(MemoriesView),
    Context(ContextView),
}

impl Overlay {
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        match self {
            Overlay::Help(v) => v.render(area, buf, theme),
            Overlay::Sessions(v) => v.render(area, buf, theme),
            Overlay::Memories(v) => v.render(area, buf, theme),
            Overlay::Context(v) => v.render(area, buf, theme),
        }
    }
}

/// The area of a view holding `rows` rows of content: as tall as it needs (framed), at most
/// most of the screen, with a margin that keeps the transcript in sight.
pub fn view_area(area: Rect, rows: usize) -> Rect {
    let w = if area.width > 100 { area.width * 85 / 100 } else { area.width.saturating_sub(2) };
    let max_h = if area.height > 30 { area.height * 85 / 100 } else { area.height.saturating_sub(2) };
    let wanted = u16::try_from(rows.saturating_add(2)).unwrap_or(u16::MAX).max(8);
    let h = wanted.min(max_h);
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}

/// Clear `area` and draw a titled frame; returns the inside.
pub fn frame(area: Rect, buf: &mut Buffer, theme: &Theme, title: &str, footer: Line<'static>) -> Rect {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.overlay_border)
        .style(theme.overlay)
        .title(Line::from(Span::styled(format!(" {title} "), theme.title)))
        .title_bottom(footer);
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// `Esc close · ↑↓ select · …` from the binding table.
pub fn footer(actions: &[(Action, &str)], theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for (i, (action, label)) in actions.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.faint));
        }
        spans.push(Span::styled(keys::hint(*action), theme.key));
        spans.push(Span::styled(format!(" {label}"), theme.dim));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

/// `3h ago`, `2d ago`, from an RFC 3339 time.
pub fn age(rfc3339: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    let Ok(then) = chrono::DateTime::parse_from_rfc3339(rfc3339) else { return String::new() };
    let secs = (now - then.with_timezone(&chrono::Utc)).num_seconds().max(0);
    match secs {
        0..60 => "just now".into(),
        60..3_600 => format!("{}m ago", secs / 60),
        3_600..86_400 => format!("{}h ago", secs / 3_600),
        86_400..2_592_000 => format!("{}d ago", secs / 86_400),
        _ => then.format("%Y-%m-%d").to_string(),
    }
}

/// The window of `len` rows of which `selected` must be visible, `height` at a time.
pub fn window(len: usize, selected: usize, height: usize) -> std::ops::Range<usize> {
    if len <= height || height == 0 {
        return 0..len;
    }
    let start = selected.saturating_sub(height / 2).min(len - height);
    start..start + height
}
