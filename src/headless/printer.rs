//! What a headless run prints: the notices, the stream of JSON lines and the final result.

use std::io::Write;

use serde::Serialize;
use serde_json::json;

use super::error::HeadlessError;
use crate::agent::{AgentEvent, BackgroundAnswer, ContextReport, TurnSummary};
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

pub(super) struct Printer {
    format: OutputFormat,
    out: std::io::Stdout,
    /// Text output going to a terminal: escape sequences in the answer are removed, so the
    /// model cannot retitle the window, write the clipboard or clear the screen.
    strip_stdout: bool,
    /// The same for the notices on stderr.
    strip_stderr: bool,
    /// Key values, kept out of everything printed as they are out of everything stored.
    redactor: crate::config::Redactor,
    /// The end of the streamed answer and thinking that may be the start of a key, held until
    /// the next chunk says whether it is.
    held_text: String,
    held_thinking: String,
}

/// A line on stderr. A closed terminal (after SIGHUP) makes the write fail; that loses only
/// this line, never the run's bookkeeping, so the error is ignored.
macro_rules! note {
    ($printer:expr, $($arg:tt)*) => {{
        let line = $printer.redactor.redact(&format!($($arg)*)).into_owned();
        let line = if $printer.strip_stderr { crate::conversation::strip_terminal_controls(&line) } else { line };
        let _ = writeln!(std::io::stderr(), "{line}");
    }};
}

impl Printer {
    pub(super) fn new(format: OutputFormat, redactor: crate::config::Redactor) -> Printer {
        use std::io::IsTerminal;
        let text = format == OutputFormat::Text;
        Printer {
            format,
            out: std::io::stdout(),
            strip_stdout: text && std::io::stdout().is_terminal(),
            strip_stderr: text && std::io::stderr().is_terminal(),
            redactor,
            held_text: String::new(),
            held_thinking: String::new(),
        }
    }

    /// One JSON line, key values redacted (a key's characters need no escaping in JSON, so
    /// the line holds them as the value did).
    fn line(&mut self, value: serde_json::Value) -> Result<(), HeadlessError> {
        let text = value.to_string();
        let text = self.redactor.redact(&text);
        let mut out = self.out.lock();
        writeln!(out, "{text}").and_then(|()| out.flush()).map_err(write_failed)
    }

    /// What was held back, before any other line (a key cut off at the end is not a key).
    fn flush_held(&mut self) -> Result<(), HeadlessError> {
        for (kind, held) in [
            ("assistant_delta", std::mem::take(&mut self.held_text)),
            ("thinking_delta", std::mem::take(&mut self.held_thinking)),
        ] {
            if !held.is_empty() {
                self.line(json!({"type": kind, "text": held}))?;
            }
        }
        Ok(())
    }

    /// A streamed chunk of the answer or the thinking, as far as it cannot be part of a key.
    fn delta(&mut self, thinking: bool, chunk: &str) -> Result<(), HeadlessError> {
        let held = if thinking { &mut self.held_thinking } else { &mut self.held_text };
        let out = self.redactor.release(held, chunk);
        let kind = if thinking { "thinking_delta" } else { "assistant_delta" };
        if out.is_empty() { Ok(()) } else { self.line(json!({"type": kind, "text": out})) }
    }

    pub(super) fn event(&mut self, event: &AgentEvent) -> Result<(), HeadlessError> {
        if self.format == OutputFormat::StreamJson
            && !matches!(event, AgentEvent::TextDelta(_) | AgentEvent::ThinkingDelta(_))
        {
            self.flush_held()?;
        }
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
                    | AgentEvent::ReportWritten(_)
                    | AgentEvent::Exported(_)
                    | AgentEvent::BackgroundRunning(_)
                    | AgentEvent::Background(_)
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
                    | AgentEvent::TaskList(_) => {}
                }
                Ok(())
            }
            OutputFormat::StreamJson => match event {
                AgentEvent::TextDelta(text) => self.delta(false, text),
                AgentEvent::ThinkingDelta(text) => self.delta(true, text),
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
                AgentEvent::TaskList(list) => {
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
                AgentEvent::BackgroundRunning(running) => self.line(json!({"type": "background", "running": running})),
                AgentEvent::Background(BackgroundAnswer::Rewound(jobs)) => {
                    self.line(json!({"type": "background", "ended_by_rewind": jobs}))
                }
                AgentEvent::SessionReady { .. }
                | AgentEvent::SessionStored(_)
                | AgentEvent::ModelRefused { .. }
                | AgentEvent::Models(_)
                | AgentEvent::Context(_)
                | AgentEvent::ContextBreakdown(_)
                | AgentEvent::ReportWritten(_)
                | AgentEvent::Exported(_)
                | AgentEvent::Background(BackgroundAnswer::List(_) | BackgroundAnswer::Stopped(_))
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

    pub(super) fn finish(
        &mut self,
        session_id: &str,
        mode: &str,
        model: &str,
        summary: &TurnSummary,
    ) -> Result<(), HeadlessError> {
        let stats = &summary.stats;
        self.flush_held()?;
        let result = HeadlessResult {
            kind: (self.format == OutputFormat::StreamJson).then_some("result"),
            session_id: session_id.to_string(),
            result: self.redactor.redact(&summary.outcome.result_text()).into_owned(),
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
