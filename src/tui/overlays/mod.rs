//! Views drawn over the transcript: `/help`, `/sessions` and `/resume`, `/memories`,
//! `/context`, `/rewind`, the approval dialog and the setup screen. Each owns its state, draws it, and
//! handles the keys meant for it; the app routes keys here through the one binding table and
//! does what a view asks ([`ViewOutcome`]).

mod approval;
mod context;
mod help;
mod mcp;
mod memories;
mod models;
mod rewind;
mod sessions;
mod setup;
mod text;
mod trust;

pub use approval::ApprovalDialog;
pub use context::{ContextView, level_style};
pub use help::HelpView;
pub use mcp::McpView;
pub use memories::MemoriesView;
pub use models::ModelsView;
pub use rewind::RewindView;
pub use sessions::SessionsView;
pub use setup::render_setup;
pub use text::TextView;
pub use trust::{TrustAnswer, TrustView};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::hints::{self, Hint};
use super::keys::{self, Action, GlobalAction, OverlayAction};
use super::theme::Theme;
use crate::agent::{LibraryRequest, McpRequest, RewindScope, UserCommand};
use crate::checkpoint::Overwrite;

/// A view over the transcript.
pub enum Overlay {
    Help(HelpView),
    Sessions(SessionsView),
    Memories(MemoriesView),
    Context(ContextView),
    Mcp(McpView),
    Rewind(RewindView),
    Models(ModelsView),
    /// A tool's whole output, or the `/usage` report.
    Text(TextView),
}

/// A key as a view sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKey {
    Action(OverlayAction),
    /// Page up or down: move by this many rows.
    Page(isize),
    /// A key that means nothing here (it still counts as "another key").
    Other,
}

/// What a view (or the approval dialog) asks of the app after a key.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewOutcome {
    /// The view changed itself, or nothing happened.
    Stay,
    /// Stay, and say this on the status line.
    Say(String),
    Close,
    /// Close, and say why nothing else happened.
    CloseSaying(&'static str),
    /// Close, send the agent this command, and say what was sent (the approval dialog's answer).
    CloseSending {
        command: UserCommand,
        saying: String,
    },
    /// The key is the app's own: handle it as this action (a dialog lets Esc stop the turn).
    Global(GlobalAction),
    /// Ask the agent's library (pin, move, forget a memory).
    Ask(LibraryRequest),
    /// Close, and switch to this session.
    Resume(String),
    /// Ask the agent to change an MCP server (the view stays, and shows the answer).
    Mcp(McpRequest),
    /// Check what rewinding to before this turn would do to the files.
    PlanRewind {
        user_seq: i64,
        scope: RewindScope,
    },
    /// Rewind to before this turn.
    Rewind {
        user_seq: i64,
        scope: RewindScope,
        overwrite: Overwrite,
    },
    /// Close, and switch to this model.
    SetModel(String),
}

impl Overlay {
    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        // The rewind view steps back before it closes.
        if key == ViewKey::Action(OverlayAction::Close) && !matches!(self, Overlay::Rewind(_)) {
            return ViewOutcome::Close;
        }
        match self {
            Overlay::Help(v) => v.on_key(key),
            Overlay::Sessions(v) => v.on_key(key),
            Overlay::Memories(v) => v.on_key(key),
            Overlay::Context(v) => v.on_key(key),
            Overlay::Mcp(v) => v.on_key(key),
            Overlay::Rewind(v) => v.on_key(key),
            Overlay::Models(v) => v.on_key(key),
            Overlay::Text(v) => v.on_key(key),
        }
    }

    /// The mouse wheel over the view.
    pub fn on_wheel(&mut self, up: bool) {
        match self {
            Overlay::Help(v) => v.scroll_by(if up { -3 } else { 3 }),
            Overlay::Sessions(v) => v.move_by(if up { -1 } else { 1 }),
            Overlay::Memories(v) => v.move_by(if up { -1 } else { 1 }),
            Overlay::Context(v) => v.scroll_by(if up { -3 } else { 3 }),
            Overlay::Mcp(v) => v.move_by(if up { -1 } else { 1 }),
            Overlay::Rewind(v) => v.move_by(if up { -1 } else { 1 }),
            Overlay::Models(v) => v.move_by(if up { -1 } else { 1 }),
            Overlay::Text(v) => v.scroll_by(if up { -3 } else { 3 }),
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        match self {
            Overlay::Help(v) => v.render(area, buf, theme),
            Overlay::Sessions(v) => v.render(area, buf, theme),
            Overlay::Memories(v) => v.render(area, buf, theme),
            Overlay::Context(v) => v.render(area, buf, theme),
            Overlay::Mcp(v) => v.render(area, buf, theme),
            Overlay::Rewind(v) => v.render(area, buf, theme),
            Overlay::Models(v) => v.render(area, buf, theme),
            Overlay::Text(v) => v.render(area, buf, theme),
        }
    }
}

/// The area of a view holding `rows` rows of content: as tall as it needs (framed), at most
/// most of the screen, with a margin that keeps the transcript in sight where there is room.
pub fn view_area(area: Rect, rows: usize) -> Rect {
    // On a small screen a margin would only let the transcript show through at the edges in
    // scraps: the view takes the whole width, and the whole height when it needs it.
    let w = if area.width > 100 { area.width * 85 / 100 } else { area.width };
    let max_h = if area.height > 30 { area.height * 85 / 100 } else { area.height };
    let wanted = u16::try_from(rows.saturating_add(2)).unwrap_or(u16::MAX).max(8);
    let h = wanted.min(max_h);
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}

/// Clear `area` and draw a titled frame; returns the inside. The footer's hints that do not fit
/// the frame's width are left out, the least important first.
pub fn frame(area: Rect, buf: &mut Buffer, theme: &Theme, title: &str, footer: Vec<Hint>) -> Rect {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.overlay_border)
        .style(theme.overlay)
        .title(Line::from(Span::styled(format!(" {title} "), theme.title)))
        .title_bottom(hints::fit(&footer, area.width.saturating_sub(2) as usize, theme));
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// `Esc close · ↑↓ select · …` from the binding table, each hint more important than the next
/// but the way out, which is kept whatever the width.
pub fn footer(actions: &[(Action, &str)], _theme: &Theme) -> Vec<Hint> {
    let mut hints = hints::in_order(actions.iter().map(|(action, label)| (keys::hint(*action), label.to_string())));
    for (hint, (action, _)) in hints.iter_mut().zip(actions) {
        if *action == Action::Overlay(OverlayAction::Close) {
            hint.rank = u8::MAX;
        }
    }
    hints
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

/// How far a key moves a selection or a scroll: a line for next and previous, a page by the
/// page; no other key moves anything.
pub fn step_of(key: ViewKey) -> isize {
    match key {
        ViewKey::Action(OverlayAction::Next) => 1,
        ViewKey::Action(OverlayAction::Prev) => -1,
        ViewKey::Page(by) => by,
        ViewKey::Action(
            OverlayAction::Close
            | OverlayAction::Open
            | OverlayAction::TogglePin
            | OverlayAction::ToggleGlobal
            | OverlayAction::Delete
            | OverlayAction::Search,
        )
        | ViewKey::Other => 0,
    }
}

/// The keys of a view that only scrolls (`/help`, `/context`): a line at a time, a page by the
/// page; nothing else does anything there (the way out is every view's).
pub fn scroll_only(scroll: &mut usize, key: ViewKey) -> ViewOutcome {
    *scroll = scroll.saturating_add_signed(step_of(key));
    ViewOutcome::Stay
}

/// `selected` moved `by` rows within a list of `len`.
pub fn moved(selected: usize, by: isize, len: usize) -> usize {
    selected.saturating_add_signed(by).min(len.saturating_sub(1))
}

/// The window of `len` rows of which `selected` must be visible, `height` at a time.
pub fn window(len: usize, selected: usize, height: usize) -> std::ops::Range<usize> {
    if len <= height || height == 0 {
        return 0..len;
    }
    let start = selected.saturating_sub(height / 2).min(len - height);
    start..start + height
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::fixture::{now, summary};

    fn sessions() -> Overlay {
        Overlay::Sessions(SessionsView {
            items: vec![summary("aaaa", "this one", "", 1, 1, ""), summary("bbbb", "older", "", 1, 1, "")],
            selected: 0,
            current: Some("aaaa".into()),
            now: now(),
            error: None,
            loading: false,
        })
    }

    #[test]
    fn the_sessions_view_resumes_another_session_but_not_this_one() {
        let open = ViewKey::Action(OverlayAction::Open);
        assert_eq!(sessions().on_key(open), ViewOutcome::CloseSaying("that is this session"));
        let mut view = sessions();
        assert_eq!(view.on_key(ViewKey::Page(10)), ViewOutcome::Stay, "a page stops at the last row");
        assert_eq!(view.on_key(open), ViewOutcome::Resume("bbbb".into()));
        assert_eq!(view.on_key(ViewKey::Action(OverlayAction::Close)), ViewOutcome::Close);
        view.on_wheel(true);
        assert_eq!(view.on_key(open), ViewOutcome::CloseSaying("that is this session"));
    }

    #[test]
    fn at_80_by_24_a_picker_lets_nothing_of_the_transcript_show_at_its_edges() {
        use crate::tui::app::fixture::{conversation, draw, text};
        for (w, h) in [(80, 24), (100, 30)] {
            let mut app = conversation();
            app.set_overlay(Some(sessions()));
            let screen = text(&draw(&app, w, h));
            let rows: Vec<&str> = screen.lines().collect();
            let top = rows.iter().position(|r| r.contains("╭ Sessions")).expect("the picker");
            let bottom = top + rows[top..].iter().position(|r| r.contains('╰')).expect("its bottom");
            let left = rows[top].chars().position(|c| c == '╭').unwrap();
            for row in &rows[top..=bottom] {
                let before: String = row.chars().take(left).collect();
                assert!(before.trim().is_empty(), "the transcript shows at the left edge at {w}×{h}:\n{screen}");
                let after = row.rsplit(['╮', '│', '╯']).next().unwrap_or("");
                assert!(after.trim().is_empty(), "the transcript shows at the right edge at {w}×{h}:\n{screen}");
            }
        }
    }

    #[test]
    fn a_key_in_the_context_view_changes_nothing_but_close() {
        let mut view = Overlay::Context(ContextView::new(None));
        assert_eq!(view.on_key(ViewKey::Action(OverlayAction::Delete)), ViewOutcome::Stay);
        assert_eq!(view.on_key(ViewKey::Action(OverlayAction::Close)), ViewOutcome::Close);
    }
}
