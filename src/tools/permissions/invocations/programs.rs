//! What particular programs run in turn: `env`, `xargs`, `find`, shells, interpreters, `awk`
//! and `git` (its `-c` settings and aliases).

use super::{Inner, after_options, literal_script, opaque, rest_from};
use crate::tools::permissions::shell::{self, Word};
use crate::tools::permissions::words::words_of;

pub(super) fn env(args: &[Word]) -> Inner {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.is_plain() {
            return opaque("its arguments are computed when they run");
        }
        let t = w.text.as_str();
        if let Some(split) = t.strip_prefix("-S").or_else(|| t.strip_prefix("--split-string=")) {
            // `env -S 'rm f' more…`: the string is split into words, like a tiny shell.
            let string = if split.is_empty() && t == "-S" {
                match args.get(i + 1) {
                    Some(s) if s.is_plain() => s.text.clone(),
                    _ => return opaque("`env -S` splits a string computed when it runs"),
                }
            } else {
                split.to_string()
            };
            let skip = if t == "-S" { 2 } else { 1 };
            let mut words: Vec<Word> = string.split_whitespace().flat_map(words_of).collect();
            words.extend(args[(i + skip).min(args.len())..].iter().cloned());
            return if words.is_empty() { Inner::Nothing } else { Inner::Argv(words) };
        }
        match t {
            "--" => return rest_from(args, Some(i + 1)),
            "-u" | "--unset" | "-C" | "--chdir" | "--default-signal" | "--ignore-signal" | "--block-signal" => i += 2,
            _ if t.starts_with('-') && t != "-" => i += 1,
            _ if t.contains('=') => i += 1,
            _ => return rest_from(args, Some(i)),
        }
    }
    Inner::Nothing
}

pub(super) fn xargs(args: &[Word]) -> Inner {
    const VALUED: &[&str] = &[
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--eof",
        "--replace",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    let Some(at) = after_options(args, VALUED) else { return opaque("its options are computed when they run") };
    // With no command xargs runs `echo`; the command gets words read from its input.
    let mut inner: Vec<Word> = if at < args.len() { args[at..].to_vec() } else { vec![Word::literal("echo")] };
    inner.push(Word::dynamic("‹input›"));
    Inner::Argv(inner)
}

pub(super) fn find(args: &[Word]) -> Inner {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let end = (start..args.len()).find(|&k| args[k].text == ";" || args[k].text == "+").unwrap_or(args.len());
            let words: Vec<Word> = args[start..end]
                .iter()
                .map(|w| if w.text.contains("{}") { Word::dynamic(w.text.clone()) } else { w.clone() })
                .collect();
            if !words.is_empty() {
                found.push(words);
            }
            i = end;
        }
        i += 1;
    }
    if found.is_empty() { Inner::Nothing } else { Inner::Many(found) }
}

pub(super) fn shell_inner(shell: &str, args: &[Word]) -> Inner {
    let mut has_c = false;
    for (i, w) in args.iter().enumerate() {
        if !w.is_plain() {
            return opaque(format!("`{shell}` is given arguments computed when it runs"));
        }
        let t = w.text.as_str();
        if t == "--" {
            return if has_c { literal_script(args.get(i + 1)) } else { Inner::Nothing };
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            continue;
        }
        if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
            has_c |= t.contains('c');
            if t.contains('s') {
                return opaque(format!("`{shell} -s` runs commands from its input"));
            }
            continue;
        }
        if t.starts_with("--") {
            continue;
        }
        return if has_c { literal_script(Some(w)) } else { Inner::Nothing };
    }
    // No script and no file: it runs what it reads from its input.
    opaque(format!("`{shell}` runs commands from its input"))
}

pub(super) fn interpreter(base: &str, args: &[Word]) -> Inner {
    let inline = args.iter().any(|w| {
        let t = w.text.as_str();
        !w.is_plain()
            || matches!(t, "-c" | "-e" | "-E" | "-p" | "-r" | "--eval" | "--print" | "-" | "eval")
            || (t.starts_with("-c") && base.starts_with("py"))
            || (t.starts_with("-e") && !t.starts_with("--"))
    });
    let reads_input = args.iter().all(|w| w.text.starts_with('-'));
    if inline || reads_input {
        opaque(format!("`{base}` runs code given inline or on its input, which cairn cannot read"))
    } else {
        Inner::Nothing
    }
}

/// An awk program that can run a command: `system()`, pipes to or from a command,
/// `getline` from one.
pub(super) fn awk(args: &[Word]) -> Inner {
    let program = args.iter().find(|w| !w.text.starts_with('-') || w.text == "-");
    let from_file = args.iter().any(|w| w.text == "-f" || w.text.starts_with("--file"));
    match program {
        _ if from_file => opaque("its awk program comes from a file"),
        Some(p) if p.is_plain() => {
            let t = &p.text;
            if t.contains("system") || t.contains('|') || t.contains("getline") || t.contains("@load") {
                opaque("its awk program can run commands")
            } else {
                Inner::Nothing
            }
        }
        Some(p) => opaque(format!("its awk program `{}` is computed when it runs", p.text)),
        None => Inner::Nothing,
    }
}

/// Configuration keys a `git -c` may set that change nothing about what git runs.
const GIT_HARMLESS_KEYS: &[&str] = &[
    "color.",
    "user.",
    "advice.",
    "log.",
    "format.pretty",
    "core.quotepath",
    "core.abbrev",
    "i18n.",
    "init.defaultbranch",
    "column.",
    "grep.",
    "diff.renames",
    "diff.algorithm",
    "diff.context",
    "diff.noprefix",
    "status.",
    "merge.conflictstyle",
    "pull.rebase",
    "commit.gpgsign",
    "tag.gpgsign",
    "safe.directory",
    "core.autocrlf",
    "core.safecrlf",
    "core.whitespace",
];

/// The git builtins: any other name may be an alias the repository's configuration defines,
/// or a `git-NAME` program.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "hash-object",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mv",
    "name-rev",
    "notes",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
    "maintenance",
    "prune",
    "lfs",
    "mergetool",
    "request-pull",
    "send-email",
    "instaweb",
    "citool",
    "gui",
    "gitk",
];

pub(super) fn git(args: &[Word]) -> Inner {
    let mut scripts = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.is_plain() {
            return opaque("its arguments are computed when they run");
        }
        let t = w.text.as_str();
        let value = |k: usize| args.get(k).filter(|w| w.is_plain()).map(|w| w.text.clone());
        if t == "-c" || t.starts_with("--config-env") {
            let setting = if t == "-c" { value(i + 1) } else { t.split_once('=').map(|(_, v)| v.to_string()) };
            i += if t == "-c" { 2 } else { 1 };
            let Some(setting) = setting else { return opaque("a `git -c` setting is computed when it runs") };
            if t != "-c" {
                return opaque("`git --config-env` takes a setting from the environment");
            }
            let (key, val) = setting.split_once('=').unwrap_or((setting.as_str(), ""));
            let key = key.to_ascii_lowercase();
            if let Some(alias) = key.strip_prefix("alias.") {
                scripts.push((alias.to_string(), val.strip_prefix('!').map(str::to_string)));
            } else if !GIT_HARMLESS_KEYS.iter().any(|k| key.starts_with(k)) {
                return opaque(format!("`git -c {key}=…` can name a program git runs"));
            }
            continue;
        }
        if matches!(t, "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix") {
            i += 2;
            continue;
        }
        if t.starts_with("--exec-path") {
            return opaque("`git --exec-path` changes where git finds the programs it runs");
        }
        if t.starts_with('-') {
            i += 1;
            continue;
        }
        // The subcommand.
        if let Some((_, alias)) = scripts.iter().find(|(name, _)| name == t) {
            return match alias {
                Some(shell) => {
                    let mut text = shell.clone();
                    for extra in &args[i + 1..] {
                        text.push(' ');
                        text.push_str(&shell::quote(&extra.text));
                    }
                    Inner::Script(text)
                }
                None => opaque(format!("`git {t}` is an alias set on the command line")),
            };
        }
        if !GIT_COMMANDS.contains(&t) {
            return opaque(format!(
                "`git {t}` is no git command: it may be an alias the repository defines, or another program"
            ));
        }
        return super::options::git_subcommand(t, &args[i + 1..]);
    }
    Inner::Nothing
}
