//! Every widget and view of the full-screen interface, drawn on ratatui's `TestBackend` at
//! 80×24 and 120×40 and compared with reviewed snapshots (`snapshots/` beside this file). The
//! scenes are in `app/fixture.rs`; colours and sizes are checked in `render_style_tests.rs`.

use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::agent::{
    AgentEvent, CacheReport, CompactionEvent, CompactionTrigger, ContextBreakdown, ContextPart, ContextReport,
    ContextStatus, CostReport, InstructionFilesReport, SegmentInfo, SkippedFile, TurnOutcome, TurnStats, TurnSummary,
};
use crate::context::{BudgetLevel, ContextBudget};
use crate::conversation::{Mode, Usage};
use crate::store::MemoryRecord;
use crate::tui::app::fixture::*;
use crate::tui::app::{App, Phase};
use crate::tui::completion::FileIndex;
use crate::tui::overlays::{ContextView, HelpView, MemoriesView, Overlay, SessionsView};

fn snapshot(name: &str, app: &App) {
    for (w, h) in SIZES {
        let buf = draw(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text(&buf));
    }
}

#[test]
fn welcome_screen() {
    snapshot("welcome", &app());
}

#[test]
fn conversation_with_markdown_tools_diff_and_notices() {
    snapshot("conversation", &conversation());
}

#[test]
fn streaming_with_a_queued_prompt_and_the_spinner() {
    let mut app = conversation();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "now add a test".into() });
    app.on_agent_event(AgentEvent::TextDelta(
        "I'll add a test for the discount case:\n\n```rust\n#[test]\nfn discount_".into(),
    ));
    app.on_agent_event(AgentEvent::Queued { prompt: "and run clippy afterwards".into() });
    typed(&mut app, "also update the changelog");
    snapshot("streaming", &app);
}

#[test]
fn interrupted_answer_and_retry_notice() {
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "explain the build".into() });
    app.on_agent_event(AgentEvent::TextDelta("The build has three st".into()));
    app.on_agent_event(AgentEvent::Retrying {
        attempt: 2,
        max_attempts: 8,
        delay: Duration::from_secs(2),
        reason: "the provider is overloaded (529)".into(),
    });
    app.on_agent_event(AgentEvent::TextDelta("The build has three stages: fetch, comp".into()));
    app.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Interrupted { partial: "The build has three stages: fetch, comp".into() },
        stats: TurnStats::default(),
    }));
    snapshot("interrupted", &app);
}

#[test]
fn approval_of_an_edit_unified() {
    snapshot("approval_edit", &approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", r#"{"path":"src/cart.rs"}"#));
}

#[test]
fn approval_of_an_edit_side_by_side() {
    let mut app = approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", r#"{"path":"src/cart.rs"}"#);
    key(&mut app, KeyCode::Char('d'));
    snapshot("approval_side_by_side", &app);
}

#[test]
fn approval_of_a_command_and_a_denial_reason() {
    let mut app =
        approval(None, "bash", "$ cargo test", r#"{"command":"cargo test --all-features \\\n  -- --nocapture"}"#);
    snapshot("approval_bash", &app);
    key(&mut app, KeyCode::Char('n'));
    typed(&mut app, "run only the cart tests");
    snapshot("approval_deny_reason", &app);
}

#[test]
fn command_completion() {
    let mut app = conversation();
    typed(&mut app, "/m");
    snapshot("completion_commands", &app);
}

#[test]
fn file_completion() {
    let mut app = conversation();
    app.set_files(FileIndex::from_files(vec![
        "src/cart.rs".into(),
        "src/checkout/mod.rs".into(),
        "src/checkout/total.rs".into(),
        "templates/checkout.html".into(),
        "README.md".into(),
    ]));
    typed(&mut app, "compare @chk");
    snapshot("completion_files", &app);
}

#[test]
fn help_view() {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Help(HelpView::default())));
    snapshot("help", &app);
}

#[test]
fn sessions_picker() {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Sessions(SessionsView {
        items: vec![
            summary(
                "3f9a2c71e0b4",
                "why is the checkout total wrong?",
                "2026-11-20T11:58:00Z",
                14,
                96_400,
                "The file is edited.",
            ),
            summary(
                "a1b2c3d4e5f6",
                "add pagination to the orders API",
                "2026-11-20T08:10:00Z",
                52,
                143_000,
                "All 48 tests pass; the cursor is opaque base64.",
            ),
            summary("0c0ffee00000", "", "2026-11-11T16:00:00Z", 0, 0, ""),
        ],
        selected: 1,
        current: Some("3f9a2c71e0b4".into()),
        now: now(),
        error: None,
        loading: false,
    })));
    snapshot("sessions", &app);
}

#[test]
fn memories_view_empty_and_full() {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Memories(MemoriesView {
        items: Vec::new(),
        selected: 0,
        viewing: false,
        confirm_delete: None,
        now: now(),
        error: None,
        loading: false,
    })));
    snapshot("memories_empty", &app);
    app.set_overlay(Some(Overlay::Memories(MemoriesView {
        items: vec![
            memory(1, "Money is integer cents, never floats", true, "decision"),
            MemoryRecord { global: true, ..memory(2, "The user prefers small commits", false, "user") },
            memory(3, "Tests run with cargo nextest", false, "project"),
        ],
        selected: 0,
        viewing: false,
        confirm_delete: Some(1),
        now: now(),
        error: None,
        loading: false,
    })));
    snapshot("memories", &app);
}

/// A long session's breakdown, estimated throughout.
fn context_breakdown() -> ContextBreakdown {
    let budget = ContextBudget::new(200_000, &crate::config::ContextConfig::default());
    ContextBreakdown {
        parts: vec![
            ContextPart { name: "system prompt".into(), tokens: 3_100, exact: false },
            ContextPart { name: "tools".into(), tokens: 2_400, exact: false },
            ContextPart { name: "memories".into(), tokens: 900, exact: false },
            ContextPart { name: "summary".into(), tokens: 5_200, exact: false },
            ContextPart { name: "messages".into(), tokens: 84_800, exact: false },
        ],
        total: 96_400,
        budget,
        level: BudgetLevel::Ok,
        counters: ContextReport {
            window: 200_000,
            truncations: 2,
            pruned_results: 5,
            compactions: 1,
            ..ContextReport::default()
        },
        cache: CacheReport {
            session_hit_rate: Some(0.82),
            last_request: Some(Usage {
                input_tokens: 1_200,
                output_tokens: 812,
                cache_read_input_tokens: 90_000,
                cache_creation_input_tokens: 5_200,
            }),
            breaks: vec!["turn 12: the tool list changed (a tool was added)".into()],
            keep_alive: Default::default(),
        },
        segments: vec![
            SegmentInfo { level: 1, first_seq: 1, last_seq: 240, tokens: 151_000, summarized: true, shown: false },
            SegmentInfo { level: 0, first_seq: 1, last_seq: 31, tokens: 14_800, summarized: true, shown: false },
            SegmentInfo { level: 0, first_seq: 32, last_seq: 70, tokens: 15_100, summarized: true, shown: false },
            SegmentInfo { level: 0, first_seq: 241, last_seq: 262, tokens: 12_300, summarized: false, shown: true },
        ],
        cost: CostReport { session_usd: Some(1.84), last_request_usd: Some(0.0421) },
        instruction_files: InstructionFilesReport {
            read: vec!["AGENTS.md".into()],
            skipped: vec![SkippedFile {
                path: "CLAUDE.md".into(),
                reason: "links outside the project (to /home/dev/.ssh/id_rsa); only files inside it are read".into(),
            }],
        },
    }
}

#[test]
fn context_view() {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Context(ContextView::new(Some(context_breakdown())))));
    snapshot("context", &app);
}

/// On a llama-server the parts its tokenizer counted are marked, and the note says so.
#[test]
fn context_view_counted() {
    let mut app = conversation();
    let mut breakdown = context_breakdown();
    breakdown.parts = vec![
        ContextPart { name: "system prompt".into(), tokens: 867, exact: true },
        ContextPart { name: "memories".into(), tokens: 0, exact: true },
        ContextPart { name: "tools".into(), tokens: 3_820, exact: true },
        ContextPart { name: "summary and carried instructions".into(), tokens: 0, exact: true },
        ContextPart { name: "messages".into(), tokens: 91_300, exact: true },
        ContextPart { name: "chat template and framing".into(), tokens: 413, exact: false },
    ];
    app.set_overlay(Some(Overlay::Context(ContextView::new(Some(breakdown)))));
    snapshot("context_counted", &app);
}

#[test]
fn context_view_while_waiting() {
    let mut app = conversation();
    app.set_overlay(Some(Overlay::Context(ContextView::new(None))));
    snapshot("context_loading", &app);
}

#[test]
fn setup_screen() {
    let mut app = app();
    app.set_phase(Phase::Setup {
        message: "no model provider is configured. Set one of:\n  ANTHROPIC_API_KEY=…              Anthropic (Claude)\n  OPENAI_API_KEY=…                 OpenAI\n  OPENAI_BASE_URL=http://HOST/v1   any OpenAI-compatible server (OpenRouter, vLLM, LM Studio, …)\nor start Ollama (127.0.0.1:11434) or llama-server (127.0.0.1:8080), which cairn finds by itself.\nprovider, model and base_url can also go in /home/dev/.config/cairn/config.toml. `cairn doctor` shows what cairn sees.".into(),
    });
    snapshot("setup", &app);
}

#[test]
fn status_line_states() {
    let mut app = conversation();
    app.set_context(ContextStatus {
        tokens: 171_000,
        window: 200_000,
        level: BudgetLevel::Compact,
        compacting: true,
        cache_hit_rate: None,
        cost_usd: None,
    });
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Started {
        trigger: CompactionTrigger::Auto,
        tokens_before: 171_000,
    }));
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Progress { chunk: 2, chunks: 3 }));
    app.on_agent_event(AgentEvent::ModeChanged(Mode::Plan));
    snapshot("status_compacting_plan", &app);
    app.set_context(ContextStatus {
        tokens: 196_000,
        window: 200_000,
        level: BudgetLevel::Blocking,
        compacting: false,
        cache_hit_rate: Some(0.4),
        cost_usd: None,
    });
    app.on_agent_event(AgentEvent::ModeChanged(Mode::Ask));
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    snapshot("status_blocking_ask_quit_armed", &app);
}

#[test]
fn scrolled_back_transcript() {
    let mut app = conversation();
    draw(&app, 80, 24);
    key(&mut app, KeyCode::PageUp);
    snapshot("scrolled", &app);
}

#[test]
fn expanded_tool_output() {
    let mut app = conversation();
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    app.clear_flash();
    snapshot("expanded", &app);
}

/// Two subagents of one message — one at work on its second call, one done with its report —
/// under the checklist panel of the agent's task list.
fn subagents_and_task_list() -> App {
    use crate::agent::{SubagentEvent, SubagentOutcome};
    use crate::conversation::FinishedCall;
    use crate::conversation::{Block, Message, Role, TaskItem, TaskList, TaskStatus, ToolCall};
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "where are parse_x and render_y used?".into() });
    let item = |id: &str, text: &str, status, parent: Option<&str>| TaskItem {
        id: id.into(),
        text: text.into(),
        status,
        parent: parent.map(String::from),
    };
    app.on_agent_event(AgentEvent::TaskList(TaskList {
        items: vec![
            item("1", "find the users of parse_x and render_y", TaskStatus::InProgress, None),
            item("1a", "parse_x", TaskStatus::Done, Some("1")),
            item("1b", "render_y", TaskStatus::InProgress, Some("1")),
            item("2", "report the call sites", TaskStatus::Pending, None),
        ],
    }));
    let args = |d: &str, p: &str| format!(r#"{{"description": "{d}", "prompt": "{p}", "agent_type": "explore"}}"#);
    let jobs = [
        ("t1", "find parse_x users", args("find parse_x users", "Find every use of parse_x; list path:line.")),
        ("t2", "find render_y users", args("find render_y users", "Find every use of render_y; list path:line.")),
    ];
    app.on_agent_event(AgentEvent::AssistantMessage(Message {
        role: Role::Assistant,
        content: jobs.iter().map(|(id, _, a)| Block::ToolCall(ToolCall::new(*id, "task", a.as_str()))).collect(),
    }));
    for (id, description, a) in &jobs {
        app.on_agent_event(AgentEvent::ToolStarted {
            call_id: (*id).into(),
            tool: "task".into(),
            summary: format!("explore: {description}"),
            arguments: a.clone(),
        });
        let started = SubagentEvent::Started {
            agent_type: "explore".into(),
            description: (*description).into(),
            session_id: format!("s-{id}"),
            model: "claude-haiku-4-5".into(),
            mode: Mode::Plan,
        };
        app.on_agent_event(AgentEvent::Subagent { call_id: (*id).into(), event: started });
    }
    let sub = |app: &mut App, id: &str, event| app.on_agent_event(AgentEvent::Subagent { call_id: id.into(), event });
    for (id, pattern) in [("t1", "parse_x"), ("t2", "render_y")] {
        sub(
            &mut app,
            id,
            SubagentEvent::ToolStarted { call_id: "g".into(), tool: "grep".into(), summary: pattern.into() },
        );
        let usage = Usage { input_tokens: 2_100, output_tokens: 60, ..Usage::default() };
        sub(&mut app, id, SubagentEvent::Usage { usage });
        sub(
            &mut app,
            id,
            SubagentEvent::ToolFinished {
                call_id: "g".into(),
                tool: "grep".into(),
                summary: pattern.into(),
                is_error: false,
                not_run: false,
            },
        );
    }
    sub(
        &mut app,
        "t2",
        SubagentEvent::ToolStarted { call_id: "r".into(), tool: "file_read".into(), summary: "src/view.rs".into() },
    );
    let report = "parse_x is used in src/input.rs:14 and src/cli/args.rs:88.";
    sub(
        &mut app,
        "t1",
        SubagentEvent::Finished {
            outcome: SubagentOutcome::Reported,
            report: report.into(),
            usage: Usage { input_tokens: 4_300, output_tokens: 140, ..Usage::default() },
            requests: 2,
        },
    );
    app.on_agent_event(AgentEvent::ToolFinished(FinishedCall {
        call_id: "t1".into(),
        tool: "task".into(),
        summary: "explore: find parse_x users".into(),
        content: report.into(),
        is_error: false,
        exit_code: None,
        diff: None,
        duration: Duration::from_millis(4_100),
        not_run: false,
        decided_by: None,
        approval: None,
        by_user: false,
        ..Default::default()
    }));
    app
}

#[test]
fn subagents_at_work_under_the_task_list() {
    snapshot("subagents", &subagents_and_task_list());
}

#[test]
fn an_expanded_subagent_shows_its_transcript_and_the_task_list_hides() {
    let mut app = subagents_and_task_list();
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    app.on_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    app.clear_flash();
    snapshot("subagents_expanded", &app);
}

#[test]
fn the_transcript_above_an_approval_ends_with_its_latest_line() {
    let mut long = conversation();
    for i in 0..30 {
        long.on_agent_event(AgentEvent::TurnStarted { prompt: format!("earlier question {i}") });
        long.on_agent_event(AgentEvent::TextDelta(format!("earlier answer {i}")));
        long.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
            outcome: TurnOutcome::Completed { text: String::new() },
            stats: TurnStats::default(),
        }));
    }
    let app = approval_on(long, None, "bash", "$ cargo test", r#"{"command":"cargo test"}"#);
    for (w, h) in SIZES {
        let screen = text(&draw(&app, w, h));
        let rows: Vec<&str> = screen.lines().collect();
        let top = rows.iter().position(|r| r.contains("Allow bash?")).expect("the dialog");
        assert!(rows[top - 1].contains("bash  $ cargo test  waiting for your approval"), "{w}×{h}:\n{screen}");
        assert!(rows[..top].iter().any(|r| r.contains("› apply it")), "the prompt is in sight at {w}×{h}:\n{screen}");
    }
}
