use std::time::Duration;

use super::*;
use crate::agent::{ApprovalRequest, CompactionTrigger, ContextReport, ContextStatus, TurnStats};
use crate::context::BudgetLevel;
use crate::conversation::{Block, Message, Mode, ToolCall};
use crate::tui::app::fixture::{new_session_ready, session_info};
use crate::tui::completion::FileIndex;
use crate::tui::theme::Theme;

pub(crate) fn app() -> App {
    App::new(Theme::fallback(true), FileIndex::default())
}

pub(crate) fn texts(app: &App) -> Vec<String> {
    app.transcript
        .cells()
        .map(|c| match c {
            Cell::User(u) => format!("user: {}", u.text),
            Cell::Assistant(a) => {
                format!("assistant: {}{}", a.text.as_str(), if a.interrupted { " [interrupted]" } else { "" })
            }
            Cell::Tool(t) => format!("tool: {} {} {:?}", t.tool, t.summary, t.status),
            Cell::Subagent(s) => format!("subagent: {} {} {:?} {}", s.agent_type, s.description, s.status, s.report),
            Cell::Notice(n) => format!("notice {:?}: {}", n.kind, n.text),
            Cell::Changes(c) => format!("changes of {}: {} parts", c.title, c.parts.len()),
            Cell::Thinking(t) => format!("thinking: {}{}", t.text, if t.expanded { " [expanded]" } else { "" }),
        })
        .collect()
}

fn finished(outcome: TurnOutcome) -> AgentEvent {
    AgentEvent::TurnFinished(TurnSummary { outcome, stats: TurnStats::default() })
}

#[test]
fn streamed_text_grows_one_cell_and_the_stored_message_ends_it() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "hi".into() });
    assert!(app.turn.busy);
    assert_eq!(app.turn.activity, Activity::Thinking);
    app.on_agent_event(AgentEvent::TextDelta("Hel".into()));
    app.on_agent_event(AgentEvent::TextDelta("lo".into()));
    assert_eq!(app.turn.activity, Activity::Streaming);
    app.on_agent_event(AgentEvent::AssistantMessage(Message::assistant("Hello")));
    app.on_agent_event(finished(TurnOutcome::Completed { text: "Hello".into() }));
    assert_eq!(texts(&app), ["user: hi", "assistant: Hello"]);
    assert!(!app.turn.busy);
    assert!(matches!(app.transcript.get(1), Some(Cell::Assistant(a)) if !a.streaming));
}

#[test]
fn a_retry_discards_the_failed_attempts_text_and_says_why() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "hi".into() });
    app.on_agent_event(AgentEvent::TextDelta("partial that will be vo".into()));
    app.on_agent_event(AgentEvent::ToolCallStreaming { call_id: "c1".into(), tool: "bash".into() });
    app.on_agent_event(AgentEvent::Retrying {
        attempt: 2,
        max_attempts: 8,
        delay: Duration::from_secs(2),
        reason: "overloaded (529)".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta("Fresh answer".into()));
    let t = texts(&app);
    assert_eq!(t[0], "user: hi");
    assert_eq!(t[1], "notice Retry: overloaded (529) — retrying in 2.0s (attempt 2 of 8)");
    assert_eq!(t[2], "assistant: Fresh answer");
    assert_eq!(t.len(), 3);
    assert!(matches!(app.turn.activity, Activity::Streaming));
}

#[test]
fn a_tool_call_goes_from_preparing_to_approval_to_done() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "edit".into() });
    app.on_agent_event(AgentEvent::TextDelta("I'll edit.".into()));
    app.on_agent_event(AgentEvent::ToolCallStreaming { call_id: "c1".into(), tool: "file_edit".into() });
    let mut msg = Message::assistant("I'll edit.");
    msg.content.push(Block::ToolCall(ToolCall::new("c1", "file_edit", r#"{"path":"a.txt"}"#)));
    app.on_agent_event(AgentEvent::AssistantMessage(msg));
    assert_eq!(texts(&app)[1..], ["assistant: I'll edit.", "tool: file_edit a.txt Preparing"]);
    app.on_agent_event(AgentEvent::ApprovalRequested(ApprovalRequest {
        id: 1,
        call_id: "c1".into(),
        tool: "file_edit".into(),
        summary: "a.txt".into(),
        arguments: r#"{"path":"a.txt"}"#.into(),
        reason: "changes a.txt".into(),
        diff: Some("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n".into()),
        asked_by: "mode: edit".into(),
        exact: vec!["file_edit(./a.txt)".into()],
        prefix: Vec::new(),
        kind: crate::agent::ApprovalKind::Call,
        agent: None,
        task: None,
    }));
    assert_eq!(app.approvals.len(), 1);
    assert_eq!(app.turn.activity, Activity::Approval("file_edit".into()));
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "file_edit".into(),
        summary: "a.txt".into(),
        arguments: "{}".into(),
    });
    app.on_agent_event(AgentEvent::ToolFinished(FinishedCall {
        call_id: "c1".into(),
        tool: "file_edit".into(),
        summary: "a.txt".into(),
        content: "edited".into(),
        is_error: false,
        exit_code: None,
        diff: Some("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n".into()),
        duration: Duration::from_millis(12),
        not_run: false,
        decided_by: Some("user".into()),
        approval: Some("approved by you for this session: file_edit(./a.txt)".into()),
        by_user: false,
        ..Default::default()
    }));
    assert!(app.approvals.is_empty(), "a finished call's dialog is gone");
    match app.transcript.get(2) {
        Some(Cell::Tool(t)) => {
            assert_eq!(
                t.status,
                ToolStatus::Done { is_error: false, exit_code: None, duration: Duration::from_millis(12) }
            );
            assert!(t.diff.is_some());
            assert_eq!(t.approval.as_deref(), Some("approved by you for this session: file_edit(./a.txt)"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_call_to_an_unknown_tool_keeps_the_summary_from_its_arguments() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "edit".into() });
    let mut msg = Message::assistant("");
    msg.content.push(Block::ToolCall(ToolCall::new("c1", "edit", r#"{"path":"main.rs"}"#)));
    app.on_agent_event(AgentEvent::AssistantMessage(msg));
    app.on_agent_event(AgentEvent::ToolFinished(FinishedCall {
        call_id: "c1".into(),
        tool: "edit".into(),
        summary: "edit".into(),
        content: "There is no tool named `edit`.".into(),
        is_error: true,
        exit_code: None,
        diff: None,
        duration: Duration::ZERO,
        not_run: true,
        decided_by: None,
        approval: None,
        by_user: false,
        ..Default::default()
    }));
    assert_eq!(texts(&app)[1..], ["tool: edit main.rs NotRun"]);
}

#[test]
fn an_interrupt_marks_the_partial_answer() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "long".into() });
    app.on_agent_event(AgentEvent::TextDelta("Half an ans".into()));
    app.on_agent_event(finished(TurnOutcome::Interrupted { partial: "Half an ans".into() }));
    assert_eq!(texts(&app), ["user: long", "assistant: Half an ans [interrupted]"]);
    assert_eq!(app.turn.activity, Activity::Idle);
}

#[test]
fn the_last_turns_status_message_does_not_stay_into_the_next() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "first".into() });
    app.flash("approved; for this session: bash(cargo test *)");
    app.on_agent_event(finished(TurnOutcome::Completed { text: String::new() }));
    assert!(app.flash_text().is_some(), "said at the end of the turn, it is still read");
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "second".into() });
    assert_eq!(app.flash_text(), None, "the next turn's status line is its own");
}

#[test]
fn work_under_way_is_said_until_its_notice_answers_it() {
    let mut app = app();
    app.flash("stopping background command 1…");
    let answer = crate::agent::BackgroundAnswer::Stopped(Err("background command 1 already ended (exited 1)".into()));
    app.on_agent_event(AgentEvent::Background(answer));
    assert_eq!(app.flash_text(), None, "the notice answers it");
    app.flash("writing the session report…");
    app.on_agent_event(AgentEvent::ReportWritten(Ok("/tmp/report.html".into())));
    assert_eq!(app.flash_text(), None, "the notice answers it");
    app.flash("copied the last answer (12 characters)");
    app.on_agent_event(AgentEvent::ReportWritten(Ok("/tmp/report.html".into())));
    assert!(app.flash_text().is_some(), "a newer message stays");
}

#[test]
fn queued_prompts_are_listed_until_their_turn_starts() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "first".into() });
    app.on_agent_event(AgentEvent::Queued { prompt: "second".into() });
    assert_eq!(app.agent.pending, ["second"]);
    app.on_agent_event(finished(TurnOutcome::Completed { text: String::new() }));
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "second".into() });
    assert!(app.agent.pending.is_empty());
    assert_eq!(texts(&app), ["user: first", "user: second"]);
}

#[test]
fn failures_and_compaction_become_notices_with_figures() {
    let mut app = app();
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Started {
        trigger: CompactionTrigger::Manual,
        tokens_before: 150_000,
    }));
    assert!(app.turn.compacting.is_some());
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Progress { chunk: 2, chunks: 5 }));
    assert_eq!(app.turn.activity, Activity::Compacting { chunk: Some((2, 5)) });
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Finished {
        trigger: CompactionTrigger::Manual,
        tokens_before: 150_000,
        tokens_after: 32_400,
        summary_tokens: 4_100,
    }));
    assert!(app.turn.compacting.is_none());
    app.on_agent_event(finished(TurnOutcome::Failed { error: "the provider is unreachable".into() }));
    let t = texts(&app);
    assert_eq!(t[0], "notice Compaction: compacting 150k tokens (/compact) — you can keep working");
    assert_eq!(t[1], "notice Compaction: compacted: 150k → 32k tokens (summary 4.1k, /compact)");
    assert_eq!(t[2], "notice Error: the provider is unreachable");
}

#[test]
fn a_resumed_session_shows_its_history_with_tool_results() {
    let mut app = app();
    let mut assistant = Message::assistant("Looking.");
    assistant.content.push(Block::ToolCall(ToolCall::new("c1", "bash", r#"{"command":"ls"}"#)));
    let history = vec![
        Message::user("what is here?"),
        assistant,
        Message::tool(crate::conversation::ToolResult::error("c1", "bash", "boom")),
        Message::assistant("Partial\n\n[interrupted by the user]"),
    ];
    let session = crate::store::SessionInfo {
        id: "abc123".into(),
        project: crate::store::ProjectId(1),
        title: "what is here?".into(),
        provider: crate::config::ProviderKind::Anthropic,
        model: "m".into(),
        mode: Mode::Plan,
        created_at: String::new(),
        updated_at: String::new(),
    };
    app.on_agent_event(AgentEvent::SessionReady {
        session,
        resumed: true,
        history: history.into_iter().map(std::sync::Arc::new).collect(),
        tool_display: [(
            "c1".to_string(),
            crate::store::ToolDisplay {
                diff: None,
                duration_ms: 1_200,
                not_run: false,
                decided_by: Some("allowed: read-only command".into()),
                summary: None,
            },
        )]
        .into(),
        mode: Mode::Plan,
        model: "m".into(),
        window: 200_000,
        recap: Default::default(),
    });
    let t = texts(&app);
    assert_eq!(t[0], "user: what is here?");
    assert_eq!(t[1], "assistant: Looking.");
    assert!(t[2].starts_with("tool: bash ls Done { is_error: true"), "{}", t[2]);
    assert!(t[2].contains("duration: 1.2s"), "the call's duration comes with the session: {}", t[2]);
    assert_eq!(t[3], "assistant: Partial [interrupted]");
    assert_eq!(t[4], "notice Info: resumed session abc123 · what is here? · 4 messages");
    assert_eq!(app.session.mode, Mode::Plan);
    assert!(app.composer.history_prev(), "the session's prompts are in the history");
    assert_eq!(app.composer.text(), "what is here?");
}

#[test]
fn the_context_status_is_kept_as_reported() {
    let mut app = app();
    let status = ContextStatus {
        tokens: 96_000,
        window: 200_000,
        level: BudgetLevel::Ok,
        compacting: false,
        cache_hit_rate: Some(0.5),
        cost_usd: None,
    };
    app.on_agent_event(AgentEvent::Context(status));
    assert_eq!(app.session.context, Some(status));
}

#[test]
fn each_pipeline_stage_becomes_a_notice_saying_what_it_did() {
    let mut app = app();
    let stage = |stage, count, detail: &str| AgentEvent::ContextStage(cairn_stage(stage, count, detail));
    app.on_agent_event(AgentEvent::Usage { usage: Default::default(), context: ContextReport::default() });
    app.on_agent_event(stage(crate::context::Stage::Truncation, 1, "1 tool output cut to head and tail"));
    app.on_agent_event(stage(crate::context::Stage::Prune, 5, "cleared 5 old tool outputs (−21k tokens)"));
    assert_eq!(
        texts(&app),
        ["notice Info: 1 tool output cut to head and tail", "notice Info: cleared 5 old tool outputs (−21k tokens)"]
    );
}

fn cairn_stage(stage: crate::context::Stage, count: u64, detail: &str) -> crate::context::StageReport {
    crate::context::StageReport { stage, count, saved_tokens: 0, detail: detail.into() }
}

#[test]
fn retries_update_one_notice_in_place_and_it_ends_with_the_outcome() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "hi".into() });
    for attempt in 2..=4 {
        app.on_agent_event(AgentEvent::Retrying {
            attempt,
            max_attempts: 8,
            delay: Duration::from_secs(2),
            reason: "overloaded (529)".into(),
        });
        app.on_agent_event(AgentEvent::TextDelta("partial".into()));
    }
    let notices: Vec<String> = texts(&app).into_iter().filter(|t| t.starts_with("notice Retry")).collect();
    assert_eq!(notices, ["notice Retry: overloaded (529) — retrying in 2.0s (attempt 4 of 8)"]);
    app.on_agent_event(AgentEvent::AssistantMessage(Message::assistant("partial")));
    let t = texts(&app);
    assert_eq!(t[1], "notice Retry: overloaded (529) — answered on attempt 4");
    assert_eq!(t.iter().filter(|l| l.starts_with("assistant")).count(), 1, "void attempts leave nothing");
    app.on_agent_event(AgentEvent::Retrying {
        attempt: 2,
        max_attempts: 2,
        delay: Duration::from_secs(1),
        reason: "HTTP 500".into(),
    });
    app.on_agent_event(finished(TurnOutcome::Failed { error: "the provider failed".into() }));
    assert!(texts(&app).contains(&"notice Retry: HTTP 500 — gave up after 2 attempts".to_string()));
}

#[test]
fn a_resumed_session_shows_the_cells_the_live_one_did() {
    use crate::agent::{HistoryMark, HistoryRecap};
    let mut call = Message::assistant("");
    call.content.push(Block::ToolCall(ToolCall::new("c1", "grep", r#"{"pattern":"fn total","path":"src"}"#)));
    call.content.push(Block::ToolCall(ToolCall::new("c2", "bash", r#"{"command":"cargo test"}"#)));
    let history = vec![
        Message {
            role: crate::conversation::Role::User,
            content: vec![
                Block::Text { text: "why? @src/cart.rs".into() },
                Block::Text {
                    text: "<attachment path=\"src/cart.rs\" detail=\"12 lines\" how=\"x\">\n…\n</attachment>".into(),
                },
            ],
        },
        call,
        Message::tool(crate::conversation::ToolResult::ok("c1", "grep", "src/cart.rs:10: fn total")),
        Message::tool(crate::conversation::ToolResult::ok("c2", "bash", "ok")),
        Message::assistant("Found it."),
    ];
    let stats = TurnStats {
        requests: 2,
        all_requests: 2,
        usage: crate::conversation::Usage { input_tokens: 1_000, output_tokens: 50, ..Default::default() },
        cost_usd: Some(0.0042),
        ..TurnStats::default()
    };
    let recap = HistoryRecap {
        summaries: [("c1".to_string(), "fn total in src".to_string()), ("c2".to_string(), "$ cargo test".to_string())]
            .into(),
        marks: vec![(4, HistoryMark::TurnEnd { elapsed: Duration::from_millis(3_400), stats })],
        subagents: Default::default(),
    };
    let mut app = app();
    app.on_agent_event(AgentEvent::SessionReady {
        session: crate::store::SessionInfo {
            id: "abc".into(),
            project: crate::store::ProjectId(1),
            title: "why?".into(),
            provider: crate::config::ProviderKind::Anthropic,
            model: "m".into(),
            mode: Mode::Edit,
            created_at: String::new(),
            updated_at: String::new(),
        },
        resumed: true,
        history: history.into_iter().map(std::sync::Arc::new).collect(),
        tool_display: Default::default(),
        mode: Mode::Edit,
        model: "m".into(),
        window: 200_000,
        recap,
    });
    let t = texts(&app);
    assert_eq!(t[0], "user: why? @src/cart.rs", "the attachment is not shown as prompt text");
    assert!(t[1].starts_with("tool: grep fn total in src Done"), "{}", t[1]);
    assert!(t[2].starts_with("tool: bash $ cargo test Done"), "{}", t[2]);
    assert_eq!(t[4], "notice TurnEnd: 3.4s · 2 requests · 1k in · 50 out · $0.0042");
    let Some(Cell::User(user)) = app.transcript.get(0) else { panic!() };
    assert_eq!(user.attachments[0].path, "src/cart.rs");
    assert!(app.stored_session().is_some(), "a resumed session is stored");
}

#[test]
fn a_new_session_is_named_at_exit_only_once_it_is_stored() {
    let mut app = app();
    app.on_agent_event(new_session_ready("draft1"));
    assert!(app.stored_session().is_none());
    app.on_agent_event(AgentEvent::SessionStored(session_info("draft1")));
    assert_eq!(app.stored_session().map(|s| s.id.as_str()), Some("draft1"));
}

#[test]
fn a_warning_given_before_the_first_session_stays_and_a_switch_clears_the_screen() {
    let mut app = app();
    app.notice(NoticeKind::Warning, "keys.toml line 3: bad; using the default keys");
    app.on_agent_event(new_session_ready("first"));
    assert_eq!(texts(&app), ["notice Warning: keys.toml line 3: bad; using the default keys"]);
    app.notice(NoticeKind::Info, "said in the first session");
    app.on_agent_event(new_session_ready("second"));
    assert!(texts(&app).is_empty(), "{:?}", texts(&app));
}

#[test]
fn an_approval_and_a_long_turn_ring_or_notify_as_configured() {
    let mut app = app();
    app.set_notifications(crate::config::NotifyConfig {
        method: crate::config::NotifyMethod::Osc9,
        after_secs: 5,
        approvals: true,
    });
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "hi".into() });
    app.on_agent_event(AgentEvent::ApprovalRequested(ApprovalRequest {
        id: 1,
        call_id: "c1".into(),
        tool: "bash".into(),
        summary: "$ ls".into(),
        arguments: "{}".into(),
        reason: "runs a command".into(),
        diff: None,
        asked_by: "mode: edit".into(),
        exact: vec!["bash(ls)".into()],
        prefix: Vec::new(),
        kind: crate::agent::ApprovalKind::Call,
        agent: None,
        task: None,
    }));
    assert_eq!(app.take_notification().as_deref(), Some("\x1b]9;cairn: bash waits for your approval\x1b\\"));
    assert_eq!(app.take_notification(), None, "once");
    app.now += Duration::from_secs(2);
    app.on_agent_event(finished(TurnOutcome::Completed { text: "quick".into() }));
    assert_eq!(app.take_notification(), None, "a short turn ends quietly");
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "long".into() });
    app.now += Duration::from_secs(6);
    app.on_agent_event(finished(TurnOutcome::Completed { text: "slow".into() }));
    assert_eq!(app.take_notification().as_deref(), Some("\x1b]9;cairn: the turn is done\x1b\\"));
    app.set_notifications(crate::config::NotifyConfig::default());
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "long".into() });
    app.now += Duration::from_secs(60);
    app.on_agent_event(finished(TurnOutcome::Completed { text: "slow".into() }));
    assert_eq!(app.take_notification().as_deref(), Some("\x07"), "the bell by default");
}

#[test]
fn the_turn_summary_says_what_the_turn_cost() {
    let stats = TurnStats {
        all_requests: 1,
        usage: crate::conversation::Usage {
            input_tokens: 200,
            cache_read_input_tokens: 800,
            output_tokens: 20,
            ..Default::default()
        },
        cost_usd: Some(0.42),
        ..TurnStats::default()
    };
    assert_eq!(
        crate::tui::app::history::turn_summary_text(Some(Duration::from_millis(1_500)), &stats),
        "1.5s · 1 request · 1k in · 20 out · 80% cached · $0.42"
    );
    assert_eq!(
        crate::tui::app::history::turn_summary_text(None, &TurnStats { cost_usd: None, ..stats }),
        "1 request · 1k in · 20 out · 80% cached"
    );
}

#[test]
fn thinking_streams_into_one_collapsed_cell_above_the_answer_and_expands_on_ctrl_o() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "why?".into() });
    app.on_agent_event(AgentEvent::ThinkingDelta("Check the ".into()));
    app.on_agent_event(AgentEvent::ThinkingDelta("fixture.".into()));
    app.on_agent_event(AgentEvent::TextDelta("It is the fixture.".into()));
    let mut msg = Message::assistant("It is the fixture.");
    msg.content.insert(
        0,
        Block::Thinking(crate::conversation::Thinking {
            source: crate::conversation::ThinkingSource::Anthropic,
            model: "m".into(),
            text: "Check the fixture.".into(),
            signature: "s".into(),
            redacted: false,
            id: None,
            summary: Vec::new(),
        }),
    );
    app.on_agent_event(AgentEvent::AssistantMessage(msg.clone()));
    assert_eq!(texts(&app), ["user: why?", "thinking: Check the fixture.", "assistant: It is the fixture."]);
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert_eq!(texts(&app)[1], "thinking: Check the fixture. [expanded]");
    // A resumed session shows the stored thinking the same way.
    let mut resumed = app_resumed(vec![Message::user("why?"), msg]);
    assert_eq!(texts(&resumed)[1], "thinking: Check the fixture.");
    resumed.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert_eq!(texts(&resumed)[1], "thinking: Check the fixture. [expanded]");
}

fn app_resumed(history: Vec<Message>) -> App {
    let mut app = app();
    let session = crate::store::SessionInfo {
        id: "abc123".into(),
        project: crate::store::ProjectId(1),
        title: "t".into(),
        provider: crate::config::ProviderKind::Anthropic,
        model: "m".into(),
        mode: Mode::Edit,
        created_at: String::new(),
        updated_at: String::new(),
    };
    app.on_agent_event(AgentEvent::SessionReady {
        session,
        resumed: true,
        history: history.into_iter().map(std::sync::Arc::new).collect(),
        tool_display: Default::default(),
        mode: Mode::Edit,
        model: "m".into(),
        window: 200_000,
        recap: Default::default(),
    });
    app
}
