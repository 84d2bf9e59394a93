//! Every rule in force, from every level, and which one decides a call.
//!
//! Precedence: among the rules that match, **deny beats ask beats allow**, whatever their
//! level; among rules of that same effect, the one from the **most specific level** decided
//! (command line, then session, project-local, project, user config, built-in), and within a
//! level the first one written. So a deny anywhere cannot be undone by an allow anywhere, and an
//! ask rule keeps asking even when something broader is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

use super::rule::{Effect, Level, Rule, Subject};
use super::shell::Word;
use crate::config::{PermissionsConfig, RuleText};
use crate::conversation::tool_names::BASH;

/// Where a rule was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File {
        path: PathBuf,
        line: usize,
    },
    /// `--allow` or `--deny`.
    Flag(&'static str),
    /// Approved in the dialog, or cairn's own.
    Unwritten,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::Unwritten => Ok(()),
        }
    }
}

/// A rule in force.
#[derive(Clone, Debug)]
pub struct SourcedRule {
    pub rule: Rule,
    pub effect: Effect,
    pub level: Level,
    pub origin: Origin,
}

impl SourcedRule {
    /// `deny bash(rm *) (project, .cairn/settings.toml:4)`.
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Unwritten => format!("{} {} ({})", self.effect.label(), self.rule, self.level.label()),
            origin => format!("{} {} ({}, {origin})", self.effect.label(), self.rule, self.level.label()),
        }
    }
}

/// A rule that cannot be used: where it is, what it says, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{origin}: bad permission rule `{rule}`: {message}\n  fix or remove it; a rule is TOOL or TOOL(PATTERN), e.g. bash(git log *) or file_edit(src/**)"
)]
pub struct RuleError {
    pub origin: Origin,
    pub rule: String,
    pub message: String,
}

/// The rules of every level.
#[derive(Clone, Debug)]
pub struct Rules {
    rules: Vec<SourcedRule>,
}

/// cairn's own rules, below every other level.
const BUILTIN: &[(Effect, &str)] = &[
    // A global memory is injected into every project's prompt: one prompt injection would
    // become a standing instruction everywhere, so saving one always needs the user.
    (Effect::Ask, "memory_save(global)"),
];

impl Default for Rules {
    fn default() -> Rules {
        Rules::new()
    }
}

impl Rules {
    /// The built-in rules only.
    pub fn new() -> Rules {
        let mut rules = Rules { rules: Vec::new() };
        for (effect, text) in BUILTIN {
            // The built-in texts are constants the tests parse.
            if let Ok(rule) = Rule::parse(text) {
                rules.push(*effect, Level::Builtin, rule, Origin::Unwritten);
            }
        }
        rules
    }

    pub fn push(&mut self, effect: Effect, level: Level, rule: Rule, origin: Origin) {
        let duplicate =
            self.rules.iter().any(|r| r.effect == effect && r.level == level && r.rule.text() == rule.text());
        if !duplicate {
            self.rules.push(SourcedRule { rule, effect, level, origin });
        }
    }

    /// Add the `[permissions]` table of one file at `level`.
    pub fn add_config(&mut self, level: Level, config: &PermissionsConfig, path: &Path) -> Result<(), RuleError> {
        let lists: [(Effect, &Vec<RuleText>); 3] =
            [(Effect::Allow, &config.allow), (Effect::Ask, &config.ask), (Effect::Deny, &config.deny)];
        for (effect, list) in lists {
            for text in list {
                let origin = Origin::File { path: path.to_path_buf(), line: text.line };
                let rule = Rule::parse(&text.text).map_err(|message| RuleError {
                    origin: origin.clone(),
                    rule: text.text.clone(),
                    message,
                })?;
                self.push(effect, level, rule, origin);
            }
        }
        Ok(())
    }

    /// `--allow RULE` / `--deny RULE`: the parsing for the command-line flags.
    pub fn add_flag(&mut self, effect: Effect, text: &str) -> Result<(), RuleError> {
        let flag = match effect {
            Effect::Allow => "--allow",
            Effect::Ask => "--ask",
            Effect::Deny => "--deny",
        };
        let rule = Rule::parse(text).map_err(|message| RuleError {
            origin: Origin::Flag(flag),
            rule: text.to_string(),
            message,
        })?;
        self.push(effect, Level::Cli, rule, Origin::Flag(flag));
        Ok(())
    }

    /// Drop every rule of `level` (the session's approvals, when the session ends).
    pub fn forget(&mut self, level: Level) {
        self.rules.retain(|r| r.level != level);
    }

    /// Every rule, in the order they were added (for `doctor`).
    pub fn iter(&self) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter()
    }

    /// The rule that decides `subject` of `tool`, if any matches: the strongest effect, then
    /// the most specific level, then the first written. An allow rule must cover every path of
    /// a call; an ask or deny rule any one of them.
    pub fn decide(&self, tool: &str, subject: Subject<'_>) -> Option<&SourcedRule> {
        let mut best: Option<&SourcedRule> = None;
        for r in &self.rules {
            if !r.rule.names_tool(tool) || !r.rule.matches(subject, r.effect == Effect::Allow) {
                continue;
            }
            if best.is_none_or(|b| (r.effect, r.level) > (b.effect, b.level)) {
                best = Some(r);
            }
        }
        best
    }

    /// The most specific `bash` rule of `effect` with a pattern that could match a program
    /// run with `words` (see [`Rule::could_match_command`]).
    pub fn could_match_bash(&self, env: &[String], words: &[Word], effect: Effect) -> Option<&SourcedRule> {
        let mut best: Option<&SourcedRule> = None;
        for r in &self.rules {
            if r.effect == effect
                && r.rule.names_tool(BASH)
                && r.rule.could_match_command(env, words) == Some(true)
                && best.is_none_or(|b| r.level > b.level)
            {
                best = Some(r);
            }
        }
        best
    }

    /// The most specific `bash` rule of `effect` with a pattern: one that could match a
    /// command cairn cannot analyse.
    pub fn bash_pattern_rule(&self, effect: Effect) -> Option<&SourcedRule> {
        let mut best: Option<&SourcedRule> = None;
        for r in &self.rules {
            if r.effect == effect
                && r.rule.names_tool(BASH)
                && r.rule.has_pattern()
                && best.is_none_or(|b| r.level > b.level)
            {
                best = Some(r);
            }
        }
        best
    }

    /// Whether any rule of `effect` names `tool`.
    pub fn has(&self, tool: &str, effect: Effect) -> bool {
        self.rules.iter().any(|r| r.effect == effect && r.rule.names_tool(tool))
    }

    /// The strongest matching rule of exactly `effect`, if any.
    pub fn find(&self, tool: &str, subject: Subject<'_>, effect: Effect) -> Option<&SourcedRule> {
        let mut best: Option<&SourcedRule> = None;
        for r in &self.rules {
            if r.effect == effect
                && r.rule.names_tool(tool)
                && r.rule.matches(subject, effect == Effect::Allow)
                && best.is_none_or(|b| r.level > b.level)
            {
                best = Some(r);
            }
        }
        best
    }
}
