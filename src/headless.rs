//! Headless mode: one prompt (or slash command) through the same agent as the TUI, printed as
//! text, one JSON object, or a stream of JSON lines (docs/INTERFACE.md, "Headless output").

use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;
use serde_json::json;

use crate::agent::{
    AgentEvent, AgentHandle, ContextReport, LibraryAnswer, LibraryError, LibraryRequest, SlashCommand, TurnOutcome,
    TurnSummary, UserCommand, parse_shell, parse_slash_with,
};
use crate::conversation::Usage;

/// The final object of `--output-format json`, and the last line of `stream-json`.
#[derive(Debug, Serialize)]
pub struct HeadlessResult {
    /// `"result"` on the last line of stream-json; absent in the json format.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub session_id: String,
    pub result: String,
    pub is_error: bool,
    pub turns: u32,
    pub mode: String,
    pub model: String,
    pub usage: UsageReport,
    pub context: ContextReport,
    pub denied_tool_calls: u32,
    /// Added to docs/INTERFACE.md's shape: the run's prompt-cache figures.
    pub cache: crate::agent::CacheStats,
    /// The run's cost in dollars at the model catalog's prices, auxiliary calls included;
    /// `null` for models without a price.
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Default, Serialize)]
pub struct UsageReport {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub requests: u32,
}

impl UsageReport {
    fn new(usage: &Usage, requests: u32) -> UsageReport {
        UsageReport {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            requests,
        }
    }
}

/// How a headless run prints (`--output-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// Why a headless run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// The prompt asked for something that cannot be done (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The run failed (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl From<LibraryError> for HeadlessError {
    fn from(e: LibraryError) -> Self {
        match e {
            LibraryError::Input(message) => HeadlessError::Usage(message),
            LibraryError::Failed(message) => HeadlessError::Failed(message),
        }
    }
}

/// What the prompt asks the agent to do.
enum Work {
    Command(UserCommand),
    /// Answered without the agent (help); printed as the result.
    Answer(String),
}

/// The event that answers a command at once, for commands that run no turn.
fn answer_of(event: &AgentEvent) -> Option<Result<String, HeadlessError>> {
    Some(match event {
        AgentEvent::ModeChanged(m) => Ok(format!("mode is now {m}")),
        AgentEvent::ModelChanged { model, window } => Ok(format!("model is now {model} ({window} tokens)")),
        AgentEvent::ModelRefused { name, known } => {
            Err(HeadlessError::Usage(format!("there is no model {name:?}; choose one of: {}", known.join(", "))))
        }
        AgentEvent::Models(list) => pretty(list),
        AgentEvent::Library(LibraryAnswer::Usage(report)) => {
            report.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::ToolOutput { output, .. }) => output.clone().map_err(HeadlessError::from),
        AgentEvent::Library(LibraryAnswer::Sessions(list)) => {
            list.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::Memories(list)) => {
            list.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::MemoryChanged(done)) => done.clone().map_err(HeadlessError::from),
        // Servers still starting: wait for the panel that says how they ended up.
        AgentEvent::Mcp(panel) if panel.pending => return None,
        AgentEvent::Mcp(panel) => pretty(panel),
        AgentEvent::ContextBreakdown(breakdown) => pretty(breakdown),
        AgentEvent::Library(LibraryAnswer::Turns(list)) => list.clone().map_err(HeadlessError::from).and_then(pretty),
        AgentEvent::Library(LibraryAnswer::Diff(diff)) => match diff {
            Ok(d) if d.diff.is_empty() => Ok(format!("{}: no file changes", d.title)),
            Ok(d) => Ok(d.diff.trim_end().to_string()),
            Err(e) => Err(e.clone().into()),
        },
        // A rewind that left files as they were says so and fails: nothing is lost quietly.
        AgentEvent::Rewound(outcome) => match outcome {
            Ok(o) if o.complete() => Ok(o.lines().join("\n")),
            Ok(o) => Err(HeadlessError::Failed(o.lines().join("\n"))),
            Err(e) => Err(e.clone().into()),
        },
        AgentEvent::SessionReady { .. }
        | AgentEvent::SessionStored(_)
        | AgentEvent::Attached(_)
        | AgentEvent::Queued { .. }
        | AgentEvent::TurnStarted { .. }
        | AgentEvent::TextDelta(_)
        | AgentEvent::ThinkingDelta(_)
        | AgentEvent::ToolCallStreaming { .. }
        | AgentEvent::Retrying { .. }
        | AgentEvent::AssistantMessage(_)
        | AgentEvent::ToolStarted { .. }
        | AgentEvent::ApprovalRequested(_)
        | AgentEvent::ToolFinished(_)
        | AgentEvent::Usage { .. }
        | AgentEvent::Context(_)
        | AgentEvent::ContextStage(_)
        | AgentEvent::Compaction(_)
        | AgentEvent::Notice { .. }
        | AgentEvent::Commands(_)
        | AgentEvent::RewindPlanned(_)
        | AgentEvent::TurnFinished(_)
        | AgentEvent::Settled(_)
        | AgentEvent::Subagent { .. }
        | AgentEvent::Todo(_) => return None,
    })
}

/// A listing as `cairn sessions --json` and `cairn memories --json` print it.
fn pretty(list: impl Serialize) -> Result<String, HeadlessError> {
    serde_json::to_string_pretty(&list).map_err(|e| HeadlessError::Failed(e.to_string()))
}

/// The signals that stop a headless run: Ctrl+C, and the terminal closing (SIGHUP) or a
/// supervisor stopping it (SIGTERM). Each is handled the same way: the running tool's process
/// group is killed, what finished is stored, and the result is printed marked interrupted.
#[cfg(unix)]
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignals {
    fn listen() -> Result<StopSignals, HeadlessError> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| {
                HeadlessError::Failed(format!(
                    "cannot listen for {name} ({e}); without it a stop would lose the answer so far"
                ))
            })
        };
        Ok(StopSignals {
            interrupt: listen(SignalKind::interrupt(), "Ctrl+C")?,
            terminate: listen(SignalKind::terminate(), "SIGTERM")?,
            hangup: listen(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next stop signal's name.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "Ctrl+C",
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
        }
    }
}

#[cfg(windows)]
struct StopSignals(tokio::signal::windows::CtrlC);

#[cfg(windows)]
impl StopSignals {
    fn listen() -> Result<StopSignals, HeadlessError> {
        tokio::signal::windows::ctrl_c().map(StopSignals).map_err(|e| {
            HeadlessError::Failed(format!(
                "cannot listen for Ctrl+C ({e}); without it an interrupt would lose the answer so far"
            ))
        })
    }

    async fn recv(&mut self) -> &'static str {
        let _ = self.0.recv().await;
        "Ctrl+C"
    }
}

/// Run `prompt` (or its slash command) on the agent behind `handle` to the end, printing as
/// `format` says.
pub async fn run(mut handle: AgentHandle, prompt: String, format: OutputFormat) -> Result<ExitCode, HeadlessError> {
    let mut session_id = handle.session.id.clone();
    let mut mode = handle.session.mode.to_string();
    let mut model = handle.session.model.clone();
    let work = match (parse_shell(&prompt), parse_slash_with(&prompt, &handle.custom_commands)) {
        (Some(Ok(shell)), _) => Work::Command(shell),
        (Some(Err(message)), _) | (None, Some(Err(message))) => return Err(HeadlessError::Usage(message)),
        (None, Some(Ok(command))) => slash_work(command, &session_id, &handle.custom_commands)?,
        (None, None) => Work::Command(UserCommand::Submit(prompt)),
    };
    let mut printer = Printer::new(format);
    let command = match work {
        Work::Answer(text) => {
            let summary = TurnSummary { outcome: TurnOutcome::Completed { text }, stats: Default::default() };
            printer.finish(&session_id, &mode, &model, &summary)?;
            handle.shutdown().await;
            return Ok(ExitCode::SUCCESS);
        }
        Work::Command(command) => command,
    };
    // A mode or model switch and the library answer at once; say so and stop.
    let immediate = matches!(
        command,
        UserCommand::SetMode(_)
            | UserCommand::SetModel(_)
            | UserCommand::ListModels
            | UserCommand::Library(_)
            | UserCommand::Mcp(_)
            | UserCommand::DescribeContext
            | UserCommand::Undo
    );
    // Listening starts before the turn does and lasts the whole run, so no stop signal is
    // missed: one that lands while an event is being printed is held until the loop comes back.
    let mut stops = StopSignals::listen()?;
    let _ = handle.commands.send(command);
    let mut interrupted_once = false;
    // The turn's summary while its background work lands (answered by `Settled`).
    let mut unsettled: Option<TurnSummary> = None;
    loop {
        let event = tokio::select! {
            // Events first: what the worker said before it ended is printed before its end is.
            biased;
            event = handle.events.recv() => event,
            ended = handle.worker.ended() => {
                return Err(HeadlessError::Failed(format!(
                    "{ended}; the messages finished before it are stored (session {session_id}); the log in the data folder has details"
                )));
            }
            signal = stops.recv() => {
                if interrupted_once {
                    // Every completed message is already in the database; leave without waiting.
                    // The running command's group is killed as its task is dropped on the way out.
                    return Err(HeadlessError::Failed(format!(
                        "{signal} after an interrupt; stopped without waiting for the turn to wind down"
                    )));
                }
                interrupted_once = true;
                let _ = handle.commands.send(UserCommand::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            return Err(HeadlessError::Failed("the agent stopped unexpectedly; see the log in the data folder".into()));
        };
        if let AgentEvent::SessionReady { mode: m, model: name, .. } = &event {
            mode = m.to_string();
            model = name.clone();
        } else if let AgentEvent::SessionStored(info) = &event {
            session_id = info.id.clone();
        } else if let AgentEvent::ModeChanged(m) = &event {
            mode = m.to_string();
        } else if let AgentEvent::ModelChanged { model: m, .. } = &event {
            model = m.clone();
        }
        printer.event(&event)?;
        let summary = if let AgentEvent::TurnFinished(summary) = event {
            if immediate || interrupted_once {
                summary
            } else {
                // Background work (a compaction, memory extraction) may still be running: let it
                // land so the result counts every call of the run.
                let _ = handle.commands.send(UserCommand::Settle);
                unsettled = Some(summary);
                continue;
            }
        } else if let AgentEvent::Settled(later) = &event {
            let Some(mut summary) = unsettled.take() else { continue };
            summary.stats.absorb(later);
            summary
        } else if immediate {
            match answer_of(&event) {
                Some(Ok(text)) => TurnSummary { outcome: TurnOutcome::Completed { text }, stats: Default::default() },
                Some(Err(e)) => {
                    handle.shutdown().await;
                    return Err(e);
                }
                None => continue,
            }
        } else {
            continue;
        };
        printer.finish(&session_id, &mode, &model, &summary)?;
        handle.shutdown().await;
        return Ok(if summary.outcome.is_error() { ExitCode::from(1) } else { ExitCode::SUCCESS });
    }
}

fn slash_work(
    command: SlashCommand,
    session: &str,
    custom: &[crate::agent::CommandInfo],
) -> Result<Work, HeadlessError> {
    Ok(match command {
        SlashCommand::Compact => Work::Command(UserCommand::Compact),
        SlashCommand::Mode(m) => Work::Command(UserCommand::SetMode(m)),
        SlashCommand::Model(Some(name)) => Work::Command(UserCommand::SetModel(name)),
        SlashCommand::Model(None) => Work::Command(UserCommand::ListModels),
        SlashCommand::Usage => Work::Command(UserCommand::Library(LibraryRequest::Usage { days: 30 })),
        SlashCommand::Sessions => Work::Command(UserCommand::Library(LibraryRequest::Sessions)),
        SlashCommand::Memories => Work::Command(UserCommand::Library(LibraryRequest::Memories)),
        SlashCommand::Forget(id) => Work::Command(UserCommand::Library(LibraryRequest::Forget(id))),
        SlashCommand::Undo => Work::Command(UserCommand::Undo),
        SlashCommand::Diff(target) => {
            Work::Command(UserCommand::Library(LibraryRequest::Diff { session: session.to_string(), target }))
        }
        SlashCommand::Rewind => {
            return Err(HeadlessError::Usage(format!(
                "/rewind picks a turn in the interactive interface; headless, run `cairn rewind {session} --to TURN` (`cairn rewind {session}` lists the turns)"
            )));
        }
        SlashCommand::Help => Work::Answer(
            crate::agent::COMMANDS
                .iter()
                .map(|(n, a, h)| format!("{n} {a}  {h}"))
                .chain(custom.iter().map(|c| format!("{} {}  {}", c.name, c.argument_hint, c.description)))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        SlashCommand::Mcp(request) => Work::Command(UserCommand::Mcp(request)),
        SlashCommand::Custom { name, args } => Work::Command(UserCommand::RunCommand { name, args }),
        SlashCommand::Context => Work::Command(UserCommand::DescribeContext),
        SlashCommand::Resume(_) | SlashCommand::New | SlashCommand::Quit => {
            return Err(HeadlessError::Usage(
                "that command works in the interactive interface; headless runs take /compact, /context, /mode, /model, /usage, /sessions, /memories, /forget, /undo, /diff, /mcp, /help and the custom commands".into(),
            ));
        }
    })
}

struct Printer {
    format: OutputFormat,
    out: std::io::Stdout,
    /// Text output going to a terminal: escape sequences in the answer are removed, so the
    /// model cannot retitle the window, write the clipboard or clear the screen.
    strip_stdout: bool,
    /// The same for the notices on stderr.
    strip_stderr: bool,
}

/// A line on stderr. A closed terminal (after SIGHUP) makes the write fail; that loses only
/// this line, never the run's bookkeeping, so the error is ignored.
macro_rules! note {
    ($printer:expr, $($arg:tt)*) => {{
        let line = format!($($arg)*);
        let line = if $printer.strip_stderr { crate::conversation::strip_terminal_controls(&line) } else { line };
        let _ = writeln!(std::io::stderr(), "{line}");
    }};
}

impl Printer {
    fn new(format: OutputFormat) -> Printer {
        use std::io::IsTerminal;
        let text = format == OutputFormat::Text;
        Printer {
            format,
            out: std::io::stdout(),
            strip_stdout: text && std::io::stdout().is_terminal(),
            strip_stderr: text && std::io::stderr().is_terminal(),
        }
    }

    fn line(&mut self, value: serde_json::Value) -> Result<(), HeadlessError> {
        let mut out = self.out.lock();
        writeln!(out, "{value}").and_then(|()| out.flush()).map_err(write_failed)
    }

    fn event(&mut self, event: &AgentEvent) -> Result<(), HeadlessError> {
        match self.format {
            OutputFormat::Json => Ok(()),
            OutputFormat::Text => {
                match event {
                    AgentEvent::Retrying { attempt, max_attempts, delay, reason } => note!(
                        self,
                        "cairn: {reason}; retrying in {:.1}s (attempt {attempt}/{max_attempts})",
                        delay.as_secs_f64(),
                    ),
                    AgentEvent::Notice { text, .. } => note!(self, "cairn: {text}"),
                    AgentEvent::ContextStage(report) => note!(self, "cairn: {}", report.detail),
                    AgentEvent::Compaction(crate::agent::CompactionEvent::Finished {
                        tokens_before,
                        tokens_after,
                        ..
                    }) => {
                        note!(self, "cairn: compacted the conversation: {tokens_before} → {tokens_after} tokens")
                    }
                    AgentEvent::Compaction(crate::agent::CompactionEvent::Failed { error, .. }) => {
                        note!(self, "cairn: compaction failed: {error}")
                    }
                    // The rest is the result's business, or not a text reader's.
                    AgentEvent::Compaction(
                        crate::agent::CompactionEvent::Started { .. } | crate::agent::CompactionEvent::Progress { .. },
                    )
                    | AgentEvent::SessionReady { .. }
                    | AgentEvent::SessionStored(_)
                    | AgentEvent::Attached(_)
                    | AgentEvent::ModelRefused { .. }
                    | AgentEvent::Models(_)
                    | AgentEvent::Queued { .. }
                    | AgentEvent::TurnStarted { .. }
                    | AgentEvent::TextDelta(_)
                    | AgentEvent::ThinkingDelta(_)
                    | AgentEvent::ToolCallStreaming { .. }
                    | AgentEvent::AssistantMessage(_)
                    | AgentEvent::ToolStarted { .. }
                    | AgentEvent::ApprovalRequested(_)
                    | AgentEvent::ToolFinished(_)
                    | AgentEvent::Usage { .. }
                    | AgentEvent::Context(_)
                    | AgentEvent::ContextBreakdown(_)
                    | AgentEvent::ModeChanged(_)
                    | AgentEvent::ModelChanged { .. }
                    | AgentEvent::TurnFinished(_)
                    | AgentEvent::Settled(_)
                    | AgentEvent::Commands(_)
                    | AgentEvent::Mcp(_)
                    | AgentEvent::Library(_)
                    | AgentEvent::RewindPlanned(_)
                    | AgentEvent::Rewound(_)
                    | AgentEvent::Subagent { .. }
                    | AgentEvent::Todo(_) => {}
                }
                Ok(())
            }
            OutputFormat::StreamJson => match event {
                AgentEvent::TextDelta(text) => self.line(json!({"type": "assistant_delta", "text": text})),
                AgentEvent::ThinkingDelta(text) => self.line(json!({"type": "thinking_delta", "text": text})),
                AgentEvent::ToolStarted { call_id, tool, summary, arguments } => {
                    let arguments: serde_json::Value =
                        serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments));
                    self.line(json!({"type": "tool_call", "id": call_id, "name": tool, "summary": summary, "arguments": arguments}))
                }
                AgentEvent::ToolFinished(f) => self.line(json!({
                    "type": "tool_result", "id": f.call_id, "name": f.tool, "is_error": f.is_error,
                    "exit_code": f.exit_code, "not_run": f.not_run, "duration_ms": f.duration.as_millis() as u64,
                    "decided_by": f.decided_by, "approval": f.approval,
                    "content": f.content,
                })),
                AgentEvent::Usage { usage, context } => {
                    self.line(json!({"type": "context", "usage": usage, "context": context}))
                }
                AgentEvent::Retrying { attempt, max_attempts, delay, reason } => self.line(json!({
                    "type": "retry", "attempt": attempt, "max_attempts": max_attempts,
                    "delay_ms": delay.as_millis() as u64, "reason": reason,
                })),
                AgentEvent::Notice { level, text } => {
                    self.line(json!({"type": "notice", "level": level, "text": text}))
                }
                AgentEvent::Compaction(c) => {
                    let mut value = json!({"type": "compaction"});
                    if let (Some(line), serde_json::Value::Object(fields)) = (
                        value.as_object_mut(),
                        serde_json::to_value(c).map_err(|e| HeadlessError::Failed(e.to_string()))?,
                    ) {
                        line.extend(fields);
                    }
                    self.line(value)
                }
                AgentEvent::ContextStage(report) => {
                    let mut value = json!({"type": "context_stage"});
                    if let (Some(line), serde_json::Value::Object(fields)) = (
                        value.as_object_mut(),
                        serde_json::to_value(report).map_err(|e| HeadlessError::Failed(e.to_string()))?,
                    ) {
                        line.extend(fields);
                    }
                    self.line(value)
                }
                AgentEvent::Rewound(Ok(outcome)) => self.line(json!({"type": "rewind", "outcome": outcome})),
                AgentEvent::Todo(list) => {
                    let c = list.counts();
                    self.line(json!({
                        "type": "todo", "items": list.items,
                        "counts": {"pending": c.pending, "in_progress": c.in_progress, "done": c.done},
                    }))
                }
                AgentEvent::Subagent { call_id, event } => {
                    let mut value = json!({"type": "subagent", "id": call_id});
                    if let (Some(line), serde_json::Value::Object(fields)) = (
                        value.as_object_mut(),
                        serde_json::to_value(event).map_err(|e| HeadlessError::Failed(e.to_string()))?,
                    ) {
                        line.extend(fields);
                    }
                    self.line(value)
                }
                AgentEvent::Attached(items) => self.line(json!({"type": "attached", "items": items})),
                AgentEvent::SessionReady { .. }
                | AgentEvent::SessionStored(_)
                | AgentEvent::ModelRefused { .. }
                | AgentEvent::Models(_)
                | AgentEvent::Context(_)
                | AgentEvent::ContextBreakdown(_)
                | AgentEvent::Queued { .. }
                | AgentEvent::TurnStarted { .. }
                | AgentEvent::ToolCallStreaming { .. }
                | AgentEvent::AssistantMessage(_)
                | AgentEvent::ApprovalRequested(_)
                | AgentEvent::ModeChanged(_)
                | AgentEvent::ModelChanged { .. }
                | AgentEvent::Library(_)
                | AgentEvent::Commands(_)
                | AgentEvent::Mcp(_)
                | AgentEvent::RewindPlanned(_)
                | AgentEvent::Rewound(Err(_))
                | AgentEvent::TurnFinished(_)
                | AgentEvent::Settled(_) => Ok(()),
            },
        }
    }

    fn finish(
        &mut self,
        session_id: &str,
        mode: &str,
        model: &str,
        summary: &TurnSummary,
    ) -> Result<(), HeadlessError> {
        let stats = &summary.stats;
        let result = HeadlessResult {
            kind: (self.format == OutputFormat::StreamJson).then_some("result"),
            session_id: session_id.to_string(),
            result: summary.outcome.result_text(),
            is_error: summary.outcome.is_error(),
            turns: stats.requests,
            mode: mode.to_string(),
            model: model.to_string(),
            usage: UsageReport::new(&stats.usage, stats.all_requests),
            context: stats.context,
            denied_tool_calls: stats.denied_tool_calls,
            cache: stats.cache,
            // A run that made no request (a slash command) cost nothing.
            cost_usd: if stats.all_requests == 0 { Some(0.0) } else { stats.cost_usd },
        };
        match self.format {
            OutputFormat::Text => {
                let mut out = self.out.lock();
                if result.is_error {
                    note!(self, "cairn: {}", result.result);
                } else if self.strip_stdout {
                    writeln!(out, "{}", crate::conversation::strip_terminal_controls(&result.result))
                        .map_err(write_failed)?;
                } else {
                    writeln!(out, "{}", result.result).map_err(write_failed)?;
                }
                out.flush().map_err(write_failed)
            }
            OutputFormat::Json => {
                self.line(serde_json::to_value(&result).map_err(|e| HeadlessError::Failed(e.to_string()))?)
            }
            OutputFormat::StreamJson => {
                self.line(serde_json::to_value(&result).map_err(|e| HeadlessError::Failed(e.to_string()))?)
            }
        }
    }
}

fn write_failed(e: std::io::Error) -> HeadlessError {
    HeadlessError::Failed(format!("cannot write output: {e}"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::Mode;
    use crate::store::SessionInfo;

    fn session() -> SessionInfo {
        SessionInfo {
            id: "0123456789abcdef".into(),
            project: crate::store::ProjectId(1),
            title: String::new(),
            provider: ProviderKind::Anthropic,
            model: "claude-test".into(),
            mode: Mode::Edit,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[tokio::test]
    async fn a_worker_that_panics_fails_the_run_instead_of_hanging_it() {
        let (commands, mut commands_rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel::<AgentEvent>();
        // In a real agent the router holds a sender of events too, so they never close.
        let _router = events_tx.clone();
        let worker = tokio::spawn(async move {
            let _first = commands_rx.recv().await;
            let _events = events_tx;
            panic!("index out of bounds: the len is 0 but the index is 3");
        });
        let handle = AgentHandle::from_parts(commands, events, session(), worker);
        let run = run(handle, "hello".into(), OutputFormat::Json);
        let outcome = tokio::time::timeout(Duration::from_secs(10), run).await.expect("the run hung after the panic");
        let Err(HeadlessError::Failed(message)) = outcome else { panic!("expected a failed run, got {outcome:?}") };
        assert!(message.contains("internal error") && message.contains("the len is 0 but the index is 3"), "{message}");
        assert!(message.contains("0123456789abcdef"), "{message}");
    }
}
