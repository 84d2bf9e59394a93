//! The decision for one tool call: allow, ask or deny, what decided it, and for an ask what
//! the dialog may offer to remember.
//!
//! Order of checks: ask mode refuses everything; then the rules (deny beats ask beats allow);
//! then the mode's defaults. Plan mode never lets a write or a command outside the read-only
//! set through, whatever an allow rule says; deny and ask rules still apply to what it lets
//! through. For `bash`, each simple command of the line (and each redirection to or from a
//! file) is decided on its own, and the line gets the strongest of their answers.

use std::path::PathBuf;

use super::choices::{Choices, choices_for_mcp, choices_for_paths};
use super::rule::{Effect, MemoryScope, Subject};
use super::rules::{Rules, SourcedRule};
use crate::conversation::Mode;
use crate::conversation::tool_names::{BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, MEMORY_SAVE, WEB_FETCH};
use crate::tools::{Access, ProjectPath};

/// The answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

/// What decided a call, for the approval line, the headless `decided_by` and `doctor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecidedBy {
    /// A rule: `allow bash(git log *) (project-local, .cairn/settings.local.toml:3)`.
    Rule(String),
    /// The read-only command set let a command through.
    ReadOnlySet,
    /// The mode's default (ask mode refuses everything; plan mode refuses writes; edit mode
    /// asks for writes and commands).
    Mode(Mode),
    /// The shell parser could not split the command, so it asks.
    Unparsable,
}

impl DecidedBy {
    pub(super) fn rule(rule: &SourcedRule) -> DecidedBy {
        DecidedBy::Rule(rule.describe())
    }

    /// For the headless `decided_by` field (INTERFACE.md): the rule as described, or
    /// `read-only set`, `mode`, `unparsable command`.
    pub fn short(&self) -> String {
        match self {
            DecidedBy::Rule(text) => text.clone(),
            DecidedBy::ReadOnlySet => "read-only set".into(),
            DecidedBy::Mode(_) => "mode".into(),
            DecidedBy::Unparsable => "unparsable command".into(),
        }
    }

    /// For the transcript's approval line: `rule: …`, `read-only set`, `mode: plan`,
    /// `unparsable command`.
    pub fn label(&self) -> String {
        match self {
            DecidedBy::Rule(text) => format!("rule: {text}"),
            DecidedBy::ReadOnlySet => "read-only set".into(),
            DecidedBy::Mode(mode) => format!("mode: {}", mode.as_str()),
            DecidedBy::Unparsable => "unparsable command".into(),
        }
    }
}

/// The decision for one simple command of a `bash` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartDecision {
    /// The part as written (`git log --oneline`, `> out.txt`).
    pub text: String,
    pub permission: Permission,
    pub decided_by: DecidedBy,
    /// Why it needs asking or was refused; empty when allowed.
    pub why: String,
    /// Only the user in the dialog may approve it (a write to a protected path).
    pub needs_user: bool,
}

impl PartDecision {
    /// A part's verdict that anyone may answer.
    pub(super) fn new(text: &str, permission: Permission, decided_by: DecidedBy, why: String) -> PartDecision {
        PartDecision { text: text.to_string(), permission, decided_by, why, needs_user: false }
    }
}

/// The decision for a call.
#[derive(Clone, Debug)]
pub struct Decision {
    pub permission: Permission,
    pub decided_by: DecidedBy,
    /// Ask: what the call does that needs approval (for the dialog). Deny: the message for the
    /// model, saying what refused it and what to do instead. Allow: empty.
    pub reason: String,
    /// `bash` only: each part's decision, in order.
    pub parts: Vec<PartDecision>,
    /// Ask only: what the dialog may offer to remember. Empty lists are not offered.
    pub choices: Choices,
    /// `bash`, allowed: every part was proven read-only and no rule had to allow it, so it
    /// runs in the read-only sandbox (reads confined to the project and system folders),
    /// whatever the mode.
    pub read_only: bool,
    /// `bash`, allowed: paths outside the project a `file_read` allow rule lets it read.
    pub extra_reads: Vec<std::path::PathBuf>,
    /// Ask only: only the user answering the dialog may approve it — not `--yes` (a write to
    /// a protected path: git configuration, `.cairn/`, `.claude/`, …).
    pub needs_user: bool,
}

impl Decision {
    pub(super) fn allow(decided_by: DecidedBy) -> Decision {
        Decision::new(Permission::Allow, decided_by, String::new(), Choices::default())
    }

    pub(super) fn ask(decided_by: DecidedBy, reason: String, choices: Choices) -> Decision {
        Decision::new(Permission::Ask, decided_by, reason, choices)
    }

    pub(super) fn deny(decided_by: DecidedBy, reason: String) -> Decision {
        Decision::new(Permission::Deny, decided_by, reason, Choices::default())
    }

    fn new(permission: Permission, decided_by: DecidedBy, reason: String, choices: Choices) -> Decision {
        Decision {
            permission,
            decided_by,
            reason,
            parts: Vec::new(),
            choices,
            read_only: false,
            extra_reads: Vec::new(),
            needs_user: false,
        }
    }
}

/// One call, as the policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub tool: &'a str,
    pub access: Access,
    pub args: &'a serde_json::Value,
    /// The paths `prepare` resolved (empty for tools without paths).
    pub paths: &'a [ProjectPath],
}

/// The rules in force for a project.
#[derive(Clone, Debug)]
pub struct Policy {
    pub rules: Rules,
    /// Canonical project root.
    pub root: PathBuf,
}

impl Policy {
    pub fn new(rules: Rules, root: impl Into<PathBuf>) -> Policy {
        Policy { rules, root: root.into() }
    }

    /// Decide `call` in `mode`.
    pub fn decide(&self, mode: Mode, call: &Call<'_>) -> Decision {
        if mode == Mode::Ask {
            return Decision::deny(
                DecidedBy::Mode(mode),
                format!(
                    "`{}` was not run: the session is in ask mode, where no tools run. Answer from what you already know, or ask the user to switch to edit mode (Shift+Tab or /mode edit).",
                    call.tool
                ),
            );
        }
        if call.tool == BASH {
            let command = call.args.get("command").and_then(|c| c.as_str()).unwrap_or("");
            return self.decide_bash(mode, command);
        }
        let scope;
        let subject = match call.tool {
            FILE_READ | FILE_WRITE | FILE_EDIT | GLOB | GREP => Subject::Paths(call.paths),
            MEMORY_SAVE => {
                scope = match call.args.get("scope").and_then(|s| s.as_str()) {
                    Some("global") => MemoryScope::Global,
                    _ => MemoryScope::Project,
                };
                Subject::Memory(scope)
            }
            WEB_FETCH => Subject::Domain(url_host(call.args)),
            _ => Subject::Nothing,
        };
        self.decide_tool(mode, call.tool, call.access, subject, call.paths)
    }

    pub(super) fn decide_tool(
        &self,
        mode: Mode,
        tool: &str,
        access: Access,
        subject: Subject<'_>,
        paths: &[ProjectPath],
    ) -> Decision {
        let rule = self.rules.decide(tool, subject);
        if let Some(r) = rule.filter(|r| r.effect == Effect::Deny) {
            return Decision::deny(DecidedBy::rule(r), denied_by_rule(tool, &describe_subject(tool, paths), r));
        }
        // A search reads what it searches: `file_read` deny rules hold for it too.
        if tool == GREP
            && let Some(r) = self.rules.decide(FILE_READ, subject).filter(|r| r.effect == Effect::Deny)
        {
            return Decision::deny(DecidedBy::rule(r), denied_by_rule(tool, &describe_subject(tool, paths), r));
        }
        let outside: Vec<&str> = paths.iter().filter(|p| !p.inside_project).map(|p| p.display.as_str()).collect();
        // A fetch from a domain a rule allows is the one non-read-only call plan mode runs.
        let allowed_fetch = access == Access::Network && rule.is_some_and(|r| r.effect == Effect::Allow);
        if mode == Mode::Plan && !access.is_read_only() && !allowed_fetch {
            return Decision::deny(
                DecidedBy::Mode(mode),
                format!(
                    "`{tool}` was not run: the session is in plan mode, which is read-only (file_read, glob, grep, read-only bash commands and the memory tools). Describe the change in your plan instead; the user can switch to edit mode to carry it out."
                ),
            );
        }
        if access == Access::Write
            && let Some(why) = paths.iter().find_map(|p| super::protected::protection(&self.root, &p.absolute))
        {
            return self.protected_write(&why, paths);
        }
        if let Some(r) = rule.filter(|r| r.effect == Effect::Ask) {
            // An ask rule keeps asking: offering to remember an allow would change nothing.
            return Decision::ask(
                DecidedBy::rule(r),
                format!("the rule `{}` asks for {}", r.rule, describe_subject(tool, paths)),
                Choices::default(),
            );
        }
        if let Some(r) = rule.filter(|r| r.effect == Effect::Allow) {
            return Decision::allow(DecidedBy::rule(r));
        }
        let ask = |reason: String| Decision::ask(DecidedBy::Mode(mode), reason, choices_for_paths(tool, paths));
        match (mode, access) {
            (Mode::Plan, _) if !outside.is_empty() => Decision::deny(
                DecidedBy::Mode(mode),
                format!(
                    "`{tool}` was not run: {} is outside the project, and plan mode only reads inside it.",
                    outside.join(", ")
                ),
            ),
            (Mode::Plan, _) => Decision::allow(DecidedBy::Mode(mode)),
            (_, Access::Read | Access::Memory) if outside.is_empty() => Decision::allow(DecidedBy::Mode(mode)),
            (_, Access::Read | Access::Memory) => ask(format!("reads outside the project: {}", outside.join(", "))),
            (_, Access::Write) if !outside.is_empty() => {
                ask(format!("writes outside the project: {}", outside.join(", ")))
            }
            // A file that does not exist yet is created, not changed: the dialog says which.
            (_, Access::Write) if !paths.is_empty() && paths.iter().all(|p| !p.absolute.exists()) => {
                ask(format!("creates {}", describe_paths(paths)))
            }
            (_, Access::Write) => ask(format!("changes {}", describe_subject(tool, paths))),
            (_, Access::Execute) if tool.starts_with("mcp__") => {
                Decision::ask(DecidedBy::Mode(mode), describe_mcp_call(tool), choices_for_mcp(tool))
            }
            (_, Access::Execute) => ask("runs a command".into()),
            (_, Access::Network) => ask("fetches a web page".into()),
        }
    }
}

impl Policy {
    /// What `grep` and `glob` must skip while walking: files a deny rule for the tool or for
    /// `file_read` covers.
    pub fn read_denials(&self) -> crate::tools::ReadDenials {
        let (rules, root) = (self.rules.clone(), self.root.clone());
        crate::tools::ReadDenials::new(move |tool, path| {
            let p = crate::tools::resolve_path(&root, &path.to_string_lossy());
            let paths = std::slice::from_ref(&p);
            [tool, FILE_READ]
                .iter()
                .any(|t| rules.decide(t, Subject::Paths(paths)).is_some_and(|r| r.effect == Effect::Deny))
        })
    }

    /// A write to a protected path always asks, whatever the rules (issue 22): only the user
    /// in the dialog may approve it, each time — not `--yes`, not an allow rule of any level,
    /// and the dialog offers no rule to remember.
    fn protected_write(&self, why: &str, paths: &[ProjectPath]) -> Decision {
        let mut d = Decision::ask(
            DecidedBy::Mode(Mode::Edit),
            format!(
                "writes {}, a protected path ({why}): only you can approve it, here in the dialog",
                describe_paths(paths)
            ),
            Choices::default(),
        );
        d.needs_user = true;
        d
    }
}

/// The host of a `web_fetch` call's `url` (empty when it has none: no domain rule matches).
fn url_host(args: &serde_json::Value) -> &str {
    let url = args.get("url").and_then(|u| u.as_str()).unwrap_or("");
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    }
}

pub(super) fn plan_refusal(part: &str, why: &str) -> String {
    format!(
        "`bash` was not run: the session is in plan mode, where only read-only commands run (ls, cat, head, wc, rg, grep, find, git status/log/diff/show/blame, …), and `{part}` is not one: {why}. Describe the change in your plan instead; the user can switch to edit mode to carry it out."
    )
}

pub(super) fn denied_by_rule(tool: &str, subject: &str, rule: &SourcedRule) -> String {
    format!(
        "`{tool}` was not run: {subject} is denied by the rule `{}` ({}). Do not retry it or work around it; find another way, or ask the user.",
        rule.rule,
        match &rule.origin {
            super::rules::Origin::Unwritten => rule.level.label().to_string(),
            origin => format!("{}, {origin}", rule.level.label()),
        }
    )
}

pub(super) fn describe_paths(paths: &[ProjectPath]) -> String {
    paths.iter().map(|p| p.display.as_str()).collect::<Vec<_>>().join(", ")
}

fn describe_subject(tool: &str, paths: &[ProjectPath]) -> String {
    if paths.is_empty() { format!("this `{tool}` call") } else { describe_paths(paths) }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

/// Why an MCP call asks, as the dialog's "This call …" line reads it: the tool and its server.
fn describe_mcp_call(tool: &str) -> String {
    match tool.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
        Some((server, name)) => format!("runs the MCP tool `{name}` of the server `{server}`"),
        None => format!("runs the MCP tool `{tool}`"),
    }
}
