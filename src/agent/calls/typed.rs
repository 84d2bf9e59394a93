//! What the user runs by hand takes the same steps from `decide` on: `!cmd` (the same rules and
//! sandbox as the model's `bash`, the user's typing being the approval an ask would need, and
//! plan mode still keeping its promise that nothing changes) and a custom command's
//! `` !`cmd` `` (with the user's approval unless the command's `allowed-tools` allow it).
//! Neither is checkpointed: the user's own command is theirs, like an edit by hand; the next
//! scan keeps what it changed, and a rewind lists files it changed as conflicts.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::decide::Cleared;
use super::execute::execute;
use super::{Calls, Ruling};
use crate::agent::approvals::{Approval, Question};
use crate::agent::events::{AgentEvent, ApprovalKind};
use crate::conversation::tool_names::BASH;
use crate::conversation::{FinishedCall, Mode, ToolCall};
use crate::tools::permissions::{Call, Choices, DecidedBy, Permission, Policy};
use crate::tools::{Access, ToolContext};

/// The user's own command's record: the output is what they see, whole.
fn by_user(mut record: FinishedCall) -> FinishedCall {
    record.content = record.output.clone();
    record.by_user = true;
    record
}

impl Calls<'_> {
    /// `!cmd`, run once (a command the sandbox stopped may run again outside it): its record,
    /// shown whole — `not_run` when a rule refused it — or why it could not start.
    pub(in crate::agent) async fn run_typed(
        &mut self,
        command: &str,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> Result<FinishedCall, String> {
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
            Permission::Ask => Ruling::new("user", "run by you (typed with !)"),
            Permission::Deny => {
                let ruling = Ruling::of_policy(&decision);
                let why = ruling.line.clone().unwrap_or_else(|| "refused".into());
                let mut record = FinishedCall::not_run(&call, format!("$ {command}"), format!("not run: {why}"));
                ruling.into_record(&mut record);
                return Ok(by_user(record));
            }
        };
        let registry = self.tools.registry();
        let (tool, mut prepared) = match registry.get(BASH).map(|bash| (bash, bash.prepare(&args, ctx))) {
            Some((bash, Ok(prepared))) => (bash, prepared),
            Some((_, Err(e))) => return Err(e.0),
            None => return Err("this session has no bash tool".into()),
        };
        self.link.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: call.arguments.clone(),
        });
        prepared.shown_as = Some(call.id.clone());
        let sandbox = self.tools.sandbox_of(mode, &decision);
        let cleared = Cleared { call, tool, args, prepared, sandbox, ctx: None, ruling };
        let mut ran = execute(Ok(cleared), ctx, None).await;
        if let Some(rerun) = ran.rerun.take() {
            self.rerun(&mut ran, rerun, ctx, cancel).await;
        }
        let mut record = by_user(ran.record);
        record.diff = None;
        Ok(record)
    }

    /// The `index`th `` !`shell` `` of the custom command `/command`: what it printed, or why it
    /// did not run. `allowed` holds the command's `allowed-tools`.
    pub(in crate::agent) async fn run_span(
        &mut self,
        (command, index): (&str, usize),
        shell: &str,
        allowed: &Policy,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> String {
        let registry = self.tools.registry();
        let Some(bash) = registry.get(BASH) else { return format!("[not run: no bash tool for `{shell}`]") };
        let args = json!({"command": shell});
        let call = ToolCall::new(format!("command-{command}-{index}"), BASH, args.to_string());
        let prepared = match bash.prepare(&args, ctx) {
            Ok(p) => p,
            Err(e) => return format!("[not run: {}]", e.0),
        };
        let mode = self.link.mode();
        let bash_call = Call { tool: BASH, access: Access::Execute, args: &args, paths: &[] };
        let by_command = allowed.decide(mode, &bash_call);
        let pre_allowed =
            by_command.permission == Permission::Allow && matches!(by_command.decided_by, DecidedBy::Rule(_));
        let decision = self.tools.policy().decide(mode, &bash_call);
        match decision.permission {
            Permission::Deny => return format!("[not run: {}]", decision.reason),
            Permission::Allow => {}
            Permission::Ask if pre_allowed => {}
            Permission::Ask => {
                let reason = format!("/{command} runs a command for its prompt");
                let question = Question {
                    call: &call,
                    summary: &prepared.summary,
                    diff: None,
                    reason: &reason,
                    asked_by: decision.decided_by.label(),
                    choices: &Choices::default(),
                    kind: ApprovalKind::Call,
                    needs_user: decision.needs_user,
                };
                match self.tools.gate().ask(question, cancel, &self.link.emitter()).await {
                    Approval::Approved(_) => {}
                    Approval::Denied { .. } => return format!("[not run: `{shell}` was not approved]"),
                    Approval::Interrupted => return format!("[not run: `{shell}` was interrupted]"),
                }
            }
        }
        let sandbox = self.tools.sandbox_of(mode, &decision);
        let cleared = Cleared { call, tool: bash, args, prepared, sandbox, ctx: None, ruling: Ruling::default() };
        let ran = execute(Ok(cleared), ctx, None).await;
        if ran.record.is_error && ran.record.exit_code.is_none() {
            return format!("[`{shell}` failed: {}]", ran.record.output.trim_end());
        }
        let output = ran.record.output.trim_end();
        // What it printed is what the prompt takes; a command that went well says nothing more
        // (a failing one keeps its `[exit code N]`).
        let printed = match ran.record.exit_code {
            Some(0) => output.strip_suffix("[exit code 0]").unwrap_or(output).trim_end(),
            Some(_) | None => output,
        };
        printed.to_string()
    }
}
