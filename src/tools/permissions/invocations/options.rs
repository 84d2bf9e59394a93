//! Programs whose options name another program or a command line to run: `fd -x`, `rg --pre`,
//! `sort --compress-program`, `tar --to-command`, `man -P`, `rsync -e`, `zip -TT`, `socat
//! EXEC:`, and the git subcommands that run commands (`rebase --exec`, `submodule foreach`,
//! `bisect run`, `difftool --extcmd`, `fetch --upload-pack`, `send-email --to-cmd`, `grep -O`),
//! and programs that run what they are given later or elsewhere (`tmux`, `at`).
//! Long options are matched by any prefix (GNU getopt and git take a unique one: `--comp=rm`
//! is `--compress-program=rm`), which errs on the side of seeing a program.

use super::{Inner, opaque};
use crate::tools::permissions::shell::Word;

/// What an option's value is.
#[derive(Clone, Copy)]
enum Runs {
    /// A program's name (run with arguments of the program's choosing).
    Program,
    /// A shell command line.
    Line,
    /// The words after the option are the command (`fd -x rm`).
    Rest,
}

/// An option that runs something: its long name (without dashes; empty for none), the
/// shortest prefix the program takes for it, its short letter.
struct Opt {
    long: &'static str,
    min: usize,
    short: Option<char>,
    runs: Runs,
}

const fn opt(long: &'static str, min: usize, short: Option<char>, runs: Runs) -> Opt {
    Opt { long, min, short, runs }
}

const FD: &[Opt] = &[opt("exec", 3, Some('x'), Runs::Rest), opt("exec-batch", 6, Some('X'), Runs::Rest)];
const RG: &[Opt] = &[opt("pre", 3, None, Runs::Program), opt("hostname-bin", 3, None, Runs::Program)];
const SORT: &[Opt] = &[opt("compress-program", 2, None, Runs::Program)];
const TAR: &[Opt] = &[
    opt("to-command", 3, None, Runs::Line),
    opt("use-compress-program", 3, Some('I'), Runs::Program),
    opt("checkpoint-action", 11, None, Runs::Line),
    opt("info-script", 3, Some('F'), Runs::Line),
    opt("new-volume-script", 3, None, Runs::Line),
    opt("rsh-command", 3, None, Runs::Program),
    opt("rmt-command", 3, None, Runs::Program),
];
const MAN: &[Opt] = &[opt("pager", 2, Some('P'), Runs::Line), opt("html", 2, Some('H'), Runs::Line)];
const RSYNC: &[Opt] = &[opt("rsh", 3, Some('e'), Runs::Line), opt("rsync-path", 3, None, Runs::Line)];
/// Options of git subcommands that run a command (git runs them with the shell).
const GIT: &[Opt] = &[
    opt("exec", 2, None, Runs::Line),
    opt("extcmd", 3, None, Runs::Line),
    opt("upload-pack", 2, None, Runs::Line),
    opt("receive-pack", 2, None, Runs::Line),
    opt("to-cmd", 4, None, Runs::Line),
    opt("cc-cmd", 4, None, Runs::Line),
    opt("header-cmd", 4, None, Runs::Line),
    opt("sendmail-cmd", 5, None, Runs::Line),
    opt("open-files-in-pager", 4, None, Runs::Line),
];

/// What the options of `base` (one of the programs this module knows) make it run; `None`
/// for a program it does not know.
pub(super) fn runs_by_option(base: &str, args: &[Word]) -> Option<Inner> {
    let table = match base {
        "fd" | "fdfind" => FD,
        "rg" => RG,
        "sort" => SORT,
        "tar" | "gtar" | "bsdtar" => TAR,
        "man" => MAN,
        "rsync" => RSYNC,
        "zip" => {
            let runs = args.iter().any(|w| !w.is_plain() || w.text.starts_with("-TT") || w.text.starts_with("--unz"));
            return Some(if runs { opaque("`zip -TT` runs a command") } else { Inner::Nothing });
        }
        "socat" => {
            let runs = args.iter().any(|w| {
                let t = w.text.to_ascii_uppercase();
                !w.is_plain() || t.contains("EXEC") || t.contains("SYSTEM")
            });
            return Some(if runs { opaque("`socat` runs a program named in an address") } else { Inner::Nothing });
        }
        "nc" | "ncat" | "netcat" => {
            let runs = args.iter().any(|w| {
                matches!(w.text.as_str(), "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
                    || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['e', 'c']))
            });
            return Some(if runs { opaque(format!("`{base} -e`/`-c` runs a program")) } else { Inner::Nothing });
        }
        "tmux" | "screen" | "dtach" | "abduco" | "xterm" | "gnome-terminal" | "konsole" | "kitty" | "alacritty"
        | "wezterm" | "at" | "batch" | "crontab" => {
            return Some(opaque(format!("`{base}` runs commands it is given, later or elsewhere")));
        }
        _ => return None,
    };
    // tar's first word may be a cluster of letters without a dash (`tar cIf rm x`).
    let first_bundle = matches!(base, "tar" | "gtar" | "bsdtar")
        && args.first().is_some_and(|w| !w.text.starts_with('-') && w.text.contains(['I', 'F']));
    if first_bundle {
        return Some(opaque("a `tar` option runs a program"));
    }
    Some(scan(base, args, table))
}

/// The value of the option at `args[i]`, attached or the next word, and how many words it took.
fn value(args: &[Word], i: usize, attached: Option<&str>) -> (Option<Word>, usize) {
    match attached {
        Some(v) => (Some(Word { text: v.to_string(), ..args[i].clone() }), 1),
        None => (args.get(i + 1).cloned(), 2),
    }
}

fn scan(base: &str, args: &[Word], table: &[Opt]) -> Inner {
    let mut found: Vec<Inner> = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            break;
        }
        if !w.is_plain() && t.starts_with('-') {
            return opaque(format!("an option of `{base}` is computed when it runs"));
        }
        let hit = if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            table
                .iter()
                .find(|o| !o.long.is_empty() && name.len() >= o.min.min(o.long.len()) && o.long.starts_with(name))
                .map(|o| (o, attached))
        } else if t.starts_with('-') && t.len() > 1 {
            let letters = &t[1..];
            match table.iter().find(|o| o.short.is_some_and(|s| letters.contains(s))) {
                // `-x`, or the letter first with its value attached (`-Irm`).
                Some(o) if letters.starts_with(o.short.unwrap_or(' ')) => {
                    let rest = &letters[1..];
                    Some((o, (!rest.is_empty()).then_some(rest.trim_start_matches('='))))
                }
                Some(_) => return opaque(format!("an option of `{base}` that runs a program is bundled with others")),
                None => None,
            }
        } else {
            None
        };
        let Some((o, attached)) = hit else {
            i += 1;
            continue;
        };
        if let Runs::Rest = o.runs {
            let rest = if attached.is_some() { return opaque(format!("`{t}` runs a command")) } else { &args[i + 1..] };
            // fd ends the command at `;` and runs it once per result.
            let end = rest.iter().position(|w| w.text == ";").unwrap_or(rest.len());
            found.push(if end == 0 {
                opaque(format!("`{t}` runs a command"))
            } else {
                Inner::Argv(rest[..end].to_vec())
            });
            i += 1 + end;
            continue;
        }
        let (value, took) = value(args, i, attached);
        i += took;
        found.push(match (o.runs, value) {
            (_, Some(v)) if !v.is_plain() => opaque(format!("`{t}` names a program computed when it runs")),
            (Runs::Program, Some(v)) => Inner::Argv(vec![v]),
            (_, Some(v)) => Inner::Script(v.text.trim_start_matches("exec=").to_string()),
            (_, None) => Inner::Nothing,
        });
    }
    match found.len() {
        0 => Inner::Nothing,
        1 => found.pop().unwrap_or(Inner::Nothing),
        _ => opaque(format!("more than one option of `{base}` runs a program")),
    }
}

/// What a git subcommand runs by its own arguments: `submodule foreach CMD`, `bisect run
/// CMD…`, and the options of [`GIT`].
pub(super) fn git_subcommand(sub: &str, args: &[Word]) -> Inner {
    match (sub, args.first().map(|w| w.text.as_str())) {
        ("submodule", _) if args.iter().any(|w| w.text == "foreach") => {
            let at = args.iter().position(|w| w.text == "foreach").unwrap_or(0) + 1;
            let rest: Vec<&Word> = args[at..].iter().filter(|w| !w.text.starts_with('-')).collect();
            if rest.iter().all(|w| w.is_plain()) {
                Inner::Script(rest.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
            } else {
                opaque("`git submodule foreach` runs a command computed when it runs")
            }
        }
        ("bisect", Some("run")) => {
            if args.len() > 1 {
                Inner::Argv(args[1..].to_vec())
            } else {
                Inner::Nothing
            }
        }
        // `-x` is `--exec` for rebase and `--extcmd` for difftool; `-O` opens grep's results.
        _ => {
            fn short<'a>(sub: &str, w: &'a Word) -> Option<&'a str> {
                match sub {
                    "rebase" | "difftool" => w.text.strip_prefix("-x"),
                    "grep" => w.text.strip_prefix("-O"),
                    "clone" => w.text.strip_prefix("-u"),
                    _ => None,
                }
            }
            if let Some(at) = args.iter().position(|w| short(sub, w).is_some() && !w.text.starts_with("--")) {
                let attached = short(sub, &args[at]).unwrap_or("");
                // grep's `-O` takes its value attached only.
                let value = if attached.is_empty() && sub != "grep" { args.get(at + 1) } else { None };
                return match (attached, value) {
                    ("", Some(v)) if v.is_plain() => Inner::Script(v.text.clone()),
                    ("", None) if sub == "grep" => Inner::Nothing,
                    (a, _) if !a.is_empty() && args[at].is_plain() => Inner::Script(a.to_string()),
                    _ => opaque(format!("`git {sub}` runs a command computed when it runs")),
                };
            }
            scan(&format!("git {sub}"), args, GIT)
        }
    }
}
