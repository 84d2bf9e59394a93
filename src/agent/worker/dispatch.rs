//! Tool calls of one assistant message: policy first, approval second, execution third.
//! Consecutive read-only calls run concurrently; a write or a command runs alone, in order, so
//! two edits of one file never race. Every call gets exactly one result, stored in call order.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::Worker;
use super::hooks::PreTool;
use crate::agent::approvals::Approval;
use crate::agent::events::{AgentEvent, ToolFinished, TurnStats};
use crate::context::{TruncationLimits, turn_overflow};
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::store::ToolRecord;
use crate::tools::{Prepared, Tool, ToolContext, ToolOutput, Verdict, decide};

/// A call that passed every gate and will run.
struct Cleared<'r> {
    call: ToolCall,
    tool: &'r dyn Tool,
    args: serde_json::Value,
    prepared: Prepared,
}

/// The result of a call, before it is stored.
struct Outcome {
    call: ToolCall,
    summary: String,
    output: ToolOutput,
    duration: Duration,
    not_run: bool,
}

impl Outcome {
    fn not_run(call: &ToolCall, summary: String, message: String) -> Outcome {
        Outcome {
            call: call.clone(),
            summary,
            output: ToolOutput { content: message, is_error: true, ..Default::default() },
            duration: Duration::ZERO,
            not_run: true,
        }
    }
}

enum Gate<'r> {
    Run(Cleared<'r>),
    Done(Outcome),
}

const INTERRUPTED_BEFORE_RUN: &str = "[not run: the user interrupted the turn before this call started]";

impl Worker {
    pub(super) async fn dispatch(&mut self, calls: &[ToolCall], cancel: &CancellationToken, stats: &mut TurnStats) {
        let registry = self.tools.registry().clone();
        let ctx = ToolContext {
            root: self.place.root().to_path_buf(),
            config: self.place.config().tools.clone(),
            files: self.tools.files().clone(),
            cancel: cancel.clone(),
            memory: Some(std::sync::Arc::new(self.memory_access())),
        };
        let concurrent = |call: &ToolCall| {
            registry.access_of(&super::commands::called_name(call)).is_none_or(|access| access.is_read_only())
        };
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
            let outcomes = join_all(gated.into_iter().map(|g| execute(g, &ctx))).await;
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

    async fn gate<'r>(
        &mut self,
        call: &ToolCall,
        registry: &'r crate::tools::Registry,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        stats: &mut TurnStats,
    ) -> Gate<'r> {
        if cancel.is_cancelled() {
            return Gate::Done(Outcome::not_run(call, call.name.clone(), INTERRUPTED_BEFORE_RUN.into()));
        }
        // `tool_call` names the tool it calls: from here on it is that tool's call.
        let resolved = match super::commands::resolve_tool_call(call) {
            Ok(resolved) => resolved,
            Err(message) => return Gate::Done(Outcome::not_run(call, call.name.clone(), message)),
        };
        let call = resolved.as_ref().unwrap_or(call);
        let Some(tool) = registry.get(&call.name) else {
            let known: Vec<_> = registry.names().collect();
            return Gate::Done(Outcome::not_run(
                call,
                call.name.clone(),
                format!("There is no tool named `{}`. The available tools are: {}.", call.name, known.join(", ")),
            ));
        };
        let mode = self.link.mode();
        // Mode first: a plan-mode write is refused before anything is read for a preview.
        if let Verdict::Refuse { message } = decide(mode, tool.name(), tool.access(), &[]) {
            return Gate::Done(Outcome::not_run(call, call.name.clone(), message));
        }
        let mut args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(e) => {
                return Gate::Done(Outcome::not_run(
                    call,
                    call.name.clone(),
                    format!(
                        "`{}` was not run: its {e}. Send the arguments again as one JSON object matching the tool's schema.",
                        call.name
                    ),
                ));
            }
        };
        let mut prepared = match tool.prepare(&args, ctx) {
            Ok(p) => p,
            Err(e) => return Gate::Done(Outcome::not_run(call, call.name.clone(), e.0)),
        };
        let allowed_by_hook;
        match self.pre_tool_hooks(call, tool.access(), args, &prepared.paths, cancel).await {
            PreTool::Deny(message) => {
                stats.denied_tool_calls += 1;
                return Gate::Done(Outcome::not_run(call, prepared.summary, message));
            }
            PreTool::Go { args: hooked, rewritten, allowed } => {
                args = hooked;
                allowed_by_hook = allowed;
                if rewritten {
                    prepared = match tool.prepare(&args, ctx) {
                        Ok(p) => p,
                        Err(e) => return Gate::Done(Outcome::not_run(call, call.name.clone(), e.0)),
                    };
                }
            }
        }
        if tool.access() == crate::tools::Access::Read {
            // Saved full outputs are cairn's own files, and truncation notices send the model
            // to them: reading them is as free as reading the project. So are skills' files.
            for path in &mut prepared.paths {
                if path.absolute.starts_with(self.place.truncations_dir()) || self.ext.is_skill_file(&path.absolute) {
                    path.inside_project = true;
                }
            }
        }
        match decide(mode, tool.name(), tool.access(), &prepared.paths) {
            Verdict::Run => {}
            // A PreToolUse hook allowed it: no question (a refusal above still stands).
            Verdict::NeedsApproval { .. } if allowed_by_hook.is_some() => {}
            Verdict::Refuse { message } => return Gate::Done(Outcome::not_run(call, prepared.summary, message)),
            Verdict::NeedsApproval { reason } => {
                if self.tools.gate().asks_the_user() {
                    self.notify_hooks(format!("cairn needs your approval: {} {}", call.name, prepared.summary));
                }
                match self.tools.gate().ask(call, &prepared, reason, cancel, &self.link.emitter()).await {
                    Approval::Approved => {}
                    Approval::Denied(message) => {
                        stats.denied_tool_calls += 1;
                        return Gate::Done(Outcome::not_run(call, prepared.summary, message));
                    }
                    Approval::Interrupted => {
                        return Gate::Done(Outcome::not_run(call, prepared.summary, INTERRUPTED_BEFORE_RUN.into()));
                    }
                }
            }
        }
        self.link.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: args.to_string(),
        });
        Gate::Run(Cleared { call: call.clone(), tool, args, prepared })
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
        let Outcome { call, summary, output, duration, not_run } = outcome;
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
        };
        self.session.persist(Message::tool(result), Some(record));
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
        }));
    }
}

async fn execute(gate: Gate<'_>, ctx: &ToolContext) -> Outcome {
    match gate {
        Gate::Done(outcome) => outcome,
        Gate::Run(Cleared { call, tool, args, prepared }) => {
            let summary = prepared.summary.clone();
            let started = Instant::now();
            let output = match tool.execute(&args, prepared, ctx).await {
                Ok(output) => output,
                Err(e) => ToolOutput { content: e.0, is_error: true, ..Default::default() },
            };
            Outcome { call, summary, output, duration: started.elapsed(), not_run: false }
        }
    }
}
