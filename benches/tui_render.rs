//! The interface's render path on a long session: 2,000 messages, about 5 MB of text, drawn on
//! ratatui's `TestBackend` through the same `render::draw` the terminal uses.
//!
//! `cargo bench --bench tui_render` first prints a percentile table (median, p99, max over many
//! frames, what the acceptance asks for), then runs the same scenarios under criterion.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cairn::agent::AgentEvent;
use cairn::conversation::{Block, Message, Mode, ToolCall, ToolResult};
use cairn::store::{ProjectId, SessionInfo};
use criterion::Criterion;

use cairn::tui::{App, FileIndex, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const MESSAGES: usize = 2_000;
const TARGET_BYTES: usize = 5_000_000;

/// A markdown answer of about `bytes` bytes: prose, a list, a code block.
fn answer(i: usize, bytes: usize) -> String {
    let mut s = format!("## Step {i}\n\nI looked at the **module** and the `tests`; here is what changes:\n\n");
    s.push_str("- the parser keeps its state between calls\n- errors carry the line number\n\n```rust\n");
    while s.len() < bytes.saturating_sub(200) {
        s.push_str("fn handle(input: &str) -> Result<Output, Error> { parse(input).map(Output::from) }\n");
        s.push_str("The function above is called for every line; it allocates only when the line is long.\n");
    }
    s.push_str("```\n\nThat is the whole change; the tests pass.");
    s
}

/// 2,000 stored messages (prompts, answers, tool calls and results) adding up to ~5 MB.
fn history() -> Vec<Message> {
    let mut out = Vec::with_capacity(MESSAGES);
    let per_answer = TARGET_BYTES / (MESSAGES / 4);
    let mut i = 0;
    while out.len() < MESSAGES {
        out.push(Message::user(format!("prompt {i}: please look at src/module_{i}.rs and fix the failing test")));
        let mut call = Message::assistant("Reading it.");
        call.content.push(Block::ToolCall(ToolCall::new(
            format!("c{i}"),
            "file_read",
            format!("{{\"path\":\"src/module_{i}.rs\"}}"),
        )));
        out.push(call);
        out.push(Message::tool(ToolResult::ok(format!("c{i}"), "file_read", "     1\tfn main() {}\n".repeat(20))));
        out.push(Message::assistant(answer(i, per_answer)));
        i += 1;
    }
    out
}

fn loaded_app(history: &[Message]) -> App {
    let mut app = App::new(Theme::fallback(false), FileIndex::default());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::mem::forget(rx);
    app.connect(tx);
    app.on_agent_event(AgentEvent::SessionReady {
        session: SessionInfo {
            id: "bench".into(),
            project: ProjectId(1),
            title: "bench".into(),
            provider: cairn::config::ProviderKind::Anthropic,
            model: "claude-sonnet-4-5".into(),
            mode: Mode::Edit,
            created_at: String::new(),
            updated_at: String::new(),
        },
        resumed: true,
        history: history.iter().cloned().map(std::sync::Arc::new).collect(),
        tool_display: Default::default(),
        mode: Mode::Edit,
        model: "claude-sonnet-4-5".into(),
        window: 200_000,
        recap: Default::default(),
    });
    app
}

struct Bench {
    app: App,
    terminal: Terminal<TestBackend>,
}

impl Bench {
    fn new(history: &[Message], w: u16, h: u16) -> Bench {
        let app = loaded_app(history);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
        terminal.draw(|f| cairn::tui::draw(&app, f)).expect("a frame");
        Bench { app, terminal }
    }

    fn frame(&mut self) {
        let app = &self.app;
        self.terminal.draw(|f| cairn::tui::draw(app, f)).expect("a frame");
    }

    /// One key, then the frame that shows it.
    fn keystroke(&mut self, n: usize) {
        let code = if n.is_multiple_of(2) { KeyCode::Char('x') } else { KeyCode::Backspace };
        self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        self.frame();
    }

    /// A streamed token, then the frame that shows it.
    fn delta(&mut self, n: usize) {
        if n == 0 {
            self.app.on_agent_event(AgentEvent::TurnStarted { prompt: "one more".into() });
        }
        let token = if n % 40 == 39 { "\n\n".to_string() } else { format!("word{n} ") };
        self.app.on_agent_event(AgentEvent::TextDelta(token));
        self.frame();
    }

    /// A page up (laying out cells not seen before), then the frame.
    fn page_up(&mut self) {
        self.app.on_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
        self.frame();
    }
}

fn percentiles(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<44} n={:<5} median {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms",
        samples.len(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3
    );
}

fn timed(n: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    (0..n)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect()
}

fn report(history: &[Message]) {
    let bytes: usize = history.iter().map(|m| m.char_len()).sum();
    println!("transcript: {} messages, {:.1} MB of text", history.len(), bytes as f64 / 1e6);
    for (w, h) in [(120u16, 40u16), (200, 60)] {
        let start = Instant::now();
        let mut b = Bench::new(history, w, h);
        println!("\n{w}x{h}: load the session and draw the first frame: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
        percentiles("frame render (steady, at the tail)", timed(2_000, |_| b.frame()));
        percentiles("keystroke to frame", timed(2_000, |i| b.keystroke(i)));
        percentiles("streamed delta to frame (one growing answer)", timed(2_000, |i| b.delta(i)));
        let mut b = Bench::new(history, w, h);
        percentiles("page up to frame (cold cells)", timed(1_000, |_| b.page_up()));
    }
    println!();
}

fn main() {
    let history = history();
    report(&history);

    // The same scenarios under criterion, at 120×40.
    let mut c = Criterion::default().configure_from_args().sample_size(50);
    let mut b = Bench::new(&history, 120, 40);
    c.bench_function("frame render", |bench| bench.iter(|| b.frame()));
    let mut n = 0;
    c.bench_function("keystroke to frame", |bench| {
        bench.iter(|| {
            b.keystroke(n);
            n += 1;
        })
    });
    let mut b = Bench::new(&history, 120, 40);
    let mut n = 0;
    c.bench_function("streamed delta to frame", |bench| {
        bench.iter(|| {
            b.delta(n);
            n += 1;
        })
    });
    c.bench_function("session load and first frame", |bench| bench.iter(|| black_box(Bench::new(&history, 120, 40))));
    c.final_summary();
}
