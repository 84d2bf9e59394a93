//! The read-only command set: simple commands that cannot change anything, with the flags
//! that would make them change something (or run something else) excluded. They run without
//! asking in edit mode and are allowed in plan mode; anything not recognised here is not
//! read-only. The list errs on the side of asking.

use std::path::Path;

use super::shell::{Part, PartKind, Word};
use crate::tools::{ProjectPath, resolve_path};

/// A part that only reads, and the paths among its arguments (so reads outside the project and
/// `file_read` deny rules can be checked), or why it is not read-only.
pub fn check(part: &Part, root: &Path) -> Result<Vec<ProjectPath>, String> {
    match part.kind {
        PartKind::Test => Ok(Vec::new()),
        PartKind::Read => Ok(part.words.iter().filter(|w| w.literal).map(|w| resolve_path(root, &w.text)).collect()),
        PartKind::Write => Err(format!("it writes to `{}`", part.words.first().map(|w| w.text.as_str()).unwrap_or(""))),
        PartKind::Assignment => {
            let text = part.words.first().map(|w| w.text.as_str()).unwrap_or("");
            let name = text.split(['=', '[']).next().unwrap_or("");
            // Lower-case names are the script's own; the environment's (PATH, LD_PRELOAD, GIT_*)
            // are upper case and change what the following commands do.
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                Ok(Vec::new())
            } else {
                Err(format!("it sets `{name}`, which changes what the following commands do"))
            }
        }
        PartKind::Declaration => Err("it changes the environment of the following commands".into()),
        PartKind::Command => command(part, root),
    }
}

/// Commands that touch no file whatever their arguments, so an expanded argument is harmless.
const PRINT_ONLY: &[&str] = &["echo", "printf", "true", "false", ":", "test", "[", "seq", "sleep"];

fn command(part: &Part, root: &Path) -> Result<Vec<ProjectPath>, String> {
    let Some(name) = part.name() else {
        return Err("its command name is computed when it runs".into());
    };
    if !part.env.is_empty() {
        return Err(format!("it runs `{name}` with {} set", part.env.join(" ")));
    }
    let base = match name.strip_prefix("/usr/bin/").or_else(|| name.strip_prefix("/bin/")) {
        Some(base) => base,
        None if name.contains('/') => return Err(format!("`{name}` is a program cairn does not know")),
        None => name,
    };
    if let Some(w) = part.words.iter().find(|w| !w.literal)
        && !PRINT_ONLY.contains(&base)
    {
        return Err(format!(
            "its argument `{}` is expanded when it runs, so what it touches is not known before",
            w.text
        ));
    }
    let args: Vec<&str> = part.words[1..].iter().map(|w| w.text.as_str()).collect();
    let verdict = match base {
        // Read and print, whatever the flags.
        "cat" | "head" | "wc" | "ls" | "stat" | "du" | "df" | "pwd" | "echo" | "printf" | "true" | "false" | ":"
        | "basename" | "dirname" | "realpath" | "readlink" | "nl" | "cut" | "tr" | "rev" | "column" | "comm"
        | "cmp" | "diff" | "grep" | "egrep" | "fgrep" | "which" | "whoami" | "id" | "uname" | "md5sum" | "sha1sum"
        | "sha256sum" | "sha512sum" | "b2sum" | "cksum" | "base64" | "od" | "hexdump" | "strings" | "jq" | "test"
        | "[" | "printenv" | "seq" | "sleep" | "tac" | "fold" | "fmt" | "expand" | "unexpand" | "join" | "paste"
        | "numfmt" | "tail" | "nproc" | "free" | "uptime" | "locale" | "groups" | "arch" | "ps" | "pgrep" | "type"
        | "cd" => Ok(()),
        "tree" => forbid(&args, &["-o"], &[]),
        "file" => forbid(&args, &["-C", "--compile"], &[]),
        "sort" => sort(&args),
        "uniq" | "xxd" => at_most_positionals(base, &args, 1),
        "env" | "hostname" if args.is_empty() => Ok(()),
        "env" | "hostname" => Err(format!("`{base}` with arguments runs or changes something")),
        "date" => date(&args),
        "command" => match args.first() {
            Some(&"-v") | Some(&"-V") => Ok(()),
            _ => Err("`command` runs the command it names".into()),
        },
        "rg" => forbid(&args, &["--pre"], &["--pre="]),
        "fd" | "fdfind" => forbid(&args, &["-x", "--exec", "-X", "--exec-batch"], &["--exec="]),
        "find" => forbid(
            &args,
            &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"],
            &[],
        ),
        "sed" => sed(&args),
        "git" => git(&args),
        "cargo" => match args.as_slice() {
            ["--version" | "-V" | "version"] => Ok(()),
            ["tree", ..] => Ok(()),
            _ => Err("only `cargo tree` and `cargo --version` are read-only".into()),
        },
        "rustc" | "node" | "python" | "python3" | "go" | "npm" => match args.as_slice() {
            ["--version" | "-V" | "version"] => Ok(()),
            _ => Err(format!("`{base}` runs code")),
        },
        other => Err(format!("`{other}` is not in the read-only command set")),
    };
    verdict?;
    // `cd` with no target goes home; `cd -` to wherever the shell was before.
    if base == "cd" && matches!(args.as_slice(), [] | ["-"]) {
        return Ok(vec![resolve_path(root, "~/")]);
    }
    if PRINT_ONLY.contains(&base) {
        return Ok(Vec::new());
    }
    Ok(paths(base, &part.words[1..], root))
}

/// The arguments that may name files, resolved; options only where their value looks like a
/// path (`--file=/etc/x`).
fn paths(base: &str, args: &[Word], root: &Path) -> Vec<ProjectPath> {
    let mut out = Vec::new();
    for (i, w) in args.iter().enumerate() {
        let text = w.text.as_str();
        if let Some(value) = text.strip_prefix('-').and_then(|t| t.split_once('=').map(|(_, v)| v)) {
            if looks_like_path(value) {
                out.push(resolve_path(root, value));
            }
            continue;
        }
        if text.starts_with('-') || text.is_empty() {
            continue;
        }
        // `git log -- path` and the like: a subcommand is not a path, a revision rarely is.
        if base == "git" && i == 0 {
            continue;
        }
        if text.starts_with('+') && base == "date" {
            continue;
        }
        out.push(resolve_path(root, text));
    }
    out
}

fn looks_like_path(value: &str) -> bool {
    value.starts_with('/') || value.starts_with("~/") || value.split('/').any(|c| c == "..")
}

/// Refuse the listed flags (exactly, or as the start of `--flag=value`).
fn forbid(args: &[&str], exact: &[&str], prefixes: &[&str]) -> Result<(), String> {
    match args.iter().find(|a| exact.contains(a) || prefixes.iter().any(|p| a.starts_with(p))) {
        Some(flag) => Err(format!("`{flag}` makes it write or run something")),
        None => Ok(()),
    }
}

fn at_most_positionals(base: &str, args: &[&str], n: usize) -> Result<(), String> {
    if args.iter().filter(|a| !a.starts_with('-')).count() > n {
        return Err(format!("`{base}` writes its last file argument"));
    }
    if base == "xxd" && args.iter().any(|a| a.starts_with("-r")) {
        return Err("`xxd -r` writes binary output".into());
    }
    Ok(())
}

fn sort(args: &[&str]) -> Result<(), String> {
    let writes = args
        .iter()
        .any(|a| a.starts_with("--output") || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('o')));
    if writes { Err("`sort -o` writes a file".into()) } else { Ok(()) }
}

fn date(args: &[&str]) -> Result<(), String> {
    for a in args {
        if a.starts_with("-s") || a.starts_with("--set") || (!a.starts_with('-') && !a.starts_with('+')) {
            return Err("`date` with that argument sets the clock".into());
        }
    }
    Ok(())
}

/// `sed` without `-i` or a script file, whose scripts only print, delete from the output,
/// quit, or substitute without the `w` and `e` flags.
fn sed(args: &[&str]) -> Result<(), String> {
    let mut scripts = Vec::new();
    let mut positional_script = true;
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        match *a {
            a if a.starts_with("-i") || a.starts_with("--in-place") => {
                return Err(format!("`sed {a}` edits files in place"));
            }
            "-f" | "--file" => return Err("`sed -f` runs a script from a file cairn has not read".into()),
            a if a.starts_with("--file=") => {
                return Err("`sed --file` runs a script from a file cairn has not read".into());
            }
            "-e" | "--expression" => {
                positional_script = false;
                scripts.push(*iter.next().unwrap_or(&""));
            }
            a if a.starts_with("--expression=") => {
                positional_script = false;
                scripts.push(&a["--expression=".len()..]);
            }
            a if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 && a[1..].contains(['i', 'f']) => {
                return Err(format!("`sed {a}` edits files in place or reads a script file"));
            }
            a if a.starts_with('-') && a.len() > 1 => {}
            a if positional_script => {
                positional_script = false;
                scripts.push(a);
            }
            _ => {}
        }
    }
    match scripts.iter().find(|s| !sed_script_is_safe(s)) {
        Some(s) => Err(format!(
            "the sed script `{s}` may write files or run commands (only p, d, q, = and s///[gpiI0-9] are read-only)"
        )),
        None => Ok(()),
    }
}

fn sed_script_is_safe(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && (chars[*i].is_whitespace() || chars[*i] == ';') {
            *i += 1;
        }
    };
    // An address: a line number, `$`, or /regex/, optionally a range.
    let address = |i: &mut usize| -> bool {
        for _ in 0..2 {
            if *i < chars.len() && chars[*i].is_ascii_digit() {
                while *i < chars.len() && chars[*i].is_ascii_digit() {
                    *i += 1;
                }
            } else if *i < chars.len() && chars[*i] == '$' {
                *i += 1;
            } else if *i < chars.len() && chars[*i] == '/' {
                *i += 1;
                while *i < chars.len() && chars[*i] != '/' {
                    if chars[*i] == '\\' {
                        *i += 1;
                    }
                    *i += 1;
                }
                if *i >= chars.len() {
                    return false;
                }
                *i += 1;
            }
            if *i < chars.len() && chars[*i] == ',' {
                *i += 1;
            } else {
                break;
            }
        }
        if *i < chars.len() && chars[*i] == '!' {
            *i += 1;
        }
        true
    };
    skip_ws(&mut i);
    while i < chars.len() {
        if !address(&mut i) || i >= chars.len() {
            return false;
        }
        match chars[i] {
            'p' | 'd' | 'q' | '=' | 'n' | 'P' | 'D' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' => i += 1,
            's' => {
                let Some(&delim) = chars.get(i + 1) else { return false };
                if delim == '\\' || delim == '\n' {
                    return false;
                }
                i += 2;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delim {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    if i >= chars.len() {
                        return false;
                    }
                    i += 1;
                }
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != ';' {
                    if !matches!(chars[i], 'g' | 'p' | 'i' | 'I' | '0'..='9') {
                        return false;
                    }
                    i += 1;
                }
            }
            _ => return false,
        }
        skip_ws(&mut i);
    }
    true
}

/// `git` subcommands that only read, with the flags that write or run something excluded.
fn git(args: &[&str]) -> Result<(), String> {
    let mut rest = args;
    // Global options change where and how git runs; only these are harmless.
    while let Some((first, tail)) = rest.split_first() {
        match *first {
            "--no-pager" | "-P" | "--no-optional-locks" => rest = tail,
            a if a.starts_with('-') => return Err(format!("`git {a}` changes where or how git runs")),
            _ => break,
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else {
        return Ok(());
    };
    let no_output_flags = || {
        forbid(
            sub_args,
            &["-o", "-O", "--output", "--ext-diff", "--open-files-in-pager"],
            &["--output=", "--open-files-in-pager="],
        )
    };
    let has = |flags: &[&str]| sub_args.iter().any(|a| flags.contains(a));
    let positionals = || sub_args.iter().filter(|a| !a.starts_with('-')).count();
    match *sub {
        "status" | "log" | "diff" | "show" | "blame" | "annotate" | "shortlog" | "describe" | "rev-parse"
        | "ls-files" | "ls-tree" | "cat-file" | "grep" | "whatchanged" | "rev-list" | "merge-base" | "name-rev"
        | "show-ref" | "for-each-ref" | "count-objects" | "var" | "version" | "check-ignore" | "diff-tree"
        | "diff-files" | "diff-index" => no_output_flags(),
        "branch" => {
            const LISTING: &[&str] = &[
                "-a",
                "-r",
                "-v",
                "-vv",
                "--all",
                "--remotes",
                "--verbose",
                "--list",
                "-l",
                "--show-current",
                "--color",
                "--no-color",
                "--column",
                "--no-column",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--ignore-case",
                "-i",
            ];
            if let Some(flag) = sub_args.iter().find(|a| {
                a.starts_with('-')
                    && !LISTING.contains(a)
                    && !a.starts_with("--sort=")
                    && !a.starts_with("--format=")
                    && !a.starts_with("--color=")
            }) {
                return Err(format!("`git branch {flag}` changes branches"));
            }
            if positionals() > 0
                && !has(&["--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"])
            {
                return Err("`git branch NAME` creates a branch".into());
            }
            Ok(())
        }
        "tag" => {
            if sub_args.iter().any(|a| {
                a.starts_with('-')
                    && !["-l", "--list", "-n", "--contains", "--points-at", "--merged", "--no-merged"].contains(a)
                    && !a.starts_with("--sort=")
                    && !a.starts_with("--format=")
                    && !a.starts_with("-n")
            }) {
                return Err("that `git tag` flag changes tags".into());
            }
            if positionals() > 0 && !has(&["-l", "--list"]) {
                return Err("`git tag NAME` creates a tag".into());
            }
            Ok(())
        }
        "remote" => match sub_args {
            [] | ["-v"] | ["--verbose"] | ["get-url", ..] | ["show", ..] => Ok(()),
            _ => Err("that `git remote` changes remotes".into()),
        },
        "stash" => match sub_args.first() {
            Some(&"list") | Some(&"show") => no_output_flags(),
            _ => Err("`git stash` changes the working tree".into()),
        },
        "reflog" => match sub_args.first() {
            None | Some(&"show") => no_output_flags(),
            Some(a) if a.starts_with('-') => no_output_flags(),
            Some(_) => Err("that `git reflog` changes the reflog".into()),
        },
        "worktree" => match sub_args {
            ["list", ..] => Ok(()),
            _ => Err("that `git worktree` changes worktrees".into()),
        },
        "config" => {
            let reads = has(&["--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"]);
            let writes = sub_args.iter().any(|a| {
                [
                    "--unset",
                    "--unset-all",
                    "--add",
                    "--replace-all",
                    "--edit",
                    "-e",
                    "--rename-section",
                    "--remove-section",
                ]
                .contains(a)
            });
            if reads && !writes { Ok(()) } else { Err("`git config` without --get or --list sets a value".into()) }
        }
        other => Err(format!("`git {other}` is not read-only")),
    }
}

#[cfg(test)]
#[path = "readonly_tests.rs"]
mod tests;
