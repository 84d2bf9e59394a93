//! Every program a part of a command line runs, however it is named: the part itself, and
//! what it runs in turn — through wrappers (`exec -a x rm`, `env --chdir . rm`, `env -S 'rm
//! f'`, `timeout 5 rm`, `xargs --arg-file F rm`, `busybox rm`), inline scripts (`sh -c '…'`,
//! `eval '…'`, `su -c '…'`, `watch '…'`), `find -exec rm {} ;` and git aliases
//! (`git -c alias.x='!rm …' x`). What cannot be known before it runs — a computed command name,
//! code in another language (`python -c`), a script read from standard input, a git alias the
//! repository defines — is an [`Invocation::Opaque`]: a deny rule could match it.

mod options;
mod programs;

use programs::{awk, env, find, git, interpreter, shell_inner, xargs};

use super::shell::{self, Part, PartKind, SHELLS, Word, program_base};

/// One program a part runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// A program run with these words (`words[0]` its name as written); `env` are the
    /// assignments written before it.
    Argv { env: Vec<String>, words: Vec<Word> },
    /// Something runs that cannot be known before: why.
    Opaque(String),
}

/// Wrappers followed at most, one inside another.
const MAX_WRAPPERS: usize = 8;

/// Every program `part` runs: the part itself first.
pub fn invocations(part: &Part) -> Vec<Invocation> {
    let mut out = Vec::new();
    match part.kind {
        PartKind::Command => follow(part.env.clone(), part.words.clone(), 0, 0, &mut out),
        PartKind::Evaluation => out.push(Invocation::Opaque(format!(
            "bash evaluates `{}` when it runs, which can run a command held in a variable",
            part.words.first().map(|w| w.text.as_str()).unwrap_or("")
        ))),
        PartKind::Declaration => {
            let evaluates = part.words.iter().any(|w| {
                !w.literal || w.text.contains('[') || (w.text.starts_with('-') && w.text.contains(['i', 'n']))
            });
            if evaluates {
                out.push(Invocation::Opaque(format!("`{}` evaluates what it assigns", part.display())));
            }
        }
        PartKind::Assignment | PartKind::Test | PartKind::Write | PartKind::Read => {}
    }
    out
}

/// Record `words` and follow what it runs. `nesting` counts inline scripts, `wrappers`
/// wrappers.
fn follow(env: Vec<String>, words: Vec<Word>, nesting: usize, wrappers: usize, out: &mut Vec<Invocation>) {
    if words.is_empty() {
        return;
    }
    if env.iter().any(|e| e.starts_with("PATH=")) {
        out.push(Invocation::Opaque("PATH set before it changes which program its name runs".into()));
    }
    if let Some(name) = env.iter().filter_map(|e| e.split_once('=').map(|(n, _)| n)).find(|n| names_program(n)) {
        out.push(Invocation::Opaque(format!("`{name}` set before it names a program or code the command may run")));
    }
    let name = words[0].clone();
    out.push(Invocation::Argv { env, words: words.clone() });
    if !name.is_plain() {
        out.push(Invocation::Opaque(format!("its command name `{}` is computed when it runs", name.text)));
        return;
    }
    if wrappers >= MAX_WRAPPERS {
        out.push(Invocation::Opaque("it nests wrappers too deeply to follow".into()));
        return;
    }
    match inner(program_base(&name.text), &words[1..]) {
        Inner::Nothing => {}
        Inner::Argv(inner) => follow(Vec::new(), inner, nesting, wrappers + 1, out),
        Inner::Many(list) => {
            for inner in list {
                follow(Vec::new(), inner, nesting, wrappers + 1, out);
            }
        }
        Inner::Script(text) => script(&text, nesting + 1, out),
        Inner::Opaque(why) => out.push(Invocation::Opaque(why)),
    }
}

/// A variable that names a program, a command line or code another program runs (`GIT_EDITOR`,
/// `GIT_SSH_COMMAND`, `PAGER`, `LD_PRELOAD`, `BASH_ENV`, …).
fn names_program(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "BASH_ENV",
        "ENV",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "CDPATH",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "GIT_EXTERNAL_DIFF",
        "GIT_EXEC_PATH",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_TEMPLATE_DIR",
        "PERL5OPT",
        "PERL5LIB",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "NODE_OPTIONS",
        "RUBYOPT",
        "MAKEFLAGS",
        "TAR_OPTIONS",
        "RSYNC_RSH",
        "TERMINAL",
    ];
    const SUFFIXES: &[&str] = &["EDITOR", "PAGER", "_COMMAND", "_CMD", "ASKPASS", "SHELL", "_SSH"];
    EXACT.contains(&name)
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || name.starts_with("LD_")
        || name.starts_with("GIT_CONFIG")
        || name.contains("SSH")
}

/// Every program an inline script runs.
fn script(text: &str, nesting: usize, out: &mut Vec<Invocation>) {
    let parsed = shell::parse_nested(text, nesting);
    if let Some(why) = parsed.unparsable {
        out.push(Invocation::Opaque(format!("its inner script cannot be read: {why}")));
        return;
    }
    for part in &parsed.parts {
        match part.kind {
            PartKind::Command => follow(part.env.clone(), part.words.clone(), nesting, 0, out),
            _ => out.extend(invocations(part)),
        }
    }
}

/// What a program runs in turn.
pub(super) enum Inner {
    Nothing,
    Argv(Vec<Word>),
    Many(Vec<Vec<Word>>),
    Script(String),
    Opaque(String),
}

pub(super) fn opaque(why: impl Into<String>) -> Inner {
    Inner::Opaque(why.into())
}

/// The words after a wrapper's own options: `valued` options take the next word (or an
/// attached value); `-x=v` and `--x=v` carry theirs.
pub(super) fn after_options(args: &[Word], valued: &[&str]) -> Option<usize> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.is_plain() {
            return None;
        }
        let t = w.text.as_str();
        if t == "--" {
            return Some(i + 1);
        }
        if !t.starts_with('-') || t == "-" {
            return Some(i);
        }
        let takes_next = valued.contains(&t);
        i += if takes_next { 2 } else { 1 };
    }
    Some(i)
}

pub(super) fn rest_from(args: &[Word], at: Option<usize>) -> Inner {
    match at {
        Some(at) if at < args.len() => Inner::Argv(args[at..].to_vec()),
        Some(_) => Inner::Nothing,
        None => opaque("its options are computed when it runs"),
    }
}

pub(super) fn literal_script(word: Option<&Word>) -> Inner {
    match word {
        Some(w) if w.is_plain() => Inner::Script(w.text.clone()),
        Some(w) => opaque(format!("the script `{}` is computed when it runs", w.text)),
        None => Inner::Nothing,
    }
}

fn inner(base: &str, args: &[Word]) -> Inner {
    match base {
        "exec" => rest_from(args, after_options(args, &["-a"])),
        "command" => {
            if args.first().is_some_and(|w| {
                w.is_plain() && (w.text.contains('v') || w.text.contains('V')) && w.text.starts_with('-')
            }) {
                Inner::Nothing
            } else {
                rest_from(args, after_options(args, &[]))
            }
        }
        "builtin" | "nohup" | "time" | "setsid" | "caffeinate" | "unbuffer" | "catchsegv" => {
            rest_from(args, after_options(args, &["-f"]))
        }
        "nice" => rest_from(args, after_options(args, &["-n", "--adjustment"])),
        "ionice" => rest_from(args, after_options(args, &["-c", "-n", "-t", "--class", "--classdata"])),
        "stdbuf" => rest_from(args, after_options(args, &["-i", "-o", "-e"])),
        "timeout" => match after_options(args, &["-s", "--signal", "-k", "--kill-after"]) {
            // The duration, then the command.
            Some(at) => rest_from(args, Some(at + 1)),
            None => opaque("its options are computed when it runs"),
        },
        "taskset" => match after_options(args, &[]) {
            Some(at) if args.iter().any(|w| w.text == "-c" || w.text.starts_with("--cpu-list")) => {
                rest_from(args, Some(at))
            }
            Some(at) => rest_from(args, Some(at + 1)),
            None => opaque("its options are computed when it runs"),
        },
        "chrt" => match after_options(args, &[]) {
            Some(at) => rest_from(args, Some(at + 1)),
            None => opaque("its options are computed when it runs"),
        },
        "sudo" | "doas" | "run0" => {
            if args.iter().any(|w| matches!(w.text.as_str(), "-s" | "-i" | "--shell" | "--login")) {
                return opaque(format!("`{base} -s`/`-i` runs a shell"));
            }
            rest_from(
                args,
                after_options(
                    args,
                    &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir"],
                ),
            )
        }
        "env" => env(args),
        "xargs" => xargs(args),
        "find" => find(args),
        "flock" => match args.iter().position(|w| w.text == "-c" || w.text == "--command") {
            Some(at) => literal_script(args.get(at + 1)),
            None => match after_options(args, &["-w", "--timeout", "-E", "--conflict-exit-code"]) {
                Some(at) => rest_from(args, Some(at + 1)),
                None => opaque("its options are computed when it runs"),
            },
        },
        "su" | "runuser" => match args.iter().position(|w| w.text == "-c" || w.text == "--command") {
            Some(at) => literal_script(args.get(at + 1)),
            None if base == "runuser" && args.iter().any(|w| w.text == "-u") => {
                rest_from(args, after_options(args, &["-u", "-g", "-G", "-w"]))
            }
            None => opaque(format!("`{base}` runs a shell")),
        },
        "watch" => {
            if args.iter().any(|w| w.text == "-x" || w.text == "--exec") {
                rest_from(args, after_options(args, &["-n", "--interval", "-q", "--equexit"]))
            } else {
                match after_options(args, &["-n", "--interval", "-q", "--equexit"]) {
                    Some(at) if at < args.len() && args[at..].iter().all(Word::is_plain) => {
                        Inner::Script(args[at..].iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
                    }
                    Some(at) if at >= args.len() => Inner::Nothing,
                    _ => opaque("its command is computed when it runs"),
                }
            }
        }
        "eval" => {
            if args.iter().all(Word::is_plain) {
                Inner::Script(args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
            } else {
                opaque("`eval` runs text computed when it runs")
            }
        }
        "source" | "." => opaque(format!("`{base}` runs the commands of a file in this shell")),
        "alias" => {
            let bodies: Vec<&str> = args.iter().filter_map(|w| w.text.split_once('=').map(|(_, v)| v)).collect();
            if args.iter().all(Word::is_plain) && !bodies.is_empty() {
                Inner::Script(bodies.join("; "))
            } else {
                Inner::Nothing
            }
        }
        "busybox" | "toybox" => rest_from(args, after_options(args, &[])),
        "let" | "hash" | "enable" | "trap" | "complete" | "bind" => {
            opaque(format!("`{base}` evaluates text or changes what a later command name runs"))
        }
        "printf" if args.first().is_some_and(|w| !w.is_plain() || w.text.starts_with("-v")) => {
            opaque("`printf -v` assigns a variable and evaluates its name")
        }
        "read" | "mapfile" | "readarray" | "getopts" | "wait" => {
            opaque(format!("`{base}` assigns variables named by its arguments, and evaluates subscripts in them"))
        }
        "test" | "[" if args.iter().any(|w| !w.is_plain() || matches!(w.text.as_str(), "-v" | "-R")) => {
            opaque(format!("`{base}` may evaluate a variable name, with any subscript in it"))
        }
        "git" => git(args),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(args),
        "sed" | "gsed" => {
            let words: Option<Vec<String>> = args.iter().map(|w| w.is_plain().then(|| w.text.clone())).collect();
            match words.map(|w| super::readonly::sed_runs_commands(&w)) {
                Some(false) => Inner::Nothing,
                _ => opaque("its sed script may run commands (`e`)"),
            }
        }
        "python" | "python2" | "python3" | "pypy" | "pypy3" | "perl" | "ruby" | "node" | "nodejs" | "deno" | "bun"
        | "php" | "lua" | "luajit" | "Rscript" | "osascript" | "tclsh" | "wish" | "expect" | "pwsh" | "powershell" => {
            interpreter(base, args)
        }
        shell if SHELLS.contains(&shell) || shell == "fish" || shell == "tcsh" || shell == "csh" => {
            shell_inner(shell, args)
        }
        "parallel" | "strace" | "ltrace" | "valgrind" | "gdb" | "lldb" | "perf" | "script" | "nsenter" | "unshare"
        | "setpriv" | "chroot" | "systemd-run" | "firejail" | "bwrap" | "proot" | "fakeroot" | "npx" | "uvx"
        | "pipx" | "dbus-run-session" | "ssh" | "vim" | "nvim" | "emacs" | "make" | "just" => {
            opaque(format!("`{base}` runs commands given in its arguments in ways cairn does not follow"))
        }
        _ => options::runs_by_option(base, args).unwrap_or(Inner::Nothing),
    }
}

#[cfg(test)]
mod tests;
