use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc;

use super::*;
use crate::agent::{ApprovalDecision, ApprovalRequest};
use crate::conversation::Mode;
use crate::tui::app::fixture::session_info;
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
    assert_eq!(app.agent.pending, ["next please"]);
    assert_eq!(sent(&mut rx), [UserCommand::Submit("next please".into())]);
}

#[test]
fn shift_tab_cycles_modes_through_the_agent() {
    let (mut app, mut rx) = connected();
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.session.mode, Mode::Plan);
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.session.mode, Mode::Ask);
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
        quarantined: None,
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
    assert_eq!(app.terminal.clipboard, None);
    assert_eq!(app.flash_text(), Some("no answer to copy yet"));
    app.on_agent_event(crate::agent::AgentEvent::TurnStarted { prompt: "q".into() });
    app.on_agent_event(crate::agent::AgentEvent::TextDelta("the **answer**".into()));
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::ALT));
    assert_eq!(app.terminal.clipboard.as_deref(), Some("the **answer**"));
    assert!(app.composer.is_empty(), "Alt+C is not typed");
    assert!(app.terminal.mouse_capture);
    press(&mut app, KeyCode::F(2));
    assert!(!app.terminal.mouse_capture);
    press(&mut app, KeyCode::F(2));
    assert!(app.terminal.mouse_capture);
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

#[test]
fn one_enter_from_the_list_opens_the_model_and_session_pickers() {
    use crate::agent::LibraryRequest;
    let (mut app, mut rx) = connected();
    typed(&mut app, "/mod");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay, Some(Overlay::Models(_))), "/model opens its picker at once");
    assert_eq!(sent(&mut rx), [UserCommand::ListModels]);
    press(&mut app, KeyCode::Esc);
    typed(&mut app, "/res");
    press(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay, Some(Overlay::Sessions(_))), "/resume opens its picker at once");
    assert_eq!(sent(&mut rx), [UserCommand::Library(LibraryRequest::Sessions)]);
}

#[test]
fn the_model_picker_switches_to_the_chosen_model() {
    use crate::agent::{AgentEvent, ModelChoice, ModelList};
    let (mut app, mut rx) = connected();
    app.composer.set_text("/model");
    app.composer.completion = None;
    press(&mut app, KeyCode::Enter);
    let choice = |name: &str, listed| ModelChoice {
        name: name.into(),
        window: 200_000,
        window_assumed: false,
        prices: crate::config::price_of(name, &Default::default()),
        listed,
    };
    app.on_agent_event(AgentEvent::Models(ModelList {
        current: "claude-sonnet-4-5".into(),
        models: vec![choice("mock-model", true), choice("claude-sonnet-4-5", false), choice("claude-haiku-4-5", false)],
        provider_error: None,
        local_server: None,
    }));
    sent(&mut rx);
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay.is_none());
    assert_eq!(app.flash_text(), Some("that is the model in use"), "the current model is selected first");
    app.composer.set_text("/model");
    app.composer.completion = None;
    press(&mut app, KeyCode::Enter);
    app.on_agent_event(AgentEvent::Models(ModelList {
        current: "claude-sonnet-4-5".into(),
        models: vec![choice("claude-sonnet-4-5", false), choice("claude-haiku-4-5", false)],
        provider_error: Some("offline".into()),
        local_server: None,
    }));
    sent(&mut rx);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::SetModel("claude-haiku-4-5".into())]);
    app.on_agent_event(AgentEvent::ModelRefused { name: "gpt-9".into(), known: vec!["claude-haiku-4-5".into()] });
    let last = app.transcript.cells().last().map(|c| c.search_text()).unwrap_or_default();
    assert!(last.contains("no model \"gpt-9\"") && last.contains("claude-haiku-4-5"), "{last}");
}

#[test]
fn ctrl_u_deletes_to_the_line_start_instead_of_undoing() {
    let (mut app, _rx) = connected();
    typed(&mut app, "keep this");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "drop this");
    ctrl(&mut app, 'u');
    assert_eq!(app.composer.text(), "keep this\n");
    ctrl(&mut app, 'z');
    assert_eq!(app.composer.text(), "keep this\ndrop this");
}

#[test]
fn ctrl_r_searches_earlier_prompts_and_enter_takes_the_match() {
    let (mut app, mut rx) = connected();
    for p in ["cargo test cart", "explain the build", "cargo clippy"] {
        typed(&mut app, p);
        press(&mut app, KeyCode::Enter);
    }
    sent(&mut rx);
    ctrl(&mut app, 'r');
    typed(&mut app, "cargo");
    assert_eq!(app.composer.text(), "cargo clippy");
    ctrl(&mut app, 'r');
    assert_eq!(app.composer.text(), "cargo test cart");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.composer.text(), "cargo test cart", "Enter takes it into the prompt");
    assert!(sent(&mut rx).is_empty(), "without sending it");
    assert!(app.composer.history_search().is_none());
    ctrl(&mut app, 'r');
    typed(&mut app, "build");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.composer.text(), "cargo test cart", "Esc puts back what was there");
}

fn long_transcript(app: &mut App) {
    for i in 0..40 {
        app.on_agent_event(crate::agent::AgentEvent::TurnStarted { prompt: format!("question {i}") });
        app.on_agent_event(crate::agent::AgentEvent::TextDelta(format!("answer number {i}")));
        app.on_agent_event(crate::agent::AgentEvent::TurnFinished(crate::agent::TurnSummary {
            outcome: crate::agent::TurnOutcome::Completed { text: String::new() },
            stats: Default::default(),
        }));
    }
}

#[test]
fn ctrl_f_finds_text_in_the_transcript_and_jumps_between_matches() {
    let (mut app, _rx) = connected();
    long_transcript(&mut app);
    crate::tui::app::fixture::draw(&app, 80, 24);
    ctrl(&mut app, 'f');
    typed(&mut app, "answer number 1");
    let bar = app.search.clone().unwrap();
    assert_eq!(bar.hits.len(), 11, "1 and 10–19");
    let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, 80, 24));
    assert!(screen.contains("answer number 19") && screen.contains("11 of 11"), "{screen}");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, 80, 24));
    assert!(screen.contains("answer number 17") && screen.contains("9 of 11"), "{screen}");
    press(&mut app, KeyCode::Esc);
    assert!(app.search.is_none() && !app.transcript.is_following(), "closing stays where it is");
    // Scrolled back, `/` searches too; at the tail it starts a command.
    press(&mut app, KeyCode::Char('/'));
    assert!(app.search.is_some());
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('/'));
    assert!(app.search.is_none());
    assert_eq!(app.composer.text(), "/");
}

#[test]
fn alt_o_opens_the_whole_output_of_the_newest_tool_call_and_slash_searches_it() {
    use crate::agent::{AgentEvent, LibraryAnswer, LibraryRequest};
    use crate::conversation::FinishedCall;
    let (mut app, mut rx) = connected();
    app.on_agent_event(AgentEvent::SessionStored(session_info("abc")));
    app.on_agent_event(AgentEvent::ToolFinished(FinishedCall {
        call_id: "c1".into(),
        tool: "bash".into(),
        summary: "$ cargo test".into(),
        content: "shortened".into(),
        is_error: false,
        exit_code: Some(0),
        diff: None,
        duration: std::time::Duration::from_millis(5),
        not_run: false,
        decided_by: None,
        approval: None,
        by_user: false,
        ..Default::default()
    }));
    crate::tui::app::fixture::draw(&app, 80, 24);
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::ALT));
    assert_eq!(
        sent(&mut rx),
        [UserCommand::Library(LibraryRequest::ToolOutput { session: "abc".into(), call_id: "c1".into() })]
    );
    let whole: String = (1..=300).map(|i| format!("test case_{i} ... ok\n")).collect();
    app.on_agent_event(AgentEvent::Library(LibraryAnswer::ToolOutput { call_id: "c1".into(), output: Ok(whole) }));
    let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, 80, 24));
    assert!(screen.contains("test case_1 ...") && screen.contains("of 300 rows"), "{screen}");
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "case_250 ");
    let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, 80, 24));
    assert!(screen.contains("test case_250 ... ok") && screen.contains("1 of 1"), "{screen}");
    press(&mut app, KeyCode::Esc);
    assert!(matches!(app.overlay, Some(Overlay::Text(_))), "Esc closes the search first");
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay.is_none());
}

#[test]
fn a_finished_plan_is_carried_out_in_edit_mode_with_one_key() {
    use crate::agent::{AgentEvent, TurnOutcome, TurnSummary};
    let (mut app, mut rx) = connected();
    app.on_agent_event(AgentEvent::ModeChanged(Mode::Plan));
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "plan the fix".into() });
    let plan = "1. Change cart.rs\n2. Add a test";
    app.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Completed { text: plan.into() },
        stats: Default::default(),
    }));
    let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, 80, 24));
    assert!(screen.contains("plan ready · Enter carry it out in edit mode"), "{screen}");
    // At any width whole hints are left out, never one cut mid-word.
    for (width, shown, gone) in [(120, "Ctrl+G edit it first", ""), (100, "Esc or type to keep planning", "Ctrl+G")] {
        let screen = crate::tui::app::fixture::text(&crate::tui::app::fixture::draw(&app, width, 24));
        let line = screen.lines().find(|l| l.contains("plan ready")).unwrap_or_default();
        assert!(line.contains(shown) && !line.contains('…'), "{width}: {line}");
        assert!(gone.is_empty() || !line.contains(gone), "{width}: {line}");
    }
    // Typing refines the plan instead; the offer comes back when the prompt is empty.
    typed(&mut app, "x");
    assert!(app.plan_ready().is_none());
    ctrl(&mut app, 'u');
    assert!(app.plan_ready().is_some());
    ctrl(&mut app, 'g');
    assert_eq!(app.take_editor_request().as_deref(), Some(plan), "the plan opens in the editor");
    app.editor_returned(Ok("1. Change cart.rs only".into()));
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [UserCommand::CarryOutPlan { edited: Some("1. Change cart.rs only".into()) }]);
    assert_eq!(app.session.mode, Mode::Edit);
    assert!(app.plan.ready.is_none());
    // An answer in edit mode is no plan.
    app.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Completed { text: "done".into() },
        stats: Default::default(),
    }));
    assert!(app.plan.ready.is_none());
}
