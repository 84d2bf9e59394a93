#![cfg(test)]

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc;

use super::*;
use crate::agent::{AgentEvent, LibraryAnswer, LibraryRequest, RewindOutcome, UserCommand};
use crate::checkpoint::{PathNote, RewindReport};
use crate::conversation::{Message, Mode};
use crate::tui::app::App;
use crate::tui::app::fixture::{SIZES, conversation, draw, key, now, summary, text, typed};
use crate::tui::cells::Cell;
use crate::tui::completion::FileIndex;
use crate::tui::overlays::Overlay;

fn turn(number: u32, user_seq: i64, prompt: &str, at: &str, changed: u64, reverted: u64) -> TurnInfo {
    TurnInfo {
        number,
        user_seq,
        prompt: prompt.into(),
        created_at: at.into(),
        files_changed: changed,
        files_reverted: reverted,
    }
}

fn turns() -> Vec<TurnInfo> {
    vec![
        turn(1, 1, "why is the checkout total wrong?", "2026-11-20T10:02:00Z", 0, 0),
        turn(2, 7, "fix it, and add a test for the discount", "2026-11-20T11:40:00Z", 3, 0),
        turn(3, 19, "rename total to grand_total everywhere", "2026-11-20T11:58:00Z", 6, 1),
    ]
}

fn view() -> RewindView {
    let mut v = RewindView::new(now());
    v.show(turns());
    v
}

const OPEN: ViewKey = ViewKey::Action(OverlayAction::Open);
const CLOSE: ViewKey = ViewKey::Action(OverlayAction::Close);
const NEXT: ViewKey = ViewKey::Action(OverlayAction::Next);
const PREV: ViewKey = ViewKey::Action(OverlayAction::Prev);

fn preview(scope: RewindScope, conflicts: &[&str]) -> RewindPreview {
    RewindPreview {
        turn: turns()[1].clone(),
        scope,
        files: 9,
        conflicts: conflicts
            .iter()
            .map(|p| PathNote { path: p.to_string(), reason: format!("{p} was changed by someone else") })
            .collect(),
        unrestorable: vec![PathNote {
            path: ".env".into(),
            reason: "can't restore .env: its content was not kept (it matches checkpoints.never_store)".into(),
        }],
    }
}

#[test]
fn a_turn_then_what_to_take_back_then_the_agent_is_asked() {
    let mut v = view();
    assert_eq!(v.selected, 2, "the latest turn first");
    assert_eq!(v.on_key(PREV), ViewOutcome::Stay);
    assert_eq!(v.on_key(OPEN), ViewOutcome::Stay);
    assert_eq!(v.step, RewindStep::Scope { choice: 0 });
    // Conversation only: nothing to check on disk, the rewind goes ahead.
    v.on_key(NEXT);
    assert_eq!(
        v.on_key(OPEN),
        ViewOutcome::Rewind { user_seq: 7, scope: RewindScope::Conversation, overwrite: Overwrite::Nothing }
    );
    assert_eq!(v.step, RewindStep::Working("rewinding…"));
    assert_eq!(v.on_key(NEXT), ViewOutcome::Stay, "keys wait while the agent works");

    // Code: the files are checked first.
    let mut v = view();
    v.on_key(OPEN);
    v.on_key(NEXT);
    v.on_key(NEXT);
    assert_eq!(v.on_key(OPEN), ViewOutcome::PlanRewind { user_seq: 19, scope: RewindScope::Code });
    assert_eq!(v.step, RewindStep::Working("checking the files…"));
}

#[test]
fn no_conflict_goes_ahead_and_conflicts_are_skipped_or_overwritten_as_chosen() {
    let mut v = view();
    let clean = v.planned(preview(RewindScope::Both, &[]));
    assert_eq!(
        clean,
        Some(ViewOutcome::Rewind { user_seq: 7, scope: RewindScope::Both, overwrite: Overwrite::Nothing })
    );

    let mut v = view();
    assert_eq!(v.planned(preview(RewindScope::Both, &["src/cart.rs", "README.md"])), None);
    assert!(matches!(v.step, RewindStep::Conflicts { choice: 0, .. }));
    let skip = v.on_key(OPEN);
    assert_eq!(skip, ViewOutcome::Rewind { user_seq: 7, scope: RewindScope::Both, overwrite: Overwrite::Nothing });

    let mut v = view();
    v.planned(preview(RewindScope::Both, &["src/cart.rs", "README.md"]));
    v.on_key(NEXT);
    let only = BTreeSet::from(["README.md".to_string(), "src/cart.rs".to_string()]);
    assert_eq!(
        v.on_key(OPEN),
        ViewOutcome::Rewind { user_seq: 7, scope: RewindScope::Both, overwrite: Overwrite::Only(only) }
    );

    // Esc steps back: conflicts → what to take back → the turns → closed.
    let mut v = view();
    v.planned(preview(RewindScope::Code, &["a"]));
    assert_eq!(v.on_key(CLOSE), ViewOutcome::Stay);
    assert_eq!(v.step, RewindStep::Scope { choice: 2 });
    assert_eq!(v.on_key(CLOSE), ViewOutcome::Stay);
    assert_eq!(v.step, RewindStep::Turn);
    assert_eq!(v.on_key(CLOSE), ViewOutcome::Close);
}

fn with(view: RewindView) -> App {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Rewind(view)));
    app
}

fn snapshot(name: &str, app: &App) {
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text(&draw(app, w, h)));
    }
}

#[test]
fn the_picker_the_choice_and_the_conflicts_as_drawn() {
    snapshot("rewind_turns", &with(view()));
    let mut v = view();
    v.on_key(OPEN);
    snapshot("rewind_scope", &with(v));
    let mut v = view();
    v.planned(preview(RewindScope::Both, &["src/cart.rs", "README.md"]));
    snapshot("rewind_conflicts", &with(v));
    let mut empty = RewindView::new(now());
    empty.show(Vec::new());
    let drawn = text(&draw(&with(empty), 80, 24));
    assert!(drawn.contains("No turns yet: there is nothing to rewind."), "{drawn}");
}

/// An app connected to a channel the test reads, with a session loaded.
fn connected() -> (App, mpsc::UnboundedReceiver<UserCommand>) {
    let mut app = App::new(crate::tui::theme::Theme::fallback(true), FileIndex::default());
    let (tx, rx) = mpsc::unbounded_channel();
    app.connect(tx);
    let s = summary("3f9a2c71e0b4", "checkout", "2026-11-20T11:58:00Z", 4, 100, "");
    app.on_agent_event(AgentEvent::SessionReady {
        session: crate::store::SessionInfo {
            id: s.id,
            project: crate::store::ProjectId(1),
            title: s.title,
            mode: Mode::Edit,
            provider: crate::config::ProviderKind::Anthropic,
            model: "m".into(),
            created_at: s.started_at,
            updated_at: s.last_active_at,
        },
        resumed: false,
        history: vec![Arc::new(Message::user("hello"))],
        tool_display: HashMap::new(),
        mode: Mode::Edit,
        model: "m".into(),
        window: 200_000,
        recap: Default::default(),
    });
    (app, rx)
}

fn sent(rx: &mut mpsc::UnboundedReceiver<UserCommand>) -> Vec<UserCommand> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[test]
fn rewind_from_the_prompt_box_to_the_report_with_the_prompt_offered_again() {
    let (mut app, mut rx) = connected();
    typed(&mut app, "/rewind");
    key(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Turns { session: "3f9a2c71e0b4".into() })]);
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::Turns(Ok(turns()))));
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::PlanRewind { user_seq: 7, scope: RewindScope::Both }]);
    app.on_agent_event(AgentEvent::RewindPlanned(Ok(preview(RewindScope::Both, &[]))));
    assert_eq!(
        sent(&mut rx),
        [UserCommand::Rewind { user_seq: 7, scope: RewindScope::Both, overwrite: Overwrite::Nothing }],
        "no conflict: no question"
    );
    let outcome = RewindOutcome {
        session_id: "3f9a2c71e0b4".into(),
        turn: turns()[1].clone(),
        scope: RewindScope::Both,
        code: Some(RewindReport { restored: vec!["src/cart.rs".into()], ..Default::default() }),
        conversation: Some(crate::agent::ConversationRewound {
            messages: 12,
            first_seq: 7,
            last_seq: 18,
            prompt: "fix it, and add a test for the discount".into(),
        }),
    };
    app.on_agent_event(AgentEvent::Rewound(Ok(outcome)));
    assert!(app.overlay().is_none());
    assert_eq!(app.composer().text(), "fix it, and add a test for the discount");
    let last = app.transcript().cells().last().cloned();
    assert!(
        matches!(&last, Some(Cell::Notice(n)) if n.text.contains("rewound to before turn 2") && n.text.contains("restored 1 file, deleted 0") && n.text.contains("12 messages no longer sent")),
        "{last:?}"
    );
}

#[test]
fn undo_and_rewind_wait_for_the_turn_and_diff_lands_in_the_transcript() {
    let (mut app, mut rx) = connected();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "work".into() });
    typed(&mut app, "/undo");
    key(&mut app, KeyCode::Enter);
    typed(&mut app, "/rewind");
    key(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty(), "nothing is taken back under a running turn");
    assert!(app.flash_text().is_some_and(|f| f.contains("wait for the turn to finish")), "{:?}", app.flash_text());
    assert!(app.overlay().is_none());

    typed(&mut app, "/diff last");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        sent(&mut rx),
        [UserCommand::Library(LibraryRequest::Diff {
            session: "3f9a2c71e0b4".into(),
            target: crate::agent::DiffTarget::LastTurn
        })]
    );
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".to_string();
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::Diff(Ok(crate::agent::SessionDiff {
        title: "turn 2 (“edit”)".into(),
        diff,
    }))));
    assert!(matches!(app.transcript().cells().last(), Some(Cell::Changes(c)) if c.parts.len() == 1));
}
