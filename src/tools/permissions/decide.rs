//! The decision for one tool call: allow, ask or deny, what decided it, and for an ask what
//! the dialog may offer to remember.
//!
//! Order of checks: ask mode refuses everything; then the rules (deny beats ask beats allow);
//! then the mode's defaults. Plan mode never lets a write or a command outside the read-only
//! set through, whatever an allow rule says; deny and ask rules still apply to what it lets
//! through. For `bash`, each simple command of the line (and each redirection to or from a
//! file) is decided on its own, and the line gets the strongest of their answers.

use std::path::PathBuf;

use super::choices::{Choices, choices_for_bash, choices_for_mcp, choices_for_paths};
use super::readonly;
use super::rule::{Effect, MemoryScope, Subject};
use super::rules::{Rules, SourcedRule};
use super::shell::{self, Part, PartKind};
use crate::conversation::Mode;
use crate::tools::{Access, ProjectPath, resolve_path};

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
    fn rule(rule: &SourcedRule) -> DecidedBy {
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
}

impl Decision {
    fn allow(decided_by: DecidedBy) -> Decision {
        Decision {
            permission: Permission::Allow,
            decided_by,
            reason: String::new(),
            parts: Vec::new(),
            choices: Choices::default(),
        }
    }

    fn ask(decided_by: DecidedBy, reason: String, choices: Choices) -> Decision {
        Decision { permission: Permission::Ask, decided_by, reason, parts: Vec::new(), choices }
    }

    fn deny(decided_by: DecidedBy, reason: String) -> Decision {
        Decision { permission: Permission::Deny, decided_by, reason, parts: Vec::new(), choices: Choices::default() }
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
        if call.tool == "bash" {
            let command = call.args.get("command").and_then(|c| c.as_str()).unwrap_or("");
            return self.decide_bash(mode, command);
        }
        let scope;
        let subject = match call.tool {
            "file_read" | "file_write" | "file_edit" | "glob" | "grep" => Subject::Paths(call.paths),
            "memory_save" => {
                scope = match call.args.get("scope").and_then(|s| s.as_str()) {
                    Some("global") => MemoryScope::Global,
                    _ => MemoryScope::Project,
                };
                Subject::Memory(scope)
            }
            "web_fetch" => Subject::Domain(url_host(call.args)),
            _ => Subject::Nothing,
        };
        self.decide_tool(mode, call.tool, call.access, subject, call.paths)
    }

    fn decide_tool(
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

    fn decide_bash(&self, mode: Mode, command: &str) -> Decision {
        // `deny bash` holds even for what cannot be parsed.
        if let Some(r) = self.rules.find("bash", Subject::Nothing, Effect::Deny) {
            return Decision::deny(DecidedBy::rule(r), denied_by_rule("bash", "every command", r));
        }
        let script = shell::parse(command);
        if let Some(why) = &script.unparsable {
            if let Some(r) = self.rules.find("bash", Subject::Nothing, Effect::Allow)
                && mode == Mode::Edit
            {
                return Decision::allow(DecidedBy::rule(r));
            }
            return match mode {
                Mode::Edit => Decision::ask(
                    DecidedBy::Unparsable,
                    format!(
                        "the command could not be split into simple commands ({why}), so its parts cannot be checked"
                    ),
                    Choices::default(),
                ),
                Mode::Plan | Mode::Ask => Decision::deny(
                    DecidedBy::Unparsable,
                    format!(
                        "`bash` was not run: the command could not be split into simple commands ({why}), so plan mode cannot tell that it only reads. Use simpler read-only commands, one per line of a pipeline or list."
                    ),
                ),
            };
        }
        let parts: Vec<PartDecision> = script.parts.iter().map(|p| self.decide_part(mode, p)).collect();
        let strongest = parts.iter().map(|p| p.permission).max().unwrap_or(Permission::Allow);
        let mut decision = match strongest {
            Permission::Deny => {
                let Some(first) = parts.iter().find(|p| p.permission == Permission::Deny) else {
                    return Decision::allow(DecidedBy::ReadOnlySet);
                };
                Decision::deny(first.decided_by.clone(), first.why.clone())
            }
            Permission::Ask => {
                let asking: Vec<&PartDecision> = parts.iter().filter(|p| p.permission == Permission::Ask).collect();
                // A line of one command needs no quoting of itself: just why.
                let reason = match asking.as_slice() {
                    [only] if parts.len() == 1 => only.why.clone(),
                    _ => asking.iter().map(|p| format!("`{}`: {}", p.text, p.why)).collect::<Vec<_>>().join("; "),
                };
                let by_rule = asking.iter().any(|p| matches!(p.decided_by, DecidedBy::Rule(_)));
                let choices = if by_rule {
                    Choices::default()
                } else {
                    let asking_parts: Vec<&Part> = script
                        .parts
                        .iter()
                        .zip(&parts)
                        .filter(|(_, d)| d.permission == Permission::Ask)
                        .map(|(p, _)| p)
                        .collect();
                    choices_for_bash(&asking_parts, &self.root)
                };
                let decided_by = asking.first().map(|p| p.decided_by.clone()).unwrap_or(DecidedBy::Mode(mode));
                Decision::ask(decided_by, reason, choices)
            }
            Permission::Allow => {
                let by_rule = parts.iter().find(|p| matches!(p.decided_by, DecidedBy::Rule(_)));
                let by = by_rule.or(parts.first()).map(|p| p.decided_by.clone()).unwrap_or(DecidedBy::ReadOnlySet);
                Decision::allow(by)
            }
        };
        decision.parts = parts;
        decision
    }

    fn decide_part(&self, mode: Mode, part: &Part) -> PartDecision {
        let text = part.display();
        let verdict = |permission: Permission, decided_by: DecidedBy, why: String| PartDecision {
            text: text.clone(),
            permission,
            decided_by,
            why,
        };
        match part.kind {
            PartKind::Write | PartKind::Read => {
                let (tool, access) = if part.kind == PartKind::Write {
                    ("file_write", Access::Write)
                } else {
                    ("file_read", Access::Read)
                };
                let paths: Vec<ProjectPath> =
                    part.words.iter().filter(|w| w.literal).map(|w| resolve_path(&self.root, &w.text)).collect();
                if paths.len() != part.words.len() {
                    // `> "$HOME/y"`: where it goes is known only when it runs.
                    return match mode {
                        Mode::Edit => verdict(
                            Permission::Ask,
                            DecidedBy::Mode(mode),
                            "redirects to a path computed when it runs".into(),
                        ),
                        Mode::Plan | Mode::Ask => verdict(
                            Permission::Deny,
                            DecidedBy::Mode(mode),
                            plan_refusal(&text, "it redirects to a path computed when it runs"),
                        ),
                    };
                }
                // `allow bash` with no pattern lets a command write where it likes.
                if mode == Mode::Edit
                    && self.rules.decide(tool, Subject::Paths(&paths)).is_none()
                    && let Some(r) = self.rules.find("bash", Subject::Nothing, Effect::Allow)
                {
                    return verdict(Permission::Allow, DecidedBy::rule(r), String::new());
                }
                let d = self.decide_tool(mode, tool, access, Subject::Paths(&paths), &paths);
                let why = match (d.permission, mode, part.kind) {
                    (Permission::Deny, Mode::Plan, PartKind::Write) if matches!(d.decided_by, DecidedBy::Mode(_)) => {
                        plan_refusal(&text, &format!("it writes to {}", describe_paths(&paths)))
                    }
                    (Permission::Deny, _, _) => d.reason,
                    (Permission::Ask, _, _) => format!(
                        "{} {}",
                        if part.kind == PartKind::Write { "writes to" } else { "reads" },
                        describe_paths(&paths)
                    ),
                    (Permission::Allow, _, _) => String::new(),
                };
                verdict(d.permission, d.decided_by, why)
            }
            PartKind::Command | PartKind::Assignment | PartKind::Declaration | PartKind::Test => {
                let subject = Subject::Command { env: &part.env, words: &part.words };
                let mut rule = self.rules.decide("bash", subject);
                // `timeout 5 git push`, `env git push`: a deny or ask rule sees through wrappers.
                for inner in unwrap(part) {
                    if let Some(r) =
                        self.rules.decide("bash", Subject::Command { env: &inner.env, words: &inner.words })
                        && r.effect != Effect::Allow
                        && rule.is_none_or(|b| r.effect > b.effect)
                    {
                        rule = Some(r);
                    }
                }
                if let Some(r) = rule.filter(|r| r.effect == Effect::Deny) {
                    return verdict(
                        Permission::Deny,
                        DecidedBy::rule(r),
                        denied_by_rule("bash", &format!("`{text}`"), r),
                    );
                }
                let read_only = readonly::check(part, &self.root);
                if let (Mode::Plan, Err(why)) = (mode, &read_only) {
                    return verdict(Permission::Deny, DecidedBy::Mode(mode), plan_refusal(&text, why));
                }
                if let Some(r) = rule.filter(|r| r.effect == Effect::Ask) {
                    return verdict(Permission::Ask, DecidedBy::rule(r), format!("the rule `{}` asks for it", r.rule));
                }
                let allow_rule = rule.filter(|r| r.effect == Effect::Allow);
                match read_only {
                    Ok(paths) => {
                        // Reading a file through bash is checked like file_read: its deny and ask
                        // rules hold, and reading outside the project needs a rule or the user.
                        if let Some(r) =
                            self.rules.decide("file_read", Subject::Paths(&paths)).filter(|r| r.effect != Effect::Allow)
                        {
                            return match r.effect {
                                Effect::Deny => verdict(
                                    Permission::Deny,
                                    DecidedBy::rule(r),
                                    denied_by_rule("bash", &format!("`{text}` reads {}", describe_paths(&paths)), r),
                                ),
                                Effect::Ask | Effect::Allow => verdict(
                                    Permission::Ask,
                                    DecidedBy::rule(r),
                                    format!("the rule `{}` asks for reading {}", r.rule, describe_paths(&paths)),
                                ),
                            };
                        }
                        let outside: Vec<ProjectPath> = paths.into_iter().filter(|p| !p.inside_project).collect();
                        if let Some(r) = allow_rule {
                            return verdict(Permission::Allow, DecidedBy::rule(r), String::new());
                        }
                        if outside.is_empty() {
                            return verdict(Permission::Allow, DecidedBy::ReadOnlySet, String::new());
                        }
                        if let Some(r) = self.rules.find("file_read", Subject::Paths(&outside), Effect::Allow) {
                            return verdict(Permission::Allow, DecidedBy::rule(r), String::new());
                        }
                        let shown = describe_paths(&outside);
                        match mode {
                            Mode::Edit => verdict(
                                Permission::Ask,
                                DecidedBy::Mode(mode),
                                format!("reads outside the project: {shown}"),
                            ),
                            Mode::Plan | Mode::Ask => verdict(
                                Permission::Deny,
                                DecidedBy::Mode(mode),
                                format!(
                                    "`bash` was not run: `{text}` reads {shown}, outside the project, and plan mode only reads inside it."
                                ),
                            ),
                        }
                    }
                    Err(why) => match allow_rule {
                        Some(r) => verdict(Permission::Allow, DecidedBy::rule(r), String::new()),
                        None => verdict(Permission::Ask, DecidedBy::Mode(mode), why),
                    },
                }
            }
        }
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

fn plan_refusal(part: &str, why: &str) -> String {
    format!(
        "`bash` was not run: the session is in plan mode, where only read-only commands run (ls, cat, head, wc, rg, grep, find, git status/log/diff/show/blame, …), and `{part}` is not one: {why}. Describe the change in your plan instead; the user can switch to edit mode to carry it out."
    )
}

fn denied_by_rule(tool: &str, subject: &str, rule: &SourcedRule) -> String {
    format!(
        "`{tool}` was not run: {subject} is denied by the rule `{}` ({}). Do not retry it or work around it; find another way, or ask the user.",
        rule.rule,
        match &rule.origin {
            super::rules::Origin::Unwritten => rule.level.label().to_string(),
            origin => format!("{}, {origin}", rule.level.label()),
        }
    )
}

fn describe_paths(paths: &[ProjectPath]) -> String {
    paths.iter().map(|p| p.display.as_str()).collect::<Vec<_>>().join(", ")
}

fn describe_subject(tool: &str, paths: &[ProjectPath]) -> String {
    if paths.is_empty() { format!("this `{tool}` call") } else { describe_paths(paths) }
}

/// Commands that run the command after their own options unchanged, so a deny rule for the
/// inner command holds through them.
fn unwrap(part: &Part) -> Vec<Part> {
    let mut out = Vec::new();
    let mut current = part.clone();
    for _ in 0..4 {
        let Some(name) = current.name() else { break };
        let words = &current.words;
        // Options of each wrapper that take a value.
        let valued: &[&str] = match name {
            "timeout" => &["-s", "--signal", "-k", "--kill-after"],
            "nice" => &["-n", "--adjustment"],
            "sudo" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            "xargs" => &["-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a"],
            "stdbuf" => &["-i", "-o", "-e"],
            "env" => &["-u", "-C", "-S"],
            "nohup" | "time" | "command" | "exec" | "setsid" | "doas" => &[],
            _ => break,
        };
        let mut i = 1;
        while i < words.len() {
            let w = &words[i].text;
            if name == "env" && w.contains('=') && !w.starts_with('-') {
                i += 1;
            } else if w.starts_with('-') && w != "-" {
                i += if valued.contains(&w.as_str()) { 2 } else { 1 };
            } else {
                break;
            }
        }
        if name == "timeout" {
            i += 1; // the duration
        }
        if i >= words.len() {
            break;
        }
        current = Part { kind: PartKind::Command, env: Vec::new(), words: words[i..].to_vec() };
        out.push(current.clone());
    }
    out
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
