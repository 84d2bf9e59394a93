use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

use super::*;
use crate::agent::ApprovalRequest;
use crate::conversation::Mode;
use crate::tui::cells::NoticeCell;
use crate::tui::completion::FileIndex;
use crate::tui::theme::Theme;

fn connected() -> (App, mpsc::UnboundedReceiver<UserCommand>) {
    let mut app = App::new(Theme::fallback(true), FileIndex::default());
    let (tx, rx) = mpsc::unbounded_channel();
    app.connect(tx);
    (app, rx)
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn ctrl(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn sent(rx: &mut mpsc::UnboundedReceiver<UserCommand>) -> Vec<UserCommand> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[test]
fn enter_sends_and_shift_enter_or_ctrl_j_break_lines() {
    let (mut app, mut rx) = connected();
    typed(&mut app, "one");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "two");
    ctrl(&mut app, 'j');
    typed(&mut app, "three");
    assert_eq!(app.composer.text(), "one\ntwo\nthree");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::Submit("one\ntwo\nthree".into())]);
    assert!(app.composer.is_empty());
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty(), "an empty prompt is not sent");
}

#[test]
fn typing_while_busy_queues_visibly() {
    let (mut app, mut rx) = connected();
    app.on_agent_event(crate::agent::AgentEvent::TurnStarted { prompt: "first".into() });
    typed(&mut app, "next please");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.pending, ["next please"]);
    assert_eq!(sent(&mut rx), [UserCommand::Submit("next please".into())]);
}

#[test]
fn shift_tab_cycles_modes_through_the_agent() {
    let (mut app, mut rx) = connected();
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.mode, Mode::Plan);
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.mode, Mode::Ask);
    assert_eq!(sent(&mut rx), [UserCommand::SetMode(Mode::Plan), UserCommand::SetMode(Mode::Ask)]);
}

#[test]
fn esc_interrupts_only_a_running_turn() {
    let (mut app, mut rx) = connected();
    press(&mut app, KeyCode::Esc);
    assert!(sent(&mut rx).is_empty());
    app.on_agent_event(crate::agent::AgentEvent::TurnStarted { prompt: "x".into() });
    press(&mut app, KeyCode::Esc);
    assert_eq!(sent(&mut rx), [UserCommand::Interrupt]);
}

#[test]
fn ctrl_c_clears_then_quits_on_the_second_press() {
    let (mut app, _rx) = connected();
    typed(&mut app, "draft");
    ctrl(&mut app, 'c');
    assert!(app.composer.is_empty());
    assert!(!app.quit);
    ctrl(&mut app, 'c');
    assert!(app.quit_armed());
    assert!(!app.quit);
    ctrl(&mut app, 'c');
    assert!(app.quit);
}

#[test]
fn ctrl_c_presses_far_apart_do_not_quit() {
    let (mut app, _rx) = connected();
    ctrl(&mut app, 'c');
    app.now += crate::tui::app::QUIT_WINDOW + std::time::Duration::from_millis(10);
    ctrl(&mut app, 'c');
    assert!(!app.quit);
}

fn request(tool: &str, diff: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        id: 7,
        call_id: "c1".into(),
        tool: tool.into(),
        summary: "a.txt".into(),
        arguments: r#"{"path":"a.txt"}"#.into(),
        reason: "changes a.txt".into(),
        diff: diff.map(String::from),
        asked_by: "mode: edit".into(),
        exact: vec![format!("{tool}(./a.txt)")],
        prefix: Vec::new(),
        kind: crate::agent::ApprovalKind::Call,
        agent: None,
        task: None,
    }
}

#[test]
fn approval_keys_answer_the_dialog() {
    for (key, decision) in [
        ('y', ApprovalDecision::Approve),
        ('a', ApprovalDecision::ApproveForSession { prefix: false }),
        ('p', ApprovalDecision::ApproveForProject { prefix: false }),
    ] {
        let (mut app, mut rx) = connected();
        app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(request("file_write", None)));
        press(&mut app, KeyCode::Char(key));
        assert_eq!(sent(&mut rx), [UserCommand::Approval { id: 7, decision }]);
        assert!(app.approvals.is_empty());
        assert!(app.composer.is_empty(), "the key did not leak into the prompt");
    }
}

#[test]
fn tab_shows_the_prefix_before_a_or_p_takes_it() {
    let (mut app, mut rx) = connected();
    let with_prefix = ApprovalRequest {
        exact: vec!["bash(git push origin main)".into()],
        prefix: vec!["bash(git push *)".into()],
        ..request("bash", None)
    };
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(with_prefix));
    assert_eq!(app.approvals[0].shown_rules(), ["bash(git push origin main)"]);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.approvals[0].shown_rules(), ["bash(git push *)"]);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(
        sent(&mut rx),
        [UserCommand::Approval { id: 7, decision: ApprovalDecision::ApproveForSession { prefix: true } }]
    );
}

#[test]
fn with_nothing_to_remember_only_once_or_no_is_taken() {
    let (mut app, mut rx) = connected();
    let global_memory = ApprovalRequest { exact: Vec::new(), ..request("memory_save", None) };
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(global_memory));
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Char('p'));
    assert!(sent(&mut rx).is_empty(), "a and p are not offered");
    assert_eq!(app.approvals.len(), 1);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(sent(&mut rx), [UserCommand::Approval { id: 7, decision: ApprovalDecision::Approve }]);
}

#[test]
fn a_denial_carries_the_typed_reason() {
    let (mut app, mut rx) = connected();
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(request("bash", None)));
    press(&mut app, KeyCode::Char('n'));
    assert!(sent(&mut rx).is_empty(), "n asks for a reason first");
    typed(&mut app, "use cargo");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        sent(&mut rx),
        [UserCommand::Approval { id: 7, decision: ApprovalDecision::Deny { reason: Some("use cargo".into()) } }]
    );
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(request("bash", None)));
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::Approval { id: 7, decision: ApprovalDecision::Deny { reason: None } }]);
}

#[test]
fn d_toggles_the_side_by_side_diff() {
    let (mut app, _rx) = connected();
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(request(
        "file_edit",
        Some("@@ -1 +1 @@\n-a\n+b\n"),
    )));
    press(&mut app, KeyCode::Char('d'));
    assert!(app.approvals[0].side_by_side);
    press(&mut app, KeyCode::Char('d'));
    assert!(!app.approvals[0].side_by_side);
}

#[test]
fn slash_commands_become_commands_or_views() {
    let (mut app, mut rx) = connected();
    for (line, expected) in [
        ("/compact", Some(UserCommand::Compact)),
        ("/new", Some(UserCommand::NewSession)),
        ("/mode plan", Some(UserCommand::SetMode(Mode::Plan))),
        ("/model claude-opus-4-1", Some(UserCommand::SetModel("claude-opus-4-1".into()))),
        ("/resume ab12", Some(UserCommand::ResumeSession("ab12".into()))),
        ("/context", Some(UserCommand::DescribeContext)),
    ] {
        app.overlay = None;
        app.composer.set_text(line);
        app.composer.completion = None;
        press(&mut app, KeyCode::Enter);
        assert_eq!(sent(&mut rx).pop(), expected, "{line}");
    }
    assert!(matches!(app.overlay, Some(Overlay::Context(_))));
    for (line, check) in [
        ("/help", (|o: &Overlay| matches!(o, Overlay::Help(_))) as fn(&Overlay) -> bool),
        ("/sessions", |o| matches!(o, Overlay::Sessions(_))),
        ("/resume", |o| matches!(o, Overlay::Sessions(_))),
        ("/memories", |o| matches!(o, Overlay::Memories(_))),
    ] {
        app.overlay = None;
        app.composer.set_text(line);
        app.composer.completion = None;
        press(&mut app, KeyCode::Enter);
        assert!(app.overlay.as_ref().is_some_and(check), "{line}");
        press(&mut app, KeyCode::Esc);
        assert!(app.overlay.is_none(), "Esc closes {line}");
    }
    app.composer.set_text("/quit");
    press(&mut app, KeyCode::Enter);
    assert!(app.quit);
}

#[test]
fn a_mistyped_command_is_explained_and_kept() {
    let (mut app, mut rx) = connected();
    app.composer.set_text("/mode fast");
    app.composer.completion = None;
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.composer.text(), "/mode fast");
    assert!(app.flash_text().is_some_and(|t| t.contains("edit, plan, ask")));
}

#[test]
fn enter_on_a_command_suggestion_runs_it() {
    let (mut app, _rx) = connected();
    typed(&mut app, "/hel");
    press(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay, Some(Overlay::Help(_))));
}

#[test]
fn memories_are_pinned_made_global_and_deleted_with_a_second_press_through_the_agent() {
    use crate::agent::{AgentEvent, LibraryAnswer, LibraryRequest};
    let (mut app, mut rx) = connected();
    app.composer.set_text("/memories");
    app.composer.completion = None;
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Memories)]);
    let memory = crate::store::MemoryRecord {
        id: 7,
        kind: crate::conversation::MemoryKind::Decision,
        class: crate::conversation::RetentionClass::Durable,
        pinned: false,
        title: "use tabs".into(),
        content: "the user prefers tabs".into(),
        global: false,
        session_id: None,
        created_at: "2026-11-12T10:00:00Z".into(),
        updated_at: "2026-11-12T10:00:00Z".into(),
        expires_at: None,
        approved_by: None,
    };
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::Memories(Ok(vec![memory.clone()]))));
    press(&mut app, KeyCode::Char('p'));
    press(&mut app, KeyCode::Char('g'));
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        sent(&mut rx),
        [
            UserCommand::Library(LibraryRequest::Pin { id: 7, pinned: true }),
            UserCommand::Library(LibraryRequest::SetGlobal { id: 7, global: true }),
        ],
        "one press of d only asks"
    );
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Forget("7".into()))]);
    // The answer is said in the view, which then asks for the list as it now is.
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::MemoryChanged(Ok("Forgot memory #7: use tabs".into()))));
    assert_eq!(app.flash_text(), Some("Forgot memory #7: use tabs"));
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Memories)]);
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::Memories(Ok(Vec::new()))));
    let Some(Overlay::Memories(view)) = &app.overlay else { panic!("the view stays open") };
    assert!(view.items.is_empty());
}

#[test]
fn forget_outside_the_view_answers_with_a_notice() {
    use crate::agent::{AgentEvent, LibraryAnswer, LibraryError, LibraryRequest};
    let (mut app, mut rx) = connected();
    app.composer.set_text("/forget #3");
    app.composer.completion = None;
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Forget("#3".into()))]);
    let missing = "there is no memory #3 in this project; /memories and `cairn memories` list them";
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::MemoryChanged(Err(LibraryError::Input(missing.into())))));
    let said = NoticeCell::new(crate::tui::cells::NoticeKind::Error, missing);
    assert!(matches!(app.transcript.get(0), Some(Cell::Notice(n)) if *n == said), "an error notice");
    assert!(app.overlay.is_none());
}

#[test]
fn paste_goes_to_the_prompt_without_sending() {
    let (mut app, mut rx) = connected();
    app.on_paste("line 1\nline 2\n");
    assert_eq!(app.composer.text(), "line 1\nline 2\n");
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn up_on_the_first_line_recalls_the_last_prompt() {
    let (mut app, _rx) = connected();
    typed(&mut app, "earlier");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.composer.text(), "earlier");
}

#[test]
fn alt_c_copies_the_last_answer_and_f2_frees_the_mouse() {
    let (mut app, _rx) = connected();
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::ALT));
    assert_eq!(app.clipboard, None);
    assert_eq!(app.flash_text(), Some("no answer to copy yet"));
    app.on_agent_event(crate::agent::AgentEvent::TurnStarted { prompt: "q".into() });
    app.on_agent_event(crate::agent::AgentEvent::TextDelta("the **answer**".into()));
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::ALT));
    assert_eq!(app.clipboard.as_deref(), Some("the **answer**"));
    assert!(app.composer.is_empty(), "Alt+C is not typed");
    assert!(app.mouse_capture);
    press(&mut app, KeyCode::F(2));
    assert!(!app.mouse_capture);
    press(&mut app, KeyCode::F(2));
    assert!(app.mouse_capture);
}

#[test]
fn a_dialog_that_opens_mid_typing_ignores_the_keys_in_flight() {
    let (mut app, mut rx) = connected();
    typed(&mut app, "no wa");
    app.on_agent_event(crate::agent::AgentEvent::ApprovalRequested(request("bash", None)));
    press(&mut app, KeyCode::Char('y'));
    assert!(sent(&mut rx).is_empty(), "a y typed for the prompt does not approve");
    assert_eq!(app.approvals.len(), 1);
    app.now += std::time::Duration::from_millis(700);
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(sent(&mut rx), [UserCommand::Approval { id: 7, decision: ApprovalDecision::Approve }]);
}
