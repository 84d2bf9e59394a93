//! The hook steps of a call: `PreToolUse` before it is decided (allow, deny with a reason,
//! rewrite its arguments) and `PostToolUse` after it ran (feedback for the model). A hook's
//! `matcher` names tools as cairn does, as Claude Code does (`Bash`, `Edit|Write`), an MCP
//! server's tools (`mcp__SERVER`), or a call by a permission-rule pattern (`bash(rm *)`).
//! (`Notification`, when the user is about to be asked, is sent from here too.)

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Calls;
use crate::agent::hook_runs::{hook_input, notify, run_all, show};
use crate::conversation::tool_names::{BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, WEB_FETCH};
use crate::conversation::{FinishedCall, Mode, ToolCall};
use crate::hooks::{HookEvent, Verdict};
use crate::tools::permissions::{Call, DecidedBy, Effect, Permission, Policy, Rules};
use crate::tools::{Access, ProjectPath};

/// Claude Code's names for cairn's tools, so its matchers (`Bash`, `Edit|Write`) and the
/// `allowed-tools` of its command files work here.
pub(in crate::agent) fn tool_alias(name: &str) -> &str {
    match name {
        "Bash" => BASH,
        "Read" => FILE_READ,
        "Write" => FILE_WRITE,
        "Edit" | "MultiEdit" => FILE_EDIT,
        "Glob" => GLOB,
        "Grep" => GREP,
        "WebFetch" => WEB_FETCH,
        other => other,
    }
}

/// Whether a hook's `matcher` covers this call: `*` (or nothing), a tool name (`A|B` for
/// several), `mcp__SERVER` for a server's tools, or a permission-rule pattern (`bash(rm *)`).
fn hook_matches(matcher: &str, root: &std::path::Path, call: &Call<'_>) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    matcher.split('|').map(str::trim).any(|alt| {
        if alt.contains('(') {
            let mut rules = Rules::new();
            if rules.add_flag(Effect::Deny, alt).is_err() {
                return false;
            }
            let d = Policy::new(rules, root).decide(Mode::Edit, call);
            d.permission == Permission::Deny && matches!(d.decided_by, DecidedBy::Rule(_))
        } else {
            crate::tools::permissions::names_tool(tool_alias(alt), call.tool)
        }
    })
}

/// What PreToolUse hooks made of a call.
pub(super) enum PreTool {
    /// Go on, with these arguments (rewritten by a hook, or as sent); `allowed` says which
    /// hook allowed it without asking the user.
    Go { args: Value, rewritten: bool, allowed: Option<String> },
    /// A hook refused it: the text for the model, and the hook (for the call's approval line).
    Deny { message: String, hook: String },
}

impl Calls<'_> {
    /// PreToolUse, after the call's arguments parsed and before the permission check.
    pub(super) async fn pre_tool_hooks(
        &self,
        call: &ToolCall,
        access: Access,
        args: Value,
        paths: &[ProjectPath],
        cancel: &CancellationToken,
    ) -> PreTool {
        if self.ext.hooks.is_empty() {
            return PreTool::Go { args, rewritten: false, allowed: None };
        }
        let root = self.place.root().to_path_buf();
        let matches = |m: &str| hook_matches(m, &root, &Call { tool: &call.name, access, args: &args, paths });
        let hooks = self.ext.hooks.matching(HookEvent::PreToolUse, &matches);
        let mut args = args.clone();
        let mut rewritten = false;
        let mut allowed = None;
        let events = self.link.emitter();
        for hook in hooks {
            let input = hook_input(self.saved.session(), json!({"tool_name": call.name, "tool_input": args}));
            let outcome = self.ext.hooks.run_one(HookEvent::PreToolUse, &hook, input, cancel).await;
            let answer = &outcome.answer;
            match answer.verdict {
                Some(Verdict::Deny) => {
                    let reason = answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                    // The call's own line says it was refused, by whom and why: a notice would
                    // say it a second time.
                    show(&events, HookEvent::PreToolUse, &outcome, None);
                    return PreTool::Deny {
                        message: format!(
                            "`{}` was not run: a PreToolUse hook refused it: {reason}. Do not retry it as it is; find another way, or ask the user.",
                            call.name
                        ),
                        hook: crate::conversation::clip(&outcome.command, 60),
                    };
                }
                Some(Verdict::Allow) => allowed = Some(outcome.command.clone()),
                Some(Verdict::Ask) | None => {}
            }
            let mut said = None;
            if let Some(new_args) = &answer.updated_input {
                args = new_args.clone();
                rewritten = true;
                said = Some(format!(
                    "rewrote the arguments of `{}` to {}",
                    call.name,
                    crate::conversation::clip(&args.to_string(), 200)
                ));
            }
            show(&events, HookEvent::PreToolUse, &outcome, said);
        }
        PreTool::Go { args, rewritten, allowed }
    }

    /// PostToolUse: what its hooks tell the model is added to the result it gets.
    pub(super) async fn post_tool_hooks(
        &self,
        record: &FinishedCall,
        sent: String,
        cancel: &CancellationToken,
    ) -> String {
        if self.ext.hooks.is_empty() {
            return sent;
        }
        let (output, is_error) = (&record.output, record.is_error);
        let args = record.parsed_arguments().unwrap_or(Value::Null);
        let access = self.tools.registry().access_of(&record.tool).unwrap_or(Access::Execute);
        let root = self.place.root().to_path_buf();
        let matches = |m: &str| hook_matches(m, &root, &Call { tool: &record.tool, access, args: &args, paths: &[] });
        let input = hook_input(
            self.saved.session(),
            json!({
                "tool_name": record.tool, "tool_input": args,
                "tool_response": {"content": output, "is_error": is_error},
            }),
        );
        let events = self.link.emitter();
        let outcomes = run_all(&self.ext.hooks, HookEvent::PostToolUse, input, &matches, cancel).await;
        let mut sent = sent;
        for outcome in &outcomes {
            let mut said = Vec::new();
            if let Some(reason) =
                outcome.answer.reason.as_ref().filter(|_| outcome.answer.verdict == Some(Verdict::Deny))
            {
                sent.push_str(&format!("\n\n[PostToolUse hook: {reason}]"));
                said.push(format!("told the model: {reason}"));
            }
            if let Some(context) = &outcome.answer.additional_context {
                sent.push_str(&format!("\n\n[PostToolUse hook]\n{context}"));
                said.push(format!("added {} characters for the model", context.len()));
            }
            show(&events, HookEvent::PostToolUse, outcome, (!said.is_empty()).then(|| said.join("; ")));
        }
        sent
    }

    /// Notification: the user is about to be asked about a call.
    pub(super) fn notify(&self, message: String) {
        notify(&self.ext.hooks, self.saved.session(), &self.link.emitter(), message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_take_names_aliases_servers_and_rule_patterns() {
        let root = std::path::Path::new("/p");
        let rm = json!({"command": "rm -rf build"});
        let ls = json!({"command": "ls && rm x"});
        let git = json!({"command": "git status"});
        let bash = |args| Call { tool: "bash", access: Access::Execute, args, paths: &[] };
        assert!(hook_matches("*", root, &bash(&git)));
        assert!(hook_matches("Bash", root, &bash(&git)));
        assert!(hook_matches("file_edit|bash", root, &bash(&git)));
        assert!(hook_matches("bash(rm *)", root, &bash(&rm)));
        assert!(hook_matches("bash(rm *)", root, &bash(&ls)), "each part of a command line is matched");
        assert!(!hook_matches("bash(rm *)", root, &bash(&git)));
        let mcp = Call { tool: "mcp__github__create_issue", access: Access::Execute, args: &Value::Null, paths: &[] };
        assert!(hook_matches("mcp__github", root, &mcp));
        assert!(!hook_matches("mcp__git", root, &mcp));
        assert!(!hook_matches("mcp__github__create", root, &mcp), "a tool's name matches exactly");
        let wipe = Call { tool: "mcp__evil__search__wipe", access: Access::Execute, args: &Value::Null, paths: &[] };
        assert!(!hook_matches("mcp__evil__search", root, &wipe));
        // However the program is spelled.
        for spelled in ["/bin/rm -rf build", "$'\\x72m' x", "x=rm; $x f", "exec -a x rm f", "env --chdir . rm f"] {
            let args = json!({ "command": spelled });
            let call = Call { tool: "bash", access: Access::Execute, args: &args, paths: &[] };
            assert!(hook_matches("bash(rm *)", root, &call), "{spelled}");
        }
    }
}
