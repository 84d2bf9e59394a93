//! One permission rule: `TOOL` or `TOOL(PATTERN)`, what its pattern means for each tool, and
//! whether it matches a call.
//!
//! - `bash(PATTERN)`: command words; a word that is just `*` stands for any number of words
//!   (none included), a `*` inside a word for any characters in that one word. It is matched
//!   against each simple command of a command line on its own (see `shell`). `git log:*` is
//!   read as `git log *`.
//! - `file_read`, `file_write`, `file_edit`, `glob`, `grep`: a glob of the path. Relative globs
//!   are relative to the project root and never match outside it; a glob without `/` matches
//!   that name at any depth (`.env`, `*.lock`), `./name` only at the root; `dir/` means
//!   everything under `dir`; `/…` and
//!   `~/…` are absolute. `!GLOB` matches every path the glob does not (on the same side of the
//!   project root).
//! - `memory_save(global)` / `memory_save(project)`: the scope of the memory.
//! - `memory_search` and MCP tools (`mcp__SERVER__TOOL`, or `mcp__SERVER` for all of a
//!   server's tools) take no pattern.
//! - `web_fetch(DOMAIN)`: the URL's host is DOMAIN or a subdomain of it (`docs.rs` covers
//!   `docs.rs` and `www.docs.rs`); `*.DOMAIN` means the same.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use super::command_match::{self, PatternWord};
use super::shell::Word;
use crate::conversation::tool_names::{
    BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, MEMORY_SAVE, MEMORY_SEARCH, SKILL, TOOL_SEARCH, WEB_FETCH,
};
use crate::tools::ProjectPath;

/// What a rule does to the calls it matches. Ordered by strength: deny beats ask beats allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

impl Effect {
    pub fn label(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

/// Where a rule comes from. Ordered from the least to the most specific; among rules of equal
/// effect, the most specific one is the one that decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// cairn's own rules (a global memory needs approval).
    Builtin,
    /// `[permissions]` in the user's `config.toml`.
    User,
    /// `.cairn/settings.toml`, committed with the project.
    Project,
    /// `.cairn/settings.local.toml`, this checkout only.
    ProjectLocal,
    /// Approved in the dialog for this session.
    Session,
    /// `--allow` / `--deny` on the command line.
    Cli,
}

impl Level {
    pub fn label(self) -> &'static str {
        match self {
            Level::Builtin => "built-in",
            Level::User => "user config",
            Level::Project => "project",
            Level::ProjectLocal => "project-local",
            Level::Session => "session",
            Level::Cli => "command line",
        }
    }
}

/// The tools a rule may name. A new tool is added here when it is built, so a rule for a tool
/// that does not exist (a typo) is an error rather than a rule that never matches.
pub const TOOLS: &[&str] =
    &[BASH, FILE_READ, FILE_WRITE, FILE_EDIT, GLOB, GREP, MEMORY_SAVE, MEMORY_SEARCH, WEB_FETCH, SKILL, TOOL_SEARCH];

/// A parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    tool: String,
    pattern: Pattern,
    /// As written (after trimming), for messages and for writing it back.
    text: String,
}

#[derive(Clone, Debug)]
enum Pattern {
    Any,
    Command(Vec<PatternWord>),
    Path(PathPattern),
    Memory(MemoryScope),
    /// `web_fetch`: a domain, lower case, without `*.`.
    Domain(String),
}

#[derive(Clone, Debug)]
struct PathPattern {
    negated: bool,
    absolute: bool,
    matcher: GlobMatcher,
}

/// The scope of a memory a `memory_save` call writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScope {
    Project,
    Global,
}

/// What a call offers a rule to match against.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    /// One simple command of a `bash` call: its `FOO=1` prefixes, then its words.
    Command {
        env: &'a [String],
        words: &'a [Word],
    },
    /// The paths a file tool touches.
    Paths(&'a [ProjectPath]),
    Memory(MemoryScope),
    /// The host a `web_fetch` call fetches from.
    Domain(&'a str),
    /// Nothing a pattern could match (the rule must have none).
    Nothing,
}

impl Rule {
    /// Parse `TOOL` or `TOOL(PATTERN)`; the error says what is wrong and how it should look.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        let (tool, pattern) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err("a pattern must end with `)`, as in `bash(git log *)`".into());
                };
                (text[..open].trim_end(), Some(inner.trim()))
            }
        };
        check_tool(tool)?;
        let pattern = match pattern {
            None => Pattern::Any,
            Some("") => {
                return Err(format!(
                    "the pattern is empty; write `{tool}` for every call, or put a pattern in the parentheses"
                ));
            }
            Some(p) => parse_pattern(tool, p)?,
        };
        Ok(Rule { tool: tool.to_string(), pattern, text: text.to_string() })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the rule names this tool: exactly, or as `mcp__SERVER` all of that server's
    /// tools (`mcp__evil__search` names that tool only, not `mcp__evil__search__wipe`).
    pub fn names_tool(&self, tool: &str) -> bool {
        names_tool(&self.tool, tool)
    }

    /// For a `bash` rule with a pattern: whether it could match what `words` run (an
    /// expansion may become any words, a program be named by its path); `None` for a rule
    /// of another kind. A command written with `FOO=1` before it is matched with and without.
    pub fn could_match_command(&self, env: &[String], words: &[Word]) -> Option<bool> {
        let Pattern::Command(pattern) = &self.pattern else { return None };
        let with_env: Vec<Word> = env.iter().map(|e| Word::literal(e.clone())).chain(words.iter().cloned()).collect();
        let any = name_variants(words).into_iter().any(|named| {
            command_match::could_match(pattern, &named)
                || (!env.is_empty() && {
                    let mut all = with_env[..env.len()].to_vec();
                    all.extend(named);
                    command_match::could_match(pattern, &all)
                })
        });
        Some(any)
    }

    /// Whether the rule has a pattern (`bash(rm *)`), rather than naming every call.
    pub fn has_pattern(&self) -> bool {
        !matches!(self.pattern, Pattern::Any)
    }

    /// Whether the rule covers `subject`. For paths, an allow rule must cover every path of
    /// the call and an ask or deny rule any one of them: `all_paths` says which.
    pub fn matches(&self, subject: Subject<'_>, all_paths: bool) -> bool {
        match (&self.pattern, subject) {
            (Pattern::Any, _) => true,
            (Pattern::Command(pattern), Subject::Command { env, words }) => {
                let mut all: Vec<Word> = env.iter().map(|e| Word::literal(e.clone())).collect();
                all.extend_from_slice(words);
                command_match::matches(pattern, &all)
            }
            (Pattern::Path(pattern), Subject::Paths(paths)) => {
                !paths.is_empty()
                    && if all_paths {
                        paths.iter().all(|p| pattern.matches(p))
                    } else {
                        paths.iter().any(|p| pattern.matches(p))
                    }
            }
            (Pattern::Memory(scope), Subject::Memory(actual)) => *scope == actual,
            (Pattern::Domain(domain), Subject::Domain(host)) => {
                let host = host.to_ascii_lowercase();
                host == *domain || host.strip_suffix(domain.as_str()).is_some_and(|sub| sub.ends_with('.'))
            }
            (Pattern::Command(_) | Pattern::Path(_) | Pattern::Memory(_) | Pattern::Domain(_), _) => false,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether a rule for `rule_tool` names `tool`: the same name, or `mcp__SERVER` (a name with
/// no `__` after the prefix: server names have none) naming every tool of that server.
pub fn names_tool(rule_tool: &str, tool: &str) -> bool {
    rule_tool == tool
        || rule_tool.strip_prefix("mcp__").is_some_and(|server| {
            !server.contains("__") && tool.strip_prefix(rule_tool).is_some_and(|r| r.starts_with("__"))
        })
}

/// The command as written, and with its name as the program it runs: `/bin/rm` is also
/// `rm`, and `rm` is also `/usr/bin/rm` (where PATH finds it, links resolved).
fn name_variants(words: &[Word]) -> Vec<Vec<Word>> {
    let mut out = vec![words.to_vec()];
    let Some(first) = words.first().filter(|w| w.is_plain()) else { return out };
    let name = first.text.as_str();
    let mut names = vec![super::shell::program_base(name).to_string()];
    let resolved =
        if name.contains('/') { std::fs::canonicalize(name).ok() } else { super::readonly::find_in_path(name) };
    if let Some(path) = resolved {
        names.push(path.display().to_string());
        if let Some(base) = path.file_name() {
            names.push(base.to_string_lossy().into_owned());
        }
    }
    for n in names {
        if n != name && !out.iter().any(|v| v[0].text == n) {
            let mut variant = words.to_vec();
            variant[0] = Word::literal(n);
            out.push(variant);
        }
    }
    out
}

fn check_tool(tool: &str) -> Result<(), String> {
    if TOOLS.contains(&tool) {
        return Ok(());
    }
    if let Some(rest) = tool.strip_prefix("mcp__")
        && !rest.is_empty()
        && rest
            .split("__")
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        return Ok(());
    }
    let lower = tool.to_ascii_lowercase();
    let hint = match lower.as_str() {
        _ if TOOLS.contains(&lower.as_str()) => format!(" (did you mean `{lower}`? tool names are lower case)"),
        "read" => " (did you mean `file_read`?)".into(),
        "write" => " (did you mean `file_write`?)".into(),
        "edit" => " (did you mean `file_edit`?)".into(),
        _ => String::new(),
    };
    if tool.is_empty() {
        return Err(format!(
            "no tool named; a rule is `TOOL` or `TOOL(PATTERN)`, with TOOL one of {}",
            TOOLS.join(", ")
        ));
    }
    Err(format!(
        "there is no tool `{tool}`{hint}; a rule names one of {} or an MCP tool as `mcp__SERVER__TOOL`",
        TOOLS.join(", ")
    ))
}

fn parse_pattern(tool: &str, pattern: &str) -> Result<Pattern, String> {
    match tool {
        BASH => parse_command_pattern(pattern).map(Pattern::Command),
        FILE_READ | FILE_WRITE | FILE_EDIT | GLOB | GREP => parse_path_pattern(pattern).map(Pattern::Path),
        MEMORY_SAVE => match pattern {
            "global" => Ok(Pattern::Memory(MemoryScope::Global)),
            "project" => Ok(Pattern::Memory(MemoryScope::Project)),
            other => Err(format!("memory_save takes `global` or `project` as its pattern, not `{other}`")),
        },
        WEB_FETCH => parse_domain(pattern).map(Pattern::Domain),
        _ => Err(format!("`{tool}` takes no pattern; write just `{tool}`")),
    }
}

/// `example.com` or `*.example.com`: a host name, no scheme, path or port.
fn parse_domain(pattern: &str) -> Result<String, String> {
    let domain = pattern.strip_prefix("*.").unwrap_or(pattern).to_ascii_lowercase();
    let valid = !domain.is_empty()
        && domain
            .split('.')
            .all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if valid {
        Ok(domain)
    } else {
        Err(format!("web_fetch takes a domain as its pattern, like `docs.rs` or `*.github.com`, not `{pattern}`"))
    }
}

/// Split a bash pattern into words the way the shell would (quotes group, `\` escapes); an
/// unquoted `*` word is "any words".
fn parse_command_pattern(pattern: &str) -> Result<Vec<PatternWord>, String> {
    let (pattern, legacy_rest) = match pattern.strip_suffix(":*") {
        Some(head) => (head, true),
        None => (pattern, false),
    };
    let mut words = Vec::new();
    let mut word = WordBuilder::default();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => word.finish(&mut words),
            '\'' | '"' => {
                word.started = true;
                word.quoted = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => match chars.next() {
                            Some(e) => word.quoted_char(e)?,
                            None => return Err("the pattern ends inside a quote".into()),
                        },
                        Some(other) => word.quoted_char(other)?,
                        None => return Err("the pattern ends inside a quote".into()),
                    }
                }
            }
            '\\' => {
                word.started = true;
                word.quoted = true;
                match chars.next() {
                    Some(e) => word.quoted_char(e)?,
                    None => return Err("the pattern ends with a lone `\\`".into()),
                }
            }
            '*' => {
                if word.quoted_star {
                    return Err(STARS_MIXED.into());
                }
                word.started = true;
                word.star = true;
                word.text.push('*');
            }
            other => {
                word.started = true;
                word.text.push(other);
            }
        }
    }
    word.finish(&mut words);
    if legacy_rest {
        words.push(PatternWord::Rest);
    }
    if words.is_empty() {
        return Err("the pattern has no words; write `bash` for every command".into());
    }
    Ok(words)
}

const STARS_MIXED: &str = "a quoted `*` cannot share a word with an unquoted one";

#[derive(Default)]
struct WordBuilder {
    text: String,
    started: bool,
    quoted: bool,
    star: bool,
    quoted_star: bool,
}

impl WordBuilder {
    fn quoted_char(&mut self, c: char) -> Result<(), String> {
        if c == '*' {
            if self.star {
                return Err(STARS_MIXED.into());
            }
            self.quoted_star = true;
        }
        self.text.push(c);
        Ok(())
    }

    fn finish(&mut self, words: &mut Vec<PatternWord>) {
        let done = std::mem::take(self);
        if !done.started {
            return;
        }
        words.push(if !done.quoted && done.text == "*" {
            PatternWord::Rest
        } else if done.star {
            PatternWord::Glob(done.text)
        } else {
            PatternWord::Literal(done.text)
        });
    }
}

fn parse_path_pattern(pattern: &str) -> Result<PathPattern, String> {
    let (negated, glob) = match pattern.strip_prefix('!') {
        Some(rest) => (true, rest.trim()),
        None => (false, pattern),
    };
    if glob.is_empty() {
        return Err("`!` needs a glob after it, as in `file_write(!.env)`".into());
    }
    let (absolute, glob) = if let Some(rest) = glob.strip_prefix("~/") {
        let home = std::env::var_os("HOME").ok_or("the pattern starts with `~/` but HOME is not set")?;
        (true, Path::new(&home).join(rest).to_string_lossy().into_owned())
    } else if glob.starts_with('/') {
        (true, glob.to_string())
    } else {
        // `./name` is anchored at the root; a bare `name` matches at any depth.
        let (anchored, glob) = match glob.strip_prefix("./") {
            Some(rest) => (true, rest),
            None => (false, glob),
        };
        let glob = match glob.strip_suffix('/') {
            Some(dir) => format!("{dir}/**"),
            None if !anchored && !glob.contains('/') => format!("**/{glob}"),
            None => glob.to_string(),
        };
        (false, glob)
    };
    let matcher = GlobBuilder::new(&glob)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("`{glob}` is not a valid glob: {}", e.kind()))?
        .compile_matcher();
    Ok(PathPattern { negated, absolute, matcher })
}

impl PathPattern {
    fn matches(&self, path: &ProjectPath) -> bool {
        let hit = if self.absolute {
            self.matcher.is_match(&path.absolute)
        } else if path.inside_project {
            self.matcher.is_match(PathBuf::from(&path.display))
        } else {
            // A relative pattern, negated or not, says nothing about paths outside.
            return false;
        };
        hit != self.negated
    }
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
