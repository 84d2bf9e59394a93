//! `FinishedCall`: the one record of a tool call once it is over — what was called, what it
//! printed, what the model was sent, what decided it. The agent's call path fills it step by
//! step; the store keeps it beside the result message, and the `ToolFinished` event carries the
//! same value to the front ends.

use std::time::Duration;

use super::message::{ToolCall, ToolResult, parse_arguments};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FinishedCall {
    pub call_id: String,
    /// The tool that ran (for a `tool_call`, the tool it named).
    pub tool: String,
    /// The arguments as the model sent them (JSON text).
    pub arguments: String,
    /// One line for the transcript: the path or the command.
    pub summary: String,
    /// The whole output, as the tool gave it (or why the call never ran).
    pub output: String,
    /// The result as sent to the model: `output` cut to the limits, with what PostToolUse
    /// hooks added. (The user's own `!cmd` shows its whole output here.)
    pub content: String,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    pub diff: Option<String>,
    pub duration: Duration,
    /// The call never ran: refused by policy, denied, or its arguments did not parse.
    pub not_run: bool,
    /// What allowed or refused the call, for headless `decided_by`: the rule
    /// (`allow bash(git log *) (project-local, …:2)`), `read-only set`, `mode`, `hook`, `user`,
    /// `user: --yes` or `sandbox`. `None` when nothing had to decide (an unknown tool,
    /// arguments that did not parse, an interrupt).
    pub decided_by: Option<String>,
    /// The transcript's approval line, stored with the call so a resumed session shows it too:
    /// `allowed by rule: …`, `approved by you for this session: bash(git push)`,
    /// `stopped by the sandbox: …`. `None` for calls the mode's defaults let through unasked.
    pub approval: Option<String>,
    /// The user's own `!cmd`, not the model's call: its output is shown whole.
    pub by_user: bool,
}

impl FinishedCall {
    /// A call that ends before it runs, with `message` for the model.
    pub fn not_run(call: &ToolCall, summary: String, message: String) -> FinishedCall {
        FinishedCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            summary,
            output: message,
            is_error: true,
            not_run: true,
            ..Default::default()
        }
    }

    /// The arguments as a JSON object, or why they are not one.
    pub fn parsed_arguments(&self) -> Result<serde_json::Value, String> {
        parse_arguments(&self.arguments)
    }

    /// The result block the model reads.
    pub fn result(&self) -> ToolResult {
        ToolResult {
            call_id: self.call_id.clone(),
            name: self.tool.clone(),
            content: self.content.clone(),
            is_error: self.is_error,
            exit_code: self.exit_code,
        }
    }
}
