//! Every widget and view of the full-screen interface, drawn on ratatui's `TestBackend` at
//! 80×24 and 120×40 and compared with reviewed snapshots (`tests/it/snapshots/`). Snapshots
//! hold text; the style checks at the end compare cells of the buffer.

use std::sync::Arc;
use std::time::Duration;

use cairn::agent::{
    AgentEvent, ApprovalRequest, CacheReport, CompactionEvent, CompactionTrigger, ContextBreakdown, ContextPart,
    ContextReport, ContextStatus, ToolFinished, TurnOutcome, TurnStats, TurnSummary, UserCommand,
};
use cairn::context::{BudgetLevel, ContextBudget};
use cairn::conversation::{Block, Message, Mode, ToolCall, Usage};
use cairn::store::{MemoryRecord, SessionSummary, Store};
use cairn::tui::app::Phase;
use cairn::tui::completion::FileIndex;
use cairn::tui::overlays::{ContextView, HelpView, MemoriesView, Overlay, SessionsView};
use cairn::tui::{App, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn app() -> App {
    let mut app = App::new(Theme::fallback(false), FileIndex::default());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<UserCommand>();
    std::mem::forget(rx);
    app.connect(tx);
    app.project_root = "/home/dev/projects/shop".into();
    app.model = "claude-sonnet-4-5".into();
    app.window = 200_000;
    app.context = Some(ContextStatus {
        tokens: 96_400,
        window: 200_000,
        level: BudgetLevel::Ok,
        compacting: false,
        cache_hit_rate: Some(0.87),
    });
    app
}

fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| cairn::tui::render::draw(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn snapshot(name: &str, app: &App) {
    for (w, h) in SIZES {
        let buf = draw(app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), text(&buf));
    }
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

const ANSWER: &str = "## What I found\n\nThe checkout total is computed **twice**: once in `cart.rs` and once in the\ntemplate. The template's copy ignores *discounts*.\n\n1. Remove the template's computation.\n2. Pass `total` from `Cart::total()`.\n   - keep the currency formatting\n\n```rust\npub fn total(&self) -> Money {\n    self.items.iter().map(|i| i.price * i.qty).sum::<Money>() - self.discount\n}\n```\n\n> Discounts were added in March; the template predates them.\n\n| file | change |\n|---|---|\n| cart.rs | none |\n| checkout.html | use `total` |";

const EDIT_DIFF: &str = "--- a/src/cart.rs\n+++ b/src/cart.rs\n@@ -10,6 +10,7 @@ impl Cart {\n     pub fn total(&self) -> Money {\n-        self.items.iter().map(|i| i.price).sum()\n+        let gross: Money = self.items.iter().map(|i| i.price * i.qty).sum();\n+        gross - self.discount\n     }\n \n     pub fn is_empty(&self) -> bool {\n";

fn call(id: &str, tool: &str, args: &str) -> Message {
    let mut m = Message::assistant("");
    m.content.push(Block::ToolCall(ToolCall::new(id, tool, args)));
    m
}

fn finished(
    id: &str,
    tool: &str,
    summary: &str,
    content: &str,
    error: bool,
    diff: Option<&str>,
    ms: u64,
) -> AgentEvent {
    AgentEvent::ToolFinished(ToolFinished {
        call_id: id.into(),
        tool: tool.into(),
        summary: summary.into(),
        content: content.into(),
        is_error: error,
        exit_code: if tool == "bash" { Some(if error { 101 } else { 0 }) } else { None },
        diff: diff.map(String::from),
        duration: Duration::from_millis(ms),
        not_run: false,
    })
}

/// A finished exchange with markdown, tool calls of every outcome, an edit and notices.
fn conversation() -> App {
    let mut app = app();
    let ev = |app: &mut App, e| app.on_agent_event(e);
    ev(&mut app, AgentEvent::TurnStarted { prompt: "why is the checkout total wrong?".into() });
    ev(&mut app, call("c1", "grep", r#"{"pattern":"fn total"}"#).into_event());
    ev(
        &mut app,
        AgentEvent::ToolStarted {
            call_id: "c1".into(),
            tool: "grep".into(),
            summary: "fn total".into(),
            arguments: "{}".into(),
        },
    );
    ev(&mut app, finished("c1", "grep", "fn total", "src/cart.rs:10: pub fn total", false, None, 41));
    ev(&mut app, call("c2", "bash", r#"{"command":"cargo test cart"}"#).into_event());
    ev(
        &mut app,
        finished(
            "c2",
            "bash",
            "$ cargo test cart",
            "error[E0308]: mismatched types\n  --> src/cart.rs:11:9\n   |\n11 |         self.items.iter().map(|i| i.price).sum()\n   |         ^^^^ expected `Money`, found `u64`\n\nerror: could not compile `shop`",
            true,
            None,
            3_240,
        ),
    );
    ev(&mut app, AgentEvent::TextDelta(ANSWER.into()));
    ev(&mut app, AgentEvent::AssistantMessage(Message::assistant(ANSWER)));
    ev(&mut app, AgentEvent::Usage { usage: Usage::default(), context: ContextReport::default() });
    ev(&mut app, call("c3", "file_edit", r#"{"path":"src/cart.rs"}"#).into_event());
    ev(&mut app, finished("c3", "file_edit", "src/cart.rs", "edited", false, Some(EDIT_DIFF), 12));
    ev(
        &mut app,
        AgentEvent::Compaction(CompactionEvent::Finished {
            trigger: CompactionTrigger::Auto,
            tokens_before: 171_000,
            tokens_after: 38_500,
            summary_tokens: 5_200,
        }),
    );
    ev(
        &mut app,
        AgentEvent::TurnFinished(TurnSummary {
            outcome: TurnOutcome::Completed { text: String::new() },
            stats: TurnStats {
                requests: 3,
                all_requests: 3,
                usage: Usage {
                    input_tokens: 9_000,
                    output_tokens: 812,
                    cache_read_input_tokens: 60_000,
                    cache_creation_input_tokens: 0,
                },
                ..TurnStats::default()
            },
        }),
    );
    app
}

trait IntoEvent {
    fn into_event(self) -> AgentEvent;
}

impl IntoEvent for Message {
    fn into_event(self) -> AgentEvent {
        AgentEvent::AssistantMessage(self)
    }
}

#[test]
fn welcome_screen() {
    let mut app = app();
    app.session = None;
    snapshot("welcome", &app);
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

fn approval(diff: Option<&str>, tool: &str, summary: &str, args: &str) -> App {
    let mut app = conversation();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "apply it".into() });
    app.on_agent_event(call("c9", tool, args).into_event());
    app.on_agent_event(AgentEvent::ApprovalRequested(ApprovalRequest {
        id: 3,
        call_id: "c9".into(),
        tool: tool.into(),
        summary: summary.into(),
        reason: if diff.is_some() { "changes a file".into() } else { "runs a command".into() },
        diff: diff.map(String::from),
    }));
    app
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
    app.files = FileIndex::from_files(vec![
        "src/cart.rs".into(),
        "src/checkout/mod.rs".into(),
        "src/checkout/total.rs".into(),
        "templates/checkout.html".into(),
        "README.md".into(),
    ]);
    typed(&mut app, "compare @chk");
    snapshot("completion_files", &app);
}

#[test]
fn help_view() {
    let mut app = conversation();
    app.overlay = Some(Overlay::Help(HelpView::default()));
    snapshot("help", &app);
}

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-20T12:00:00Z").unwrap().with_timezone(&chrono::Utc)
}

fn summary(id: &str, title: &str, ago: &str, count: u64, tokens: u64, last: &str) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        title: title.into(),
        started_at: "2026-11-18T09:00:00Z".into(),
        last_active_at: ago.into(),
        message_count: count,
        tokens,
        model: "claude-sonnet-4-5".into(),
        mode: "edit".into(),
        last_message: last.into(),
    }
}

#[test]
fn sessions_picker() {
    let mut app = conversation();
    app.overlay = Some(Overlay::Sessions(SessionsView {
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
    }));
    snapshot("sessions", &app);
}

fn memory(id: i64, title: &str, pinned: bool, kind: &str) -> MemoryRecord {
    MemoryRecord {
        id,
        kind: kind.into(),
        class: "durable".into(),
        pinned,
        title: title.into(),
        content: format!("{title}.\nDecided with the user on 12 November; applies to every crate in the workspace."),
        global: false,
        session_id: None,
        created_at: "2026-11-12T10:00:00Z".into(),
        updated_at: "2026-11-12T10:00:00Z".into(),
        expires_at: None,
    }
}

#[test]
fn memories_view_empty_and_full() {
    let mut app = conversation();
    app.overlay = Some(Overlay::Memories(MemoriesView {
        items: Vec::new(),
        selected: 0,
        viewing: false,
        confirm_delete: None,
        now: now(),
        error: None,
    }));
    snapshot("memories_empty", &app);
    app.overlay = Some(Overlay::Memories(MemoriesView {
        items: vec![
            memory(1, "Money is integer cents, never floats", true, "decision"),
            memory(2, "The user prefers small commits", false, "user"),
            memory(3, "Tests run with cargo nextest", false, "project"),
        ],
        selected: 0,
        viewing: false,
        confirm_delete: Some(1),
        now: now(),
        error: None,
    }));
    snapshot("memories", &app);
}

#[test]
fn context_view() {
    let mut app = conversation();
    let budget = ContextBudget::new(200_000, &cairn::config::ContextConfig::default());
    app.overlay = Some(Overlay::Context(ContextView {
        breakdown: Some(ContextBreakdown {
            parts: vec![
                ContextPart { name: "system prompt".into(), tokens: 3_100 },
                ContextPart { name: "tools".into(), tokens: 2_400 },
                ContextPart { name: "memories".into(), tokens: 900 },
                ContextPart { name: "summary".into(), tokens: 5_200 },
                ContextPart { name: "messages".into(), tokens: 84_800 },
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
            },
        }),
    }));
    snapshot("context", &app);
}

#[test]
fn context_view_while_waiting() {
    let mut app = conversation();
    app.overlay = Some(Overlay::Context(ContextView { breakdown: None }));
    snapshot("context_loading", &app);
}

#[test]
fn setup_screen() {
    let mut app = app();
    app.phase = Phase::Setup {
        message: "no model provider is configured. Set one of:\n  ANTHROPIC_API_KEY=…              Anthropic (Claude)\n  OPENAI_API_KEY=…                 OpenAI\n  OPENAI_BASE_URL=http://HOST/v1   any OpenAI-compatible server (OpenRouter, vLLM, LM Studio, …)\nor start Ollama (127.0.0.1:11434) or llama-server (127.0.0.1:8080), which cairn finds by itself.\nprovider, model and base_url can also go in /home/dev/.config/cairn/config.toml. `cairn doctor` shows what cairn sees.".into(),
    };
    snapshot("setup", &app);
}

#[test]
fn status_line_states() {
    let mut app = conversation();
    app.context = Some(ContextStatus {
        tokens: 171_000,
        window: 200_000,
        level: BudgetLevel::Compact,
        compacting: true,
        cache_hit_rate: None,
    });
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Started {
        trigger: CompactionTrigger::Auto,
        tokens_before: 171_000,
    }));
    app.on_agent_event(AgentEvent::Compaction(CompactionEvent::Progress { chunk: 2, chunks: 3 }));
    app.on_agent_event(AgentEvent::ModeChanged(Mode::Plan));
    snapshot("status_compacting_plan", &app);
    app.context = Some(ContextStatus {
        tokens: 196_000,
        window: 200_000,
        level: BudgetLevel::Blocking,
        compacting: false,
        cache_hit_rate: Some(0.4),
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
    app.flash = None;
    snapshot("expanded", &app);
}

// ---- styles: what the text snapshots cannot show ----

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
        app.context =
            Some(ContextStatus { tokens: 96_400, window: 200_000, level, compacting: false, cache_hit_rate: None });
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

    let mut plain = approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}");
    plain.set_theme(Theme::fallback(true));
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
fn a_store_backed_memories_view_opens_from_the_command() {
    let mut app = app();
    let store = Arc::new(Store::open_in_memory().unwrap());
    let project = store.project(std::path::Path::new("/p")).unwrap();
    app.store = Some((store, project));
    typed(&mut app, "/memories");
    key(&mut app, KeyCode::Enter);
    let t = text(&draw(&app, 120, 40));
    assert!(t.contains("No memories yet — cairn saves them when you ask it to remember something"), "{t}");
}

#[test]
fn every_view_draws_at_any_size_down_to_one_cell() {
    let mut views: Vec<App> = vec![conversation(), approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", "{}")];
    let mut setup = app();
    setup.phase = Phase::Setup { message: "no model provider is configured.\n  ANTHROPIC_API_KEY=…".into() };
    views.push(setup);
    let mut empty = app();
    empty.session = None;
    views.push(empty);
    for overlay in 0..3 {
        let mut v = conversation();
        v.overlay = Some(match overlay {
            0 => Overlay::Context(ContextView { breakdown: None }),
            1 => Overlay::Sessions(SessionsView {
                items: vec![summary("a", "t", "2026-11-20T11:58:00Z", 1, 1, "x")],
                selected: 0,
                current: None,
                now: now(),
                error: None,
            }),
            _ => Overlay::Memories(MemoriesView {
                items: vec![memory(1, "m", false, "user")],
                selected: 0,
                viewing: true,
                confirm_delete: None,
                now: now(),
                error: None,
            }),
        });
        views.push(v);
    }
    let mut with_help = conversation();
    with_help.overlay = Some(Overlay::Help(HelpView::default()));
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
