//! `!cmd` and `!!cmd`: the user runs a shell command in the project. It goes through the same
//! permission rules and sandbox as the model's `bash` (deny rules refuse it, the sandbox
//! confines it, plan mode allows only read-only commands), except that the user typing it is
//! the approval an ask would have needed. Its output is shown; `!!` also puts the command and
//! its output into the conversation, as a message from the user, for the model's next turn.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::{Cleared, Gate, Ruling, execute};
use crate::agent::events::{AgentEvent, NoticeLevel, ToolFinished, TurnOutcome, TurnStats, TurnSummary};
use crate::conversation::tool_names::BASH;
use crate::conversation::{Message, Mode, ToolCall};
use crate::tools::Access;
use crate::tools::permissions::{Call, Permission};

impl Worker {
    pub(super) async fn run_shell(
        &mut self,
        typed: String,
        command: String,
        into_context: bool,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let mut stats = TurnStats::default();
        self.link.emit(AgentEvent::TurnStarted { prompt: typed });
        let args = json!({ "command": command });
        let call =
            ToolCall::new(format!("user-shell-{}", chrono::Utc::now().timestamp_micros()), BASH, args.to_string());
        // Ask mode takes the model's tools away, not the user's shell: it is judged as in edit
        // mode. Plan mode keeps its promise that nothing changes.
        let mode = match self.link.mode() {
            Mode::Plan => Mode::Plan,
            Mode::Edit | Mode::Ask => Mode::Edit,
        };
        let decision =
            self.tools.policy().decide(mode, &Call { tool: BASH, access: Access::Execute, args: &args, paths: &[] });
        let ruling = match decision.permission {
            Permission::Allow => Ruling::of_policy(&decision),
            Permission::Ask => Ruling { by: Some("user".into()), line: Some("run by you (typed with !)".into()) },
            Permission::Deny => {
                stats.denied_tool_calls += 1;
                let ruling = Ruling::of_policy(&decision);
                let why = ruling.line.clone().unwrap_or_else(|| "refused".into());
                self.link.emit(AgentEvent::ToolFinished(ToolFinished {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    summary: format!("$ {command}"),
                    content: format!("not run: {why}"),
                    is_error: true,
                    exit_code: None,
                    diff: None,
                    duration: std::time::Duration::ZERO,
                    not_run: true,
                    decided_by: ruling.by,
                    approval: ruling.line,
                    by_user: true,
                }));
                return TurnSummary {
                    outcome: TurnOutcome::Failed { error: format!("`{command}` was not run: {why}") },
                    stats,
                };
            }
        };
        let registry = self.tools.registry().clone();
        let ctx = self.tool_context(&cancel);
        let prepared = match registry.get(BASH).map(|bash| (bash, bash.prepare(&args, &ctx))) {
            Some((bash, Ok(prepared))) => (bash, prepared),
            Some((_, Err(e))) => return TurnSummary { outcome: TurnOutcome::Failed { error: e.0 }, stats },
            None => {
                return TurnSummary {
                    outcome: TurnOutcome::Failed { error: "this session has no bash tool".into() },
                    stats,
                };
            }
        };
        let (tool, prepared) = prepared;
        self.link.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: call.arguments.clone(),
        });
        let cleared = Cleared {
            call: call.clone(),
            tool,
            args,
            prepared,
            sandbox: self.tools.sandbox_of(mode, &decision),
            ctx: None,
            ruling,
        };
        // Not checkpointed: the user's own command is theirs, like an edit by hand; the next
        // scan keeps what it changed, and a rewind lists files it changed as conflicts.
        let (mut outcome, rerun) = execute(Gate::Run(Box::new(cleared)), &ctx, None).await;
        if let Some(rerun) = rerun {
            self.after_sandbox_denial(&mut outcome, rerun, &ctx, &cancel).await;
        }
        let output = outcome.output.content.clone();
        if into_context {
            let (sent, _) = self.truncate_result(&call, &output, &self.truncation_limits());
            self.session
                .persist(Message::user(format!("I ran a shell command in the project:\n$ {command}\n{sent}")), None);
            self.link
                .notice(NoticeLevel::Info, "added to the conversation: the model sees this command and its output");
        }
        self.link.emit(AgentEvent::ToolFinished(ToolFinished {
            call_id: call.id,
            tool: call.name,
            summary: outcome.summary,
            content: output.clone(),
            is_error: outcome.output.is_error,
            exit_code: outcome.output.exit_code,
            diff: None,
            duration: outcome.duration,
            not_run: false,
            decided_by: outcome.ruling.by,
            approval: outcome.ruling.line,
            by_user: true,
        }));
        let outcome = if cancel.is_cancelled() {
            TurnOutcome::Interrupted { partial: output }
        } else {
            TurnOutcome::Completed { text: output }
        };
        TurnSummary { outcome, stats }
    }
}
