//! Step 2, decide: whether a resolved call may run, and how. Ask mode, and a plan-mode write,
//! are refused before anything is read for a preview; then the arguments parse, the tool
//! prepares its preview, PreToolUse hooks may refuse, allow or rewrite the call, and the
//! permission policy decides allow, ask or deny from the mode, the rules of every level and
//! (for `bash`) each part of the command line — an MCP tool's call is checked here like any
//! other, as a command. An ask goes to the approval gate, and a rule the user chose there is
//! remembered. A call that may run leaves with its sandbox and its own context.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::hooks::PreTool;
use super::resolve::{INTERRUPTED_BEFORE_RUN, Resolved, Step, not_run};
use super::{Calls, Host, Ruling};
use crate::agent::approvals::{Answer, Approval, Question};
use crate::agent::events::{AgentEvent, ApprovalKind};
use crate::conversation::{Mode, ToolCall};
use crate::tools::permissions::{Call, Decision, Permission};
use crate::tools::{Access, Prepared, SandboxPolicy, Tool, ToolContext};

/// A call that passed every gate and will run.
pub(super) struct Cleared<'r> {
    pub call: ToolCall,
    pub tool: &'r dyn Tool,
    pub args: Value,
    pub prepared: Prepared,
    /// Run in this sandbox instead of the tool's own (plan mode's read-only one).
    pub sandbox: Option<SandboxPolicy>,
    /// A context of its own (a memory save carrying who approved it, a `task` call's launcher).
    pub ctx: Option<ToolContext>,
    pub ruling: Ruling,
}

/// The call ends here, refused, with what refused it.
fn refused<T>(call: &ToolCall, summary: String, message: String, ruling: Ruling) -> Step<T> {
    not_run(call, summary, message).map_err(|mut finished| {
        ruling.into_record(&mut finished);
        finished
    })
}

impl Calls<'_> {
    pub(super) async fn decide<'r, H: Host>(
        &mut self,
        resolved: Resolved<'r>,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        host: &H,
    ) -> Step<Cleared<'r>> {
        let Resolved { call, tool } = resolved;
        let mode = self.link.mode();
        let access = tool.access();
        // Ask mode, and a plan-mode write, are refused before anything is read for a preview.
        // (Plan-mode commands are decided part by part below, once the command is known.)
        if mode == Mode::Ask || (mode == Mode::Plan && access == Access::Write) {
            let none = Value::Null;
            let d = self.tools.policy().decide(mode, &Call { tool: tool.name(), access, args: &none, paths: &[] });
            if d.permission == Permission::Deny {
                self.denied += 1;
                return refused(&call, call.name.clone(), d.reason.clone(), Ruling::of_policy(&d));
            }
        }
        let mut args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(e) => {
                let message = format!(
                    "`{}` was not run: its {e}. Send the arguments again as one JSON object matching the tool's schema.",
                    call.name
                );
                return not_run(&call, call.name.clone(), message);
            }
        };
        let mut prepared = match tool.prepare_in(&args, ctx).await {
            Ok(p) => p,
            Err(e) => return not_run(&call, call.name.clone(), e.0),
        };
        let allowed_by_hook;
        match self.pre_tool_hooks(&call, access, args, &prepared.paths, cancel).await {
            PreTool::Deny { message, hook } => {
                self.denied += 1;
                let line = format!("denied by PreToolUse hook `{hook}`");
                return refused(&call, prepared.summary, message, Ruling::new("hook", &line));
            }
            PreTool::Go { args: hooked, rewritten, allowed } => {
                args = hooked;
                allowed_by_hook = allowed;
                if rewritten {
                    prepared = match tool.prepare_in(&args, ctx).await {
                        Ok(p) => p,
                        Err(e) => return not_run(&call, call.name.clone(), e.0),
                    };
                }
            }
        }
        if access == Access::Read {
            // Saved full outputs are cairn's own files, and truncation notices send the model
            // to them: reading them is as free as reading the project. So are skills' files.
            for path in &mut prepared.paths {
                if path.absolute.starts_with(self.saved.dir()) || self.ext.is_skill_file(&path.absolute) {
                    path.inside_project = true;
                }
            }
        }
        let decision =
            self.tools.policy().decide(mode, &Call { tool: tool.name(), access, args: &args, paths: &prepared.paths });
        let mut approved_by = None;
        let ruling = match decision.permission {
            Permission::Allow => Ruling::of_policy(&decision),
            // A PreToolUse hook allowed it: no question (a refusal by a rule still stands).
            Permission::Ask if let Some(hook) = &allowed_by_hook => {
                Ruling::new("hook", format!("allowed by the PreToolUse hook `{hook}`"))
            }
            Permission::Deny => {
                self.denied += 1;
                return refused(&call, prepared.summary, decision.reason.clone(), Ruling::of_policy(&decision));
            }
            Permission::Ask => match self.ask(&call, &prepared, &decision, cancel).await {
                Approval::Approved(answer) => {
                    approved_by = Some(match answer {
                        Answer::Yes => "--yes",
                        Answer::Once | Answer::Session(_) | Answer::Project(_) => "you, in the approval dialog",
                    });
                    self.remember(answer, &decision.decided_by)
                }
                Approval::Denied { message, by } => {
                    self.denied += 1;
                    return refused(&call, prepared.summary, message, Ruling::refused(by, &decision.decided_by));
                }
                Approval::Interrupted => return not_run(&call, prepared.summary, INTERRUPTED_BEFORE_RUN.into()),
            },
        };
        // A memory saved with approval carries who gave it; a `task` call gets a launcher.
        let own_ctx = approved_by.filter(|_| access == Access::Memory).map(|by| host.approved_memory(by, ctx));
        let own_ctx = own_ctx.or_else(|| host.delegate(&call, self.tools, ctx));
        self.link.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: args.to_string(),
        });
        prepared.shown_as = Some(call.id.clone());
        Ok(Cleared {
            call,
            tool,
            args,
            prepared,
            sandbox: if access == Access::Execute { self.tools.sandbox_of(mode, &decision) } else { None },
            ctx: own_ctx,
            ruling,
        })
    }

    /// The user is asked (or the front end's policy answers); a user at the screen is
    /// notified first.
    async fn ask(
        &self,
        call: &ToolCall,
        prepared: &Prepared,
        decision: &Decision,
        cancel: &CancellationToken,
    ) -> Approval {
        if self.tools.gate().is_interactive() {
            self.notify(format!("cairn needs your approval: {} {}", call.name, prepared.summary));
        }
        let question = Question {
            call,
            summary: &prepared.summary,
            diff: prepared.change.as_ref().map(|c| c.unified_diff()),
            reason: &decision.reason,
            asked_by: decision.decided_by.label(),
            choices: &decision.choices,
            kind: ApprovalKind::Call,
            needs_user: decision.needs_user,
        };
        self.tools.gate().ask(question, cancel, &self.link.emitter()).await
    }
}
