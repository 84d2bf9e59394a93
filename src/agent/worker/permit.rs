//! Whether one tool call may run: the permission policy decides allow, ask or deny from the
//! mode, the rules of every level and (for `bash`) each part of the command line; an ask goes to
//! the approval gate, and a rule the user chose there is remembered. Every answer carries a
//! [`Ruling`] (kept with the call's outcome in `dispatch`): what decided, for headless
//! `decided_by` and the transcript's approval line.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::{Cleared, Gate, INTERRUPTED_BEFORE_RUN, Outcome, Ruling};
use super::hooks::PreTool;
use crate::agent::approvals::{Answer, Approval, Question};
use crate::agent::events::{AgentEvent, ApprovalKind, NoticeLevel, TurnStats};
use crate::conversation::{Mode, ToolCall};
use crate::mcp::ServerState;
use crate::tools::permissions::{Call, DecidedBy, Permission, Rule};
use crate::tools::tool_search::resolve_tool_call;
use crate::tools::{Access, Registry, ToolContext};

/// `bash(git push), bash(git push *)`.
pub(super) fn rule_list(rules: &[Rule]) -> String {
    rules.iter().map(|r| r.text()).collect::<Vec<_>>().join(", ")
}

impl Worker {
    /// Decide one call: refused, denied or interrupted calls are done; the rest run.
    pub(super) async fn gate<'r>(
        &mut self,
        call: &ToolCall,
        registry: &'r Registry,
        ctx: &ToolContext,
        cancel: &CancellationToken,
        stats: &mut TurnStats,
    ) -> Gate<'r> {
        if cancel.is_cancelled() {
            return Gate::Done(Box::new(Outcome::not_run(call, call.name.clone(), INTERRUPTED_BEFORE_RUN.into())));
        }
        // `tool_call` names the tool it calls: from here on it is that tool's call.
        let resolved = match resolve_tool_call(call) {
            Ok(resolved) => resolved,
            Err(message) => return Gate::Done(Box::new(Outcome::not_run(call, call.name.clone(), message))),
        };
        let call = resolved.as_ref().unwrap_or(call);
        let Some(tool) = registry.get(&call.name).filter(|_| self.tools.offers(&call.name)) else {
            let message = self.server_not_ready(&call.name).unwrap_or_else(|| {
                let known: Vec<_> = registry.names().filter(|n| self.tools.offers(n)).collect();
                format!("There is no tool named `{}`. The available tools are: {}.", call.name, known.join(", "))
            });
            return Gate::Done(Box::new(Outcome::not_run(call, call.name.clone(), message)));
        };
        let mode = self.link.mode();
        let access = tool.access();
        // Ask mode, and a plan-mode write, are refused before anything is read for a preview.
        // (Plan-mode commands are decided part by part below, once the command is known.)
        if mode == Mode::Ask || (mode == Mode::Plan && access == Access::Write) {
            let none = serde_json::Value::Null;
            let d = self.tools.policy().decide(mode, &Call { tool: tool.name(), access, args: &none, paths: &[] });
            if d.permission == Permission::Deny {
                stats.denied_tool_calls += 1;
                return Gate::Done(Box::new(
                    Outcome::not_run(call, call.name.clone(), d.reason.clone()).ruled(Ruling::of_policy(&d)),
                ));
            }
        }
        let mut args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(e) => {
                return Gate::Done(Box::new(Outcome::not_run(
                    call,
                    call.name.clone(),
                    format!(
                        "`{}` was not run: its {e}. Send the arguments again as one JSON object matching the tool's schema.",
                        call.name
                    ),
                )));
            }
        };
        let mut prepared = match tool.prepare_in(&args, ctx).await {
            Ok(p) => p,
            Err(e) => return Gate::Done(Box::new(Outcome::not_run(call, call.name.clone(), e.0))),
        };
        let allowed_by_hook;
        match self.pre_tool_hooks(call, access, args, &prepared.paths, cancel).await {
            PreTool::Deny(message) => {
                stats.denied_tool_calls += 1;
                let outcome = Outcome::not_run(call, prepared.summary, message);
                return Gate::Done(Box::new(outcome.ruled(Ruling::new("hook", "denied by a PreToolUse hook"))));
            }
            PreTool::Go { args: hooked, rewritten, allowed } => {
                args = hooked;
                allowed_by_hook = allowed;
                if rewritten {
                    prepared = match tool.prepare_in(&args, ctx).await {
                        Ok(p) => p,
                        Err(e) => return Gate::Done(Box::new(Outcome::not_run(call, call.name.clone(), e.0))),
                    };
                }
            }
        }
        if access == Access::Read {
            // Saved full outputs are cairn's own files, and truncation notices send the model
            // to them: reading them is as free as reading the project. So are skills' files.
            for path in &mut prepared.paths {
                if path.absolute.starts_with(self.place.truncations_dir()) || self.ext.is_skill_file(&path.absolute) {
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
                stats.denied_tool_calls += 1;
                let outcome = Outcome::not_run(call, prepared.summary, decision.reason.clone());
                return Gate::Done(Box::new(outcome.ruled(Ruling::of_policy(&decision))));
            }
            Permission::Ask => {
                if self.tools.gate().is_interactive() {
                    self.notify_hooks(format!("cairn needs your approval: {} {}", call.name, prepared.summary));
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
                match self.tools.gate().ask(question, cancel, &self.link.emitter()).await {
                    Approval::Approved(answer) => {
                        approved_by = Some(match answer {
                            Answer::Yes => "--yes",
                            Answer::Once | Answer::Session(_) | Answer::Project(_) => "you, in the approval dialog",
                        });
                        self.take_answer(answer, &decision.decided_by)
                    }
                    Approval::Denied { message, by } => {
                        stats.denied_tool_calls += 1;
                        let outcome = Outcome::not_run(call, prepared.summary, message);
                        return Gate::Done(Box::new(outcome.ruled(Ruling::refused(by, &decision.decided_by))));
                    }
                    Approval::Interrupted => {
                        return Gate::Done(Box::new(Outcome::not_run(
                            call,
                            prepared.summary,
                            INTERRUPTED_BEFORE_RUN.into(),
                        )));
                    }
                }
            }
        };
        // A memory saved with approval carries who gave it.
        let own_ctx = approved_by.filter(|_| access == Access::Memory).map(|by| {
            let mut memory = self.memory_access();
            memory.approved_by = Some(by.to_string());
            ToolContext { memory: Some(Arc::new(memory)), ..ctx.clone() }
        });
        // A `task` call gets a launcher for its subagent.
        let own_ctx = own_ctx.or_else(|| self.delegation_context(call, ctx));
        self.link.emit(AgentEvent::ToolStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: args.to_string(),
        });
        Gate::Run(Box::new(Cleared {
            call: call.clone(),
            tool,
            args,
            prepared,
            sandbox: if access == Access::Execute { self.tools.sandbox_of(mode, &decision) } else { None },
            ctx: own_ctx,
            ruling,
        }))
    }

    /// Keep what the user chose to remember, and say who approved.
    fn take_answer(&mut self, answer: Answer, asked_by: &DecidedBy) -> Ruling {
        match answer {
            Answer::Once => Ruling::new("user", "approved by you (once)"),
            Answer::Session(rules) => {
                self.tools.allow_for_session(&rules);
                Ruling::new("user", format!("approved by you for this session: {}", rule_list(&rules)))
            }
            Answer::Project(rules) => match self.tools.allow_for_project(&rules) {
                Ok(path) => {
                    // The user's own act: the next start does not ask about these rules again.
                    let written: Vec<String> = rules
                        .iter()
                        .map(|r| format!(".cairn/settings.local.toml#permissions.allow:{}", r.text()))
                        .collect();
                    if let Err(e) = self.place.trust().adopt(|item| written.contains(&item.id)) {
                        tracing::warn!(error = %e, "could not add the rules to the folder's trust");
                    }
                    let shown = path.strip_prefix(self.place.root()).unwrap_or(&path).display().to_string();
                    Ruling::new(
                        "user",
                        format!("approved by you for this project: {} (saved in {shown})", rule_list(&rules)),
                    )
                }
                Err(e) => {
                    self.link.notice(
                        NoticeLevel::Error,
                        format!("could not save {} for the project: {e}; approved this call once", rule_list(&rules)),
                    );
                    Ruling::new("user", "approved by you (once; the rule could not be saved)")
                }
            },
            Answer::Yes => Ruling::new("user: --yes", format!("approved by --yes (asked by {})", asked_by.label())),
        }
    }
}

impl Worker {
    /// For a call of an MCP tool whose server is not ready (still starting, failed, switched
    /// off): what is wrong with the server, rather than "no such tool" — its tools are listed
    /// only once it has answered.
    fn server_not_ready(&self, name: &str) -> Option<String> {
        let rest = name.strip_prefix("mcp__")?;
        let server = self
            .ext
            .hub
            .servers()
            .into_iter()
            .filter(|s| rest.strip_prefix(s.name.as_str()).is_some_and(|r| r.starts_with("__")))
            .max_by_key(|s| s.name.len())?;
        let which = format!("`{name}` is a tool of the MCP server `{}`, which", server.name);
        Some(match server.state {
            ServerState::Ready => return None,
            ServerState::Starting => format!(
                "{which} is still starting: its tools are offered once it has answered. Go on with other work and call it again in a moment."
            ),
            ServerState::Failed { error } => format!(
                "{which} is not available ({error}); the user can start it again with `/mcp retry {}`.",
                server.name
            ),
            ServerState::Disabled => format!("{which} is switched off; the user can switch it on in /mcp."),
        })
    }
}
