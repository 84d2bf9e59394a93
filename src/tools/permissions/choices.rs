//! What the approval dialog may offer to remember for a call that asked: the exact rule, and a
//! prefix of it (shown before it is taken), for the session (`a`) or the project (`p`). Never
//! "every call of this tool": a rule always carries a pattern, and commands that run arbitrary
//! code (`rm`, `bash`, `python`, `curl`, …) get no prefix at all. MCP tools, whose rules take
//! no pattern, are the exception: the tool (`mcp__fs__write_file`), or all of its server's
//! tools (`mcp__fs`) as the broader rule.

use std::path::Path;

use super::rule::Rule;
use super::shell::{Part, PartKind, Word};
use crate::conversation::tool_names::{FILE_READ, FILE_WRITE};
use crate::tools::{ProjectPath, resolve_path};

/// The rules the dialog may offer; `a` takes the shown list for the session, `p` writes it to
/// `.cairn/settings.local.toml`. The dialog shows `exact` and switches to `prefix` (when there
/// is one) only when asked, so a broader rule is always seen before it is taken. An empty list
/// is not offered; each list covers every part of the call that asked, or is empty.
#[derive(Clone, Debug, Default)]
pub struct Choices {
    /// Exactly this call: `bash(git push origin main)`, `file_edit(./src/a.rs)`.
    pub exact: Vec<Rule>,
    /// The same commands with any further arguments (`git push *`), or every file in the same
    /// folder (`file_edit(src/)`).
    pub prefix: Vec<Rule>,
}

impl Choices {
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefix.is_empty()
    }

    fn from_pairs(pairs: Vec<(Option<Rule>, Option<Rule>)>) -> Choices {
        let exact: Option<Vec<Rule>> = pairs.iter().map(|(e, _)| e.clone()).collect();
        let Some(exact) = exact else { return Choices::default() };
        let with_prefix: Vec<Rule> = pairs
            .iter()
            .map(|(e, p)| p.clone().or_else(|| e.clone()))
            .collect::<Option<Vec<Rule>>>()
            .unwrap_or_default();
        let broader = pairs.iter().any(|(_, p)| p.is_some());
        Choices { exact: dedup(exact), prefix: if broader { dedup(with_prefix) } else { Vec::new() } }
    }
}

fn dedup(rules: Vec<Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    for r in rules {
        if !out.iter().any(|o| o.text() == r.text()) {
            out.push(r);
        }
    }
    out
}

/// Tools whose second word is the real command (`git push`, `cargo test`).
const TWO_WORD: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "go",
    "docker",
    "podman",
    "kubectl",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "rustup",
    "dotnet",
    "mvn",
    "gradle",
    "brew",
    "apt",
    "systemctl",
];

/// Commands whose arguments decide everything they do: no prefix is offered for them.
const NO_PREFIX: &[&str] = &[
    "rm",
    "rmdir",
    "sudo",
    "doas",
    "su",
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "php",
    "eval",
    "exec",
    "env",
    "xargs",
    "find",
    "sed",
    "awk",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "dd",
    "chmod",
    "chown",
    "mv",
    "cp",
    "ln",
    "kill",
    "pkill",
    "killall",
    "nohup",
    "timeout",
    "nice",
    "time",
    "command",
    "source",
    ".",
    "npx",
    "bunx",
    "tee",
    "truncate",
    "shred",
    "mkfs",
    "git-shell",
];

pub fn choices_for_bash(parts: &[&Part], root: &Path) -> Choices {
    let pairs = parts
        .iter()
        .map(|part| match part.kind {
            PartKind::Write | PartKind::Read => {
                let tool = if part.kind == PartKind::Write { FILE_WRITE } else { FILE_READ };
                let paths: Vec<ProjectPath> =
                    part.words.iter().filter(|w| w.literal).map(|w| resolve_path(root, &w.text)).collect();
                if paths.len() != part.words.len() || paths.len() != 1 {
                    return (None, None);
                }
                path_pair(tool, &paths[0])
            }
            PartKind::Command | PartKind::Assignment | PartKind::Declaration | PartKind::Test => command_pair(part),
            // Nothing a rule could name.
            PartKind::Evaluation => (None, None),
        })
        .collect();
    Choices::from_pairs(pairs)
}

pub fn choices_for_paths(tool: &str, paths: &[ProjectPath]) -> Choices {
    if paths.is_empty() {
        return Choices::default();
    }
    Choices::from_pairs(paths.iter().map(|p| path_pair(tool, p)).collect())
}

/// An MCP tool's own rule, and its server's as the broader one.
pub fn choices_for_mcp(tool: &str) -> Choices {
    let server = tool.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")).map(|(server, _)| server);
    let exact = rule(tool);
    let prefix = server.and_then(|s| rule(&format!("mcp__{s}")));
    Choices::from_pairs(vec![(exact, prefix)])
}

fn command_pair(part: &Part) -> (Option<Rule>, Option<Rule>) {
    if part.words.iter().any(|w| !w.literal) {
        return (None, None);
    }
    let words: Vec<String> = part.env.iter().cloned().chain(part.words.iter().map(|w| w.text.clone())).collect();
    let exact = rule(&format!("bash({})", join(&words)));
    let prefix = prefix_len(part).and_then(|n| {
        let head: Vec<String> = part.words[..n].iter().map(|w| w.text.clone()).collect();
        rule(&format!("bash({} *)", join(&head)))
    });
    (exact, prefix)
}

/// How many leading words a prefix rule keeps, or `None` when none should be offered.
fn prefix_len(part: &Part) -> Option<usize> {
    if part.kind != PartKind::Command || !part.env.is_empty() {
        return None;
    }
    let name = part.name()?;
    if NO_PREFIX.contains(&name) || name.contains('/') {
        return None;
    }
    let literal_word = |i: usize| part.words.get(i).filter(|w: &&Word| w.literal && !w.text.starts_with('-'));
    if TWO_WORD.contains(&name) {
        let sub = literal_word(1)?;
        // `npm run build`: the script is the command.
        if matches!(sub.text.as_str(), "run" | "exec" | "x") {
            literal_word(2)?;
            return Some(3);
        }
        return Some(2);
    }
    Some(1)
}

fn path_pair(tool: &str, path: &ProjectPath) -> (Option<Rule>, Option<Rule>) {
    let exact_text = if path.inside_project {
        format!("./{}", escape_glob(&path.display))
    } else {
        escape_glob(&path.absolute.to_string_lossy())
    };
    let exact = rule(&format!("{tool}({exact_text})"));
    let prefix = if path.inside_project {
        Path::new(&path.display)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .and_then(|dir| rule(&format!("{tool}({}/)", escape_glob(&dir.to_string_lossy()))))
    } else {
        path.absolute
            .parent()
            .filter(|p| p.parent().is_some())
            .and_then(|dir| rule(&format!("{tool}({}/)", escape_glob(&dir.to_string_lossy()))))
    };
    (exact, prefix)
}

fn rule(text: &str) -> Option<Rule> {
    Rule::parse(text).ok()
}

/// Words of a bash rule, quoted where the rule parser would otherwise read them differently.
fn join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty() && !w.chars().any(|c| c.is_whitespace() || "'\"\\*".contains(c)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "*?[]{}\\!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
