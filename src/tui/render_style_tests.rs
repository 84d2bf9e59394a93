//! What the text snapshots cannot show: colours by role (budget level, diff rows, modes),
//! `NO_COLOR`, and that every view draws at any terminal size without panicking.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;

use crate::agent::{AgentEvent, ContextStatus, LibraryAnswer};
use crate::context::BudgetLevel;
use crate::conversation::Mode;
use crate::tui::app::fixture::*;
use crate::tui::app::{App, Phase};
use crate::tui::overlays::{ContextView, HelpView, MemoriesView, Overlay, SessionsView};
use crate::tui::theme::Theme;

fn cell_style_of(buf: &Buffer, needle: &str) -> ratatui::style::Style {
    let t = text(buf);
    for (y, line) in t.lines().enumerate() {
        if let Some(col) = line.find(needle) {
            let x = line[..col].chars().count() as u16;
            return buf[(x, y as u16)].style();
        }
    }
    panic!("{needle:?} is not on screen:\n{t}");
}

#[test]
fn the_context_figure_is_coloured_by_budget_level() {
    let theme = Theme::fallback(false);
    let mut app = app();
    for (level, role) in [
        (BudgetLevel::Ok, theme.context_ok),
        (BudgetLevel::Warning, theme.context_warning),
        (BudgetLevel::Compact, theme.context_compact),
        (BudgetLevel::Blocking, theme.context_blocking),
    ] {
        app.set_context(ContextStatus {
            tokens: 96_400,
            window: 200_000,
            level,
            compacting: false,
            cache_hit_rate: None,
            cost_usd: None,
        });
        let buf = draw(&app, 120, 40);
        assert_eq!(cell_style_of(&buf, "96k/200k").fg, role.fg, "{level:?}");
    }
}

#[test]
fn diffs_are_green_and_red_and_no_color_leaves_only_modifiers() {
    let app = approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}");
    let buf = draw(&app, 120, 40);
    let theme = Theme::fallback(false);
    assert_eq!(cell_style_of(&buf, "+         let gross").bg, theme.diff_add.bg);
    assert_eq!(cell_style_of(&buf, "-         self.items").bg, theme.diff_remove.bg);

    let plain_app = conversation_on(app_with(Theme::fallback(true)));
    let plain = approval_on(plain_app, Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}");
    let buf = draw(&plain, 120, 40);
    for cell in buf.content.iter() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "NO_COLOR: no foreground colours");
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "NO_COLOR: no background colours");
    }
    assert_eq!(text(&buf), text(&draw(&approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}"), 120, 40)));
}

#[test]
fn the_mode_shows_in_the_status_line_and_the_composer_border() {
    let theme = Theme::fallback(false);
    let mut app = app();
    for (mode, role) in [(Mode::Edit, theme.mode_edit), (Mode::Plan, theme.mode_plan), (Mode::Ask, theme.mode_ask)] {
        app.on_agent_event(AgentEvent::ModeChanged(mode));
        let buf = draw(&app, 80, 24);
        let last = text(&buf).lines().last().unwrap().to_string();
        assert!(last.starts_with(&format!(" {} ", mode.label())), "{last}");
        let border = buf[(0, 20)].style();
        assert_eq!(border.fg, role.bg, "{mode:?}: the composer border takes the mode's colour");
    }
}

#[test]
fn the_memories_view_reads_until_the_agent_answers() {
    let mut app = app();
    typed(&mut app, "/memories");
    key(&mut app, KeyCode::Enter);
    assert!(text(&draw(&app, 120, 40)).contains("reading the memories…"));
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::Memories(Ok(Vec::new()))));
    let t = text(&draw(&app, 120, 40));
    assert!(t.contains("No memories yet — cairn saves them when you ask it to remember something"), "{t}");
}

#[test]
fn every_view_draws_at_any_size_down_to_one_cell() {
    let mut views: Vec<App> = vec![conversation(), approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}")];
    let mut setup = app();
    setup.set_phase(Phase::Setup { message: "no model provider is configured.\n  ANTHROPIC_API_KEY=…".into() });
    views.push(setup);
    views.push(app());
    for overlay in 0..3 {
        let mut v = conversation();
        v.set_overlay(Some(match overlay {
            0 => Overlay::Context(ContextView::new(None)),
            1 => Overlay::Sessions(SessionsView {
                items: vec![summary("a", "t", "2026-11-20T11:58:00Z", 1, 1, "x")],
                selected: 0,
                current: None,
                now: now(),
                error: None,
                loading: false,
            }),
            _ => Overlay::Memories(MemoriesView {
                items: vec![memory(1, "m", false, "user")],
                selected: 0,
                viewing: true,
                confirm_delete: None,
                now: now(),
                error: None,
                loading: false,
            }),
        }));
        views.push(v);
    }
    let mut with_help = conversation();
    with_help.set_overlay(Some(Overlay::Help(HelpView::default())));
    views.push(with_help);
    let mut completing = conversation();
    typed(&mut completing, "/m");
    views.push(completing);
    for app in &views {
        for w in [1u16, 2, 3, 5, 8, 13, 19, 20, 21, 25, 34, 55] {
            for h in [1u16, 2, 3, 5, 6, 7, 8, 9, 10, 13] {
                draw(app, w, h);
            }
        }
    }
}
