//! Tool calls of one assistant message: permissions first (`permit`), approval second,
//! execution third. Consecutive read-only calls run concurrently; a write or a command runs
//! alone, in order, so two edits of one file never race. A command the sandbox stopped may be
//! run again outside it when the user approves. Every call gets exactly one result, stored in
//! call order with what decided it.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::approvals::{Approval, Question, Refuser};
use crate::agent::checkpoints::Capture;
use crate::agent::events::{AgentEvent, ApprovalKind, ToolFinished, TurnStats};
use crate::checkpoint::CallKind;
use crate::context::{TruncationLimits, turn_overflow};
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::store::ToolRecord;
use crate::tools::permissions::{Choices, DecidedBy, Decision, Permission};
use crate::tools::tool_search::called_name;
use crate::tools::{Access, Prepared, SandboxPolicy, Tool, ToolContext, ToolOutput};

/// A call that passed every gate and will run.
pub(super) struct Cleared<'r> {
    pub call: ToolCall,
    pub tool: &'r dyn Tool,
    pub args: serde_json::Value,
    pub prepared: Prepared,
    /// Run in this sandbox instead of the tool's own (plan mode's read-only one).
    pub sandbox: Option<SandboxPolicy>,
    /// A context of its own (a memory save carrying who approved it).
    pub ctx: Option<ToolContext>,
    pub ruling: Ruling,
}

/// What allowed or refused a call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Ruling {
    /// Headless `decided_by`: a rule, `read-only set`, `mode`, `user`, `user: --yes`, `sandbox`.
    pub by: Option<String>,
    /// The transcript's approval line; `None` where the mode's defaults let a call through.
    pub line: Option<String>,
}

impl Ruling {
    pub(super) fn new(by: impl Into<String>, line: impl Into<String>) -> Ruling {
        Ruling { by: Some(by.into()), line: Some(line.into()) }
    }

    /// The policy allowed or refused the call by itself.
    pub(super) fn of_policy(d: &Decision) -> Ruling {
        let by = d.decided_by.short();
        let line = match (d.permission, &d.decided_by) {
            (Permission::Allow, DecidedBy::Rule(rule)) => Some(format!("allowed by rule: {rule}")),
            (Permission::Allow, DecidedBy::ReadOnlySet) => Some("allowed: read-only command".to_string()),
            (Permission::Allow, DecidedBy::Mode(_) | DecidedBy::Unparsable) => None,
            (Permission::Deny | Permission::Ask, DecidedBy::Rule(rule)) => Some(format!("refused by rule: {rule}")),
            (Permission::Deny | Permission::Ask, DecidedBy::Mode(mode)) => Some(format!("refused by {mode} mode")),
            (Permission::Deny | Permission::Ask, DecidedBy::ReadOnlySet) => Some("refused".to_string()),
            (Permission::Deny | Permission::Ask, DecidedBy::Unparsable) => {
                Some("refused: the command could not be parsed".to_string())
            }
        };
        Ruling { by: Some(by), line }
    }

    /// A call that asked was refused.
    pub(super) fn refused(by: Refuser, asked_by: &DecidedBy) -> Ruling {
        match by {
            Refuser::User => Ruling::new("user", "denied by you"),
            Refuser::Headless => {
                Ruling::new(asked_by.short(), format!("denied: headless without --yes (asked by {})", asked_by.label()))
            }
        }
    }
}

/// The result of a call, before it is stored.
pub(super) struct Outcome {
    pub call: ToolCall,
    pub summary: String,
    pub output: ToolOutput,
    pub duration: Duration,
    pub not_run: bool,
    pub ruling: Ruling,
}

impl Outcome {
    pub(super) fn not_run(call: &ToolCall, summary: String, message: String) -> Outcome {
        Outcome {
            call: call.clone(),
            summary,
            output: ToolOutput { content: message, is_error: true, ..Default::default() },
            duration: Duration::ZERO,
            not_run: true,
            ruling: Ruling::default(),
        }
    }

    pub(super) fn ruled(mut self, ruling: Ruling) -> Outcome {
        self.ruling = ruling;
        self
    }
}

pub(super) enum Gate<'r> {
    /// Both boxed: the two are large (a preview, an output) and differ in size.
    Run(Box<Cleared<'r>>),
    Done(Box<Outcome>),
}

/// What a command the sandbox stopped needs to run again outside it.
pub(super) struct Rerun<'r> {
    tool: &'r dyn Tool,
    args: serde_json::Value,
    prepared: Prepared,
    ctx: Option<ToolContext>,
    /// Checkpoints the run outside the sandbox as the first run was.
    capture: Option<Capture>,
}

pub(super) const INTERRUPTED_BEFORE_RUN: &str = "[not run: the user interrupted the turn before this call started]";

impl Worker {
    pub(super) async fn dispatch(&mut self, calls: &[ToolCall], cancel: &CancellationToken, stats: &mut TurnStats) {
        let registry = self.tools.registry().clone();
        let ctx = self.tool_context(cancel);
        let concurrent =
            |call: &ToolCall| registry.access_of(&called_name(call)).is_none_or(|access| access.is_read_only());
        let limits = self.truncation_limits();
        let cap = TruncationLimits::turn_cap(&self.place.config().context, &self.budget());
        let mut sent_so_far = 0usize;
        let mut i = 0;
        while i < calls.len() {
            let end =
                if concurrent(&calls[i]) { i + calls[i..].iter().take_while(|c| concurrent(c)).count() } else { i + 1 };
            let mut gated = Vec::new();
            for call in &calls[i..end] {
                gated.push(self.gate(call, &registry, &ctx, cancel, stats).await);
            }
            let capture = self.checkpoints.capture();
            let ran = join_all(gated.into_iter().map(|g| execute(g, &ctx, Some(&capture)))).await;
            let mut outcomes = Vec::with_capacity(ran.len());
            for (mut outcome, rerun) in ran {
                if let Some(rerun) = rerun {
                    self.after_sandbox_denial(&mut outcome, rerun, &ctx, cancel).await;
                }
                outcomes.push(outcome);
            }
            let sent = self.truncate_batch(&outcomes, &limits, cap, &mut sent_so_far, calls.len());
            for (outcome, content) in outcomes.into_iter().zip(sent) {
                let content = if outcome.not_run {
                    content
                } else {
                    let (output, is_error) = (&outcome.output.content, outcome.output.is_error);
                    self.post_tool_hooks(&outcome.call, output, is_error, content, cancel).await
                };
                self.finish(outcome, content);
            }
            i = end;
        }
    }

    /// What every tool call of a turn may use.
    pub(super) fn tool_context(&self, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            root: self.place.root().to_path_buf(),
            config: self.place.config().tools.clone(),
            files: self.tools.files().clone(),
            cancel: cancel.clone(),
            memory: Some(std::sync::Arc::new(self.memory_access())),
            // Set per call, for `task` calls only (see `delegation_context`).
            subagents: None,
            task_list: Some(std::sync::Arc::new(self.task_list.clone())),
            editor: self.tools.editor(),
            denied: self.tools.policy().read_denials(),
        }
    }

    /// A command failed inside the sandbox, most likely because of it. With a user at the
    /// screen (and outside plan mode, whose promise is that nothing changes), ask whether to
    /// run it again outside; headless runs never lift the sandbox, `--yes` or not.
    pub(super) async fn after_sandbox_denial(
        &mut self,
        outcome: &mut Outcome,
        rerun: Rerun<'_>,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) {
        let Some(why) = outcome.output.sandbox_denial.clone() else { return };
        let stopped = format!("stopped by the sandbox: {why}");
        if self.link.mode() == crate::conversation::Mode::Plan {
            outcome.ruling = Ruling { by: Some("sandbox".into()), line: Some(format!("{stopped} (plan mode)")) };
            return;
        }
        if !self.tools.gate().is_interactive() {
            outcome.output.content.push_str(
                "\n[cairn is running headless: it never runs a command outside the sandbox here, --yes or not. Finish without it, and tell the user what needs running outside the sandbox.]",
            );
            outcome.ruling =
                Ruling { by: Some("sandbox".into()), line: Some(format!("{stopped} (headless runs never lift it)")) };
            return;
        }
        let reason = format!("was stopped by the sandbox: {why}");
        let question = Question {
            call: &outcome.call,
            summary: &outcome.summary,
            diff: None,
            reason: &reason,
            asked_by: "sandbox".into(),
            choices: &Choices::default(),
            kind: ApprovalKind::OutsideSandbox { why: why.clone() },
            needs_user: true,
        };
        match self.tools.gate().ask(question, cancel, &self.link.emitter()).await {
            Approval::Approved(_) => {
                let started = Instant::now();
                let ctx = rerun.ctx.as_ref().unwrap_or(ctx);
                let unconfined = SandboxPolicy::full_access();
                let guard = match &rerun.capture {
                    Some(capture) => capture.before(CallKind::Exec).await,
                    None => None,
                };
                let output = match rerun.tool.execute_in_sandbox(&rerun.args, rerun.prepared, ctx, &unconfined).await {
                    Ok(output) => output,
                    Err(e) => ToolOutput { content: e.0, is_error: true, ..Default::default() },
                };
                if let (Some(capture), Some(guard)) = (&rerun.capture, guard) {
                    capture.after(guard, &outcome.call.name, &outcome.call.id).await;
                }
                outcome.output = output;
                outcome.duration += started.elapsed();
                outcome.ruling = Ruling {
                    by: Some("user".into()),
                    line: Some(format!("run outside the sandbox, approved by you (the sandbox stopped it: {why})")),
                };
            }
            Approval::Denied { .. } => {
                outcome.output.content.push_str("\n[the user chose not to run it outside the sandbox]");
                outcome.ruling =
                    Ruling { by: Some("sandbox".into()), line: Some(format!("{stopped} (you kept it inside)")) };
            }
            Approval::Interrupted => {
                outcome.ruling = Ruling { by: Some("sandbox".into()), line: Some(stopped) };
            }
        }
    }

    /// Each result as the model will see it: cut to the limits with the full output saved, and
    /// when the results of this assistant message together pass the per-turn cap, the largest
    /// cut further until they fit.
    fn truncate_batch(
        &mut self,
        outcomes: &[Outcome],
        limits: &TruncationLimits,
        cap: usize,
        sent_so_far: &mut usize,
        calls: usize,
    ) -> Vec<String> {
        let mut sent: Vec<(String, bool)> =
            outcomes.iter().map(|o| self.truncate_result(&o.call, &o.output.content, limits)).collect();
        let sizes: Vec<usize> = sent.iter().map(|(s, _)| s.len()).collect();
        if *sent_so_far + sizes.iter().sum::<usize>() > cap {
            let reduced =
                TruncationLimits { max_bytes: (cap / (4 * calls.max(1))).max(2_000), max_lines: 200, ..*limits };
            for i in turn_overflow(&sizes, cap.saturating_sub(*sent_so_far), reduced.max_bytes) {
                sent[i] = self.truncate_result(&outcomes[i].call, &outcomes[i].output.content, &reduced);
            }
        }
        *sent_so_far += sent.iter().map(|(s, _)| s.len()).sum::<usize>();
        let cut = sent.iter().filter(|(_, truncated)| *truncated).count() as u64;
        if cut > 0 {
            self.session.pipeline_mut().note_truncations(cut);
            let cpt = self.place.config().context.chars_per_token;
            let before: usize = outcomes.iter().map(|o| o.output.content.len()).sum();
            let after: usize = sent.iter().map(|(s, _)| s.len()).sum();
            self.link.emit(AgentEvent::ContextStage(crate::context::StageReport {
                stage: crate::context::Stage::Truncation,
                count: cut,
                saved_tokens: crate::context::estimate_text_tokens(before.saturating_sub(after), cpt),
                detail: format!(
                    "{cut} tool output{} cut to head and tail; the full text is saved and the model can read it",
                    if cut == 1 { "" } else { "s" }
                ),
            }));
        }
        sent.into_iter().map(|(s, _)| s).collect()
    }

    /// Store one call's result (as sent, with the full output beside it) and report it.
    fn finish(&mut self, outcome: Outcome, sent: String) {
        let Outcome { call, summary, output, duration, not_run, ruling } = outcome;
        let result = ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: sent.clone(),
            is_error: output.is_error,
            exit_code: output.exit_code,
        };
        let record = ToolRecord {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            output: output.content.clone(),
            is_error: output.is_error,
            exit_code: output.exit_code,
            diff: output.diff.clone(),
            duration_ms: duration.as_millis() as u64,
            not_run,
            decided_by: ruling.line.clone(),
        };
        let mut message = Message::tool(result);
        // An image a tool returned (file_read of a PNG) travels after its result.
        if let Some(image) = output.image {
            message.content.push(crate::conversation::Block::Image(image));
        }
        self.session.persist(message, Some(record));
        self.link.emit(AgentEvent::ToolFinished(ToolFinished {
            call_id: call.id,
            tool: call.name,
            summary,
            content: sent,
            is_error: output.is_error,
            exit_code: output.exit_code,
            diff: output.diff,
            duration,
            not_run,
            decided_by: ruling.by,
            approval: ruling.line,
            by_user: false,
        }));
    }
}

/// Run a cleared call, checkpointed around by `capture` when it writes or runs something; a
/// command the sandbox stopped comes back with what a run outside it needs.
pub(super) async fn execute<'r>(
    gate: Gate<'r>,
    ctx: &ToolContext,
    capture: Option<&Capture>,
) -> (Outcome, Option<Rerun<'r>>) {
    match gate {
        Gate::Done(outcome) => (*outcome, None),
        Gate::Run(cleared) => {
            let Cleared { call, tool, args, prepared, sandbox, ctx: own, ruling } = *cleared;
            let summary = prepared.summary.clone();
            // A call that writes or runs something is checkpointed around its execution,
            // whatever its outcome; capture never changes the result.
            let guard = match (capture, call_kind(tool, &prepared)) {
                (Some(capture), Some(kind)) => capture.before(kind).await,
                (Some(_) | None, _) => None,
            };
            // Only a command can be stopped by the sandbox; a write's preview is not copied.
            let again = (tool.access() == Access::Execute).then(|| prepared.clone());
            let run_ctx = own.as_ref().unwrap_or(ctx);
            let started = Instant::now();
            let result = match &sandbox {
                Some(sandbox) => tool.execute_in_sandbox(&args, prepared, run_ctx, sandbox).await,
                None => tool.execute(&args, prepared, run_ctx).await,
            };
            let output = match result {
                Ok(output) => output,
                Err(e) => ToolOutput { content: e.0, is_error: true, ..Default::default() },
            };
            let duration = started.elapsed();
            if let (Some(capture), Some(guard)) = (capture, guard) {
                capture.after(guard, &call.name, &call.id).await;
            }
            let denied = output.sandbox_denial.is_some();
            let outcome = Outcome { call, summary, output, duration, not_run: false, ruling };
            let capture = capture.cloned();
            let rerun = again.filter(|_| denied).map(|prepared| Rerun { tool, args, prepared, ctx: own, capture });
            (outcome, rerun)
        }
    }
}

/// What checkpointing a call needs to look at: the paths a write names, or the whole tree
/// around a command; nothing for a call that only reads.
fn call_kind(tool: &dyn Tool, prepared: &Prepared) -> Option<CallKind> {
    match tool.access() {
        Access::Write => Some(CallKind::Write(prepared.paths.iter().map(|p| p.absolute.clone()).collect())),
        Access::Execute => Some(CallKind::Exec),
        // A fetch changes nothing here.
        Access::Read | Access::Memory | Access::Network => None,
    }
}
