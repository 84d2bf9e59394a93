//! The tests' door into the app: a fixture builder that sets what no key or event sets (the
//! overlay, the phase, the figures), and shared scenes — a finished conversation, an approval,
//! a loaded session list — drawn on `TestBackend` for the snapshot and style tests.

#![cfg(test)]

use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Phase};
use crate::agent::{
    AgentEvent, ApprovalRequest, CompactionEvent, CompactionTrigger, ContextReport, ContextStatus, TurnOutcome,
    TurnStats, TurnSummary, UserCommand,
};
use crate::context::BudgetLevel;
use crate::conversation::{Block, FinishedCall, Message, ToolCall, Usage};
use crate::store::{MemoryRecord, SessionSummary};
use crate::tui::completion::FileIndex;
use crate::tui::overlays::Overlay;
use crate::tui::theme::Theme;

pub const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

impl App {
    pub(crate) fn set_overlay(&mut self, overlay: Option<Overlay>) {
        self.overlay = overlay;
    }

    pub(crate) fn set_context(&mut self, status: ContextStatus) {
        self.session.context = Some(status);
    }

    pub(crate) fn set_files(&mut self, files: FileIndex) {
        self.files = files;
    }

    pub(crate) fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    pub(crate) fn clear_flash(&mut self) {
        self.flash = None;
    }
}

/// Connected, in a project, on a known model with context figures: as after start-up.
pub fn app() -> App {
    app_with(Theme::fallback(false))
}

/// [`app`] in `theme`.
pub fn app_with(theme: Theme) -> App {
    let mut app = App::new(theme, FileIndex::default());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<UserCommand>();
    std::mem::forget(rx);
    app.connect(tx);
    app.session.project_root = "/home/dev/projects/shop".into();
    app.session.model = "claude-sonnet-4-5".into();
    app.session.window = 200_000;
    app.session.context = Some(ContextStatus {
        tokens: 96_400,
        window: 200_000,
        level: BudgetLevel::Ok,
        compacting: false,
        cache_hit_rate: Some(0.87),
        cost_usd: None,
    });
    app
}

pub fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| crate::tui::render::draw(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

pub fn text(buf: &Buffer) -> String {
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

pub fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

pub fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

pub const ANSWER: &str = "## What I found\n\nThe checkout total is computed **twice**: once in `cart.rs` and once in the\ntemplate. The template's copy ignores *discounts*.\n\n1. Remove the template's computation.\n2. Pass `total` from `Cart::total()`.\n   - keep the currency formatting\n\n```rust\npub fn total(&self) -> Money {\n    self.items.iter().map(|i| i.price * i.qty).sum::<Money>() - self.discount\n}\n```\n\n> Discounts were added in March; the template predates them.\n\n| file | change |\n|---|---|\n| cart.rs | none |\n| checkout.html | use `total` |";

pub const EDIT_DIFF: &str = "--- a/src/cart.rs\n+++ b/src/cart.rs\n@@ -10,6 +10,7 @@ impl Cart {\n     pub fn total(&self) -> Money {\n-        self.items.iter().map(|i| i.price).sum()\n+        let gross: Money = self.items.iter().map(|i| i.price * i.qty).sum();\n+        gross - self.discount\n     }\n \n     pub fn is_empty(&self) -> bool {\n";

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
    AgentEvent::ToolFinished(FinishedCall {
        call_id: id.into(),
        tool: tool.into(),
        summary: summary.into(),
        content: content.into(),
        is_error: error,
        exit_code: if tool == "bash" { Some(if error { 101 } else { 0 }) } else { None },
        diff: diff.map(String::from),
        duration: Duration::from_millis(ms),
        not_run: false,
        decided_by: None,
        approval: None,
        by_user: false,
        ..Default::default()
    })
}

/// A finished exchange with markdown, tool calls of every outcome, an edit and notices.
pub fn conversation() -> App {
    conversation_on(app())
}

/// [`conversation`] on `app`.
pub fn conversation_on(mut app: App) -> App {
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

pub fn approval(diff: Option<&str>, tool: &str, summary: &str, args: &str) -> App {
    approval_on(conversation(), diff, tool, summary, args)
}

/// [`approval`] after the conversation `app` holds.
pub fn approval_on(mut app: App, diff: Option<&str>, tool: &str, summary: &str, args: &str) -> App {
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "apply it".into() });
    app.on_agent_event(call("c9", tool, args).into_event());
    app.on_agent_event(AgentEvent::ApprovalRequested(ApprovalRequest {
        id: 3,
        call_id: "c9".into(),
        tool: tool.into(),
        summary: summary.into(),
        arguments: args.into(),
        reason: if diff.is_some() {
            format!("changes {summary}")
        } else {
            "only `cargo tree` and `cargo --version` are read-only".into()
        },
        diff: diff.map(String::from),
        asked_by: "mode: edit".into(),
        exact: vec![if tool == "bash" {
            "bash(cargo test --all-features -- --nocapture)".into()
        } else {
            format!("{tool}(./{summary})")
        }],
        prefix: vec![if tool == "bash" { "bash(cargo test *)".into() } else { format!("{tool}(src/)") }],
        kind: crate::agent::ApprovalKind::Call,
        agent: None,
        task: None,
    }));
    app
}

pub fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-20T12:00:00Z").unwrap().with_timezone(&chrono::Utc)
}

/// A session as the agent announces it: untitled, in edit mode, on model `m`.
pub fn session_info(id: &str) -> crate::store::SessionInfo {
    crate::store::SessionInfo {
        id: id.into(),
        project: crate::store::ProjectId(1),
        title: String::new(),
        provider: crate::config::ProviderKind::Anthropic,
        model: "m".into(),
        mode: crate::conversation::Mode::Edit,
        created_at: String::new(),
        updated_at: String::new(),
    }
}

/// A new session, empty, ready on screen.
pub fn new_session_ready(id: &str) -> AgentEvent {
    AgentEvent::SessionReady {
        session: session_info(id),
        resumed: false,
        history: Vec::new(),
        tool_display: Default::default(),
        mode: crate::conversation::Mode::Edit,
        model: "m".into(),
        window: 200_000,
        recap: Default::default(),
    }
}

pub fn summary(id: &str, title: &str, ago: &str, count: u64, tokens: u64, last: &str) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        title: title.into(),
        started_at: "2026-11-18T09:00:00Z".into(),
        last_active_at: ago.into(),
        message_count: count,
        tokens,
        model: "claude-sonnet-4-5".into(),
        mode: crate::conversation::Mode::Edit,
        last_message: last.into(),
        parent: None,
        agent_type: None,
    }
}

pub fn memory(id: i64, title: &str, pinned: bool, kind: &str) -> MemoryRecord {
    MemoryRecord {
        id,
        kind: crate::conversation::MemoryKind::parse(kind).unwrap(),
        class: crate::conversation::RetentionClass::Durable,
        pinned,
        title: title.into(),
        content: format!("{title}.\nDecided with the user on 12 November; applies to every crate in the workspace."),
        global: false,
        session_id: None,
        created_at: "2026-11-12T10:00:00Z".into(),
        updated_at: "2026-11-12T10:00:00Z".into(),
        expires_at: None,
        approved_by: None,
        quarantined: None,
    }
}
