//! The hook steps of a turn, each a small function the turn and the dispatcher call at its
//! point: `PreToolUse` before a call is decided (allow, deny with a reason, rewrite its
//! arguments), `PostToolUse` after it ran (feedback for the model), `UserPromptSubmit` before a
//! prompt is stored (context added, or the prompt blocked), `Stop` when the model would end
//! its turn (a reason to go on), `SessionStart`, `PreCompact` (may block a compaction) and
//! `Notification` (cairn needs the user). Every hook that says something is shown as a notice,
//! in the TUI and headless alike.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::events::NoticeLevel;
use crate::agent::link::Emitter;
use crate::conversation::tool_names::{BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, WEB_FETCH};
use crate::conversation::{Mode, ToolCall};
use crate::hooks::{HookEvent, HookOutcome, Hooks, Verdict};
use crate::tools::permissions::{Call, DecidedBy, Effect, Permission, Policy, Rules};
use crate::tools::{Access, ProjectPath};

/// Claude Code's names for cairn's tools, so its matchers (`Bash`, `Edit|Write`) and the
/// `allowed-tools` of its command files work here.
pub(super) fn tool_alias(name: &str) -> &str {
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
pub(super) fn hook_matches(matcher: &str, root: &std::path::Path, call: &Call<'_>) -> bool {
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
    /// A hook refused it: the text for the model.
    Deny(String),
}

/// The lines a hook's outcome shows in the transcript, if it said anything.
fn show(events: &Emitter, event: HookEvent, outcome: &HookOutcome, what: Option<String>) {
    let who = format!("{} hook `{}`", event.name(), crate::conversation::clip(&outcome.command, 60));
    if let Some(failure) = &outcome.answer.failure {
        events.notice(NoticeLevel::Warning, format!("{who} {failure}"));
    }
    if let Some(message) = &outcome.answer.message {
        events.notice(NoticeLevel::Info, format!("{who}: {message}"));
    }
    if let Some(what) = what {
        events.notice(NoticeLevel::Info, format!("{who}: {what}"));
    }
}

async fn run_all(
    hooks: &Hooks,
    event: HookEvent,
    input: Value,
    matches: &(dyn Fn(&str) -> bool + Sync),
    cancel: &CancellationToken,
) -> Vec<HookOutcome> {
    let mut outcomes = Vec::new();
    for hook in hooks.matching(event, matches) {
        let outcome = hooks.run_one(event, &hook, input.clone(), cancel).await;
        let denied = outcome.answer.verdict == Some(Verdict::Deny);
        outcomes.push(outcome);
        if denied {
            break;
        }
    }
    outcomes
}

impl Worker {
    fn hook_input(&self, extra: Value) -> Value {
        let mut input = json!({"session_id": self.session.id()});
        if let (Some(map), Value::Object(extra)) = (input.as_object_mut(), extra) {
            map.extend(extra);
        }
        input
    }

    /// PreToolUse, after the call's arguments parsed and before the permission check.
    pub(super) async fn pre_tool_hooks(
        &mut self,
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
            let input = self.hook_input(json!({"tool_name": call.name, "tool_input": args}));
            let outcome = self.ext.hooks.run_one(HookEvent::PreToolUse, &hook, input, cancel).await;
            let answer = &outcome.answer;
            match answer.verdict {
                Some(Verdict::Deny) => {
                    let reason = answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                    show(&events, HookEvent::PreToolUse, &outcome, Some(format!("refused `{}`: {reason}", call.name)));
                    return PreTool::Deny(format!(
                        "`{}` was not run: a PreToolUse hook refused it: {reason}. Do not retry it as it is; find another way, or ask the user.",
                        call.name
                    ));
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
        &mut self,
        call: &ToolCall,
        output: &str,
        is_error: bool,
        sent: String,
        cancel: &CancellationToken,
    ) -> String {
        if self.ext.hooks.is_empty() {
            return sent;
        }
        let args = call.parsed_arguments().unwrap_or(Value::Null);
        let access = self.tools.registry().access_of(&call.name).unwrap_or(Access::Execute);
        let root = self.place.root().to_path_buf();
        let matches = |m: &str| hook_matches(m, &root, &Call { tool: &call.name, access, args: &args, paths: &[] });
        let input = self.hook_input(json!({
            "tool_name": call.name, "tool_input": args,
            "tool_response": {"content": output, "is_error": is_error},
        }));
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

    /// UserPromptSubmit: the prompt with what the hooks add, or why it was blocked.
    pub(super) async fn prompt_hooks(&mut self, prompt: String, cancel: &CancellationToken) -> Result<String, String> {
        let mut prompt = prompt;
        if let Some(context) = self.ext.take_session_context() {
            prompt.push_str(&format!("\n\n[Context from a SessionStart hook]\n{context}"));
        }
        if self.ext.hooks.is_empty() {
            return Ok(prompt);
        }
        let input = self.hook_input(json!({"prompt": prompt}));
        let events = self.link.emitter();
        let outcomes = run_all(&self.ext.hooks, HookEvent::UserPromptSubmit, input, &|_| true, cancel).await;
        for outcome in &outcomes {
            if outcome.answer.verdict == Some(Verdict::Deny) {
                let reason = outcome.answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                show(&events, HookEvent::UserPromptSubmit, outcome, Some(format!("blocked the prompt: {reason}")));
                return Err(format!("the prompt was blocked by a UserPromptSubmit hook: {reason}"));
            }
            let said = outcome.answer.additional_context.as_ref().map(|context| {
                prompt.push_str(&format!("\n\n[Context from a UserPromptSubmit hook]\n{context}"));
                format!("added {} characters of context", context.len())
            });
            show(&events, HookEvent::UserPromptSubmit, outcome, said);
        }
        Ok(prompt)
    }

    /// Stop: a hook's reason to go on (fed to the model), or `None` to end the turn.
    pub(super) async fn stop_hooks(&mut self, already_continued: bool, cancel: &CancellationToken) -> Option<String> {
        if self.ext.hooks.is_empty() {
            return None;
        }
        let input = self.hook_input(json!({"stop_hook_active": already_continued}));
        let events = self.link.emitter();
        let outcomes = run_all(&self.ext.hooks, HookEvent::Stop, input, &|_| true, cancel).await;
        for outcome in &outcomes {
            if outcome.answer.verdict == Some(Verdict::Deny) {
                let reason = outcome.answer.reason.clone().unwrap_or_else(|| "a Stop hook asked to go on".into());
                show(&events, HookEvent::Stop, outcome, Some(format!("asked the model to go on: {reason}")));
                return Some(reason);
            }
            show(&events, HookEvent::Stop, outcome, None);
        }
        None
    }

    /// SessionStart: what the hooks print is shown and kept for the session's first prompt.
    pub(super) async fn session_start_hooks(&mut self, source: &str) {
        if self.ext.hooks.is_empty() {
            return;
        }
        let input = self.hook_input(json!({"source": source}));
        let events = self.link.emitter();
        let cancel = CancellationToken::new();
        let outcomes = run_all(&self.ext.hooks, HookEvent::SessionStart, input, &|_| true, &cancel).await;
        for outcome in &outcomes {
            let said = outcome.answer.additional_context.as_ref().map(|context| {
                self.ext.add_session_context(context);
                format!("added {} characters of context for the first prompt", context.len())
            });
            show(&events, HookEvent::SessionStart, outcome, said);
        }
    }

    /// Notification: cairn needs the user (an approval, a finished turn). Runs in the
    /// background: a slow notifier never holds the agent.
    pub(super) fn notify_hooks(&self, message: String) {
        if self.ext.hooks.is_empty() {
            return;
        }
        let hooks = self.ext.hooks.clone();
        let events = self.link.emitter();
        let input = self.hook_input(json!({"message": message}));
        tokio::spawn(async move {
            let cancel = CancellationToken::new();
            for outcome in run_all(&hooks, HookEvent::Notification, input, &|_| true, &cancel).await {
                show(&events, HookEvent::Notification, &outcome, None);
            }
        });
    }

    /// PreCompact, run where the compaction runs (in the background): `Err` blocks it.
    pub(super) fn pre_compact_check(
        &self,
        trigger: &'static str,
    ) -> impl std::future::Future<Output = Result<(), String>> + Send + 'static {
        let hooks = self.ext.hooks.clone();
        let events = self.link.emitter();
        let input = self.hook_input(json!({"trigger": trigger, "custom_instructions": ""}));
        async move {
            if hooks.is_empty() {
                return Ok(());
            }
            let cancel = CancellationToken::new();
            for outcome in run_all(&hooks, HookEvent::PreCompact, input, &|_| true, &cancel).await {
                if outcome.answer.verdict == Some(Verdict::Deny) {
                    let reason = outcome.answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                    show(&events, HookEvent::PreCompact, &outcome, Some(format!("blocked the compaction: {reason}")));
                    return Err(format!("a PreCompact hook blocked it: {reason}"));
                }
                show(&events, HookEvent::PreCompact, &outcome, None);
            }
            Ok(())
        }
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
