//! Read-only programs and builtins whose arguments do not fit the option table: `printf`,
//! `test`, `cd`, `type`, `command`, `ps`, `pgrep`, `xxd` and `jq`.

use super::Reads;
use super::getopt::{self, Spec, Token};
use crate::tools::permissions::shell::Word;

/// `printf FORMAT ARGS…` prints; `printf -v NAME` assigns, and evaluates a subscript in NAME
/// (`printf -v 'a[$(cmd)]'` runs `cmd`) or changes PATH for what follows.
pub fn printf(args: &[Word]) -> Result<Reads, String> {
    match args.first() {
        Some(w) if !w.literal => Err(format!("its first argument `{}` may be `-v`, which assigns a variable", w.text)),
        Some(w) if w.text.starts_with("-v") => Err("`printf -v` assigns a variable, and evaluates its name".into()),
        _ => Ok(Reads::default()),
    }
}

const UNARY: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x", "-G", "-L", "-N",
    "-O", "-S", "-z", "-n", "-o", "!",
];
const BINARY: &[&str] =
    &["=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o"];

/// `test` and `[` only look, except `-v NAME` and `-R NAME`, which evaluate a subscript in
/// NAME. An operator computed at run time could be `-v`, so expansions may stand only where
/// an operand goes.
pub fn test(base: &str, args: &[Word]) -> Result<Reads, String> {
    let mut args = args;
    if base == "[" {
        match args.split_last() {
            Some((last, rest)) if last.literal && last.text == "]" => args = rest,
            _ => return Err("`[` without its closing `]`".into()),
        }
    }
    if let Some(w) = args.iter().find(|w| w.literal && matches!(w.text.as_str(), "-v" | "-R")) {
        return Err(format!("`{base} {}` evaluates a variable name, with any subscript in it", w.text));
    }
    let literal = |i: usize, set: &[&str]| args.get(i).is_some_and(|w| w.literal && set.contains(&w.text.as_str()));
    let operators_known = match args.len() {
        0 | 1 => true,
        2 => literal(0, UNARY),
        3 => literal(1, BINARY) || (literal(0, &["!"]) && literal(1, UNARY)),
        _ => args.iter().all(|w| w.literal),
    };
    if operators_known {
        Ok(Reads::default())
    } else {
        Err(format!("an operator of `{base}` is computed when it runs and could be `-v`"))
    }
}

/// `cd DIR`: where the following parts run. `cd` alone goes home; `cd -` back to a folder
/// only the shell knows.
pub fn cd(args: &[String]) -> Result<Reads, String> {
    let operands: Vec<&str> =
        args.iter().map(String::as_str).filter(|a| !matches!(*a, "-L" | "-P" | "-e" | "-@")).collect();
    let target = match operands.as_slice() {
        [] => std::env::var("HOME").map_err(|_| "`cd` goes home, and HOME is not set".to_string())?,
        ["-"] => return Err("`cd -` goes back to a folder only the shell knows".into()),
        [dir] if !dir.starts_with('-') => dir.to_string(),
        _ => return Err("`cd` with those arguments".into()),
    };
    Ok(Reads { paths: vec![target.clone()], cd: Some(target), ..Reads::default() })
}

/// A program whose operands are names, with only these single-letter flags.
pub fn words_only(name: &str, flags: &'static str, args: &[String]) -> Result<Reads, String> {
    let spec = Spec { short: flags, long: "", abbreviations: false, permute: true };
    getopt::parse(&spec, name, args)?;
    Ok(Reads::default())
}

/// `command -v NAME` says what NAME is; `command NAME` runs it.
pub fn command(args: &[String]) -> Result<Reads, String> {
    let flags: Vec<&String> = args.iter().take_while(|a| a.starts_with('-')).collect();
    if flags.iter().all(|f| matches!(f.as_str(), "-v" | "-V" | "-p" | "-pv" | "-vp" | "-pV" | "-Vp"))
        && flags.iter().any(|f| f.contains(['v', 'V']))
    {
        Ok(Reads::default())
    } else {
        Err("`command` runs the command it names".into())
    }
}

/// `ps`: UNIX options (`-ef`, `-o pid,args`) and BSD words (`aux`); the `e` word shows every
/// process's environment, which holds other programs' keys, so it is not read-only.
pub fn ps(args: &[String]) -> Result<Reads, String> {
    const UNIX_FLAGS: &str = "AaedfFlLjHmMTwxyNcqrZ";
    const UNIX_VALUED: &str = "oOpuUgGCtsq";
    const LONG: &[&str] = &[
        "forest",
        "headers",
        "no-headers",
        "cols",
        "columns",
        "rows",
        "width",
        "lines",
        "sort",
        "pid",
        "ppid",
        "sid",
        "tty",
        "user",
        "group",
        "format",
        "quick-pid",
        "deselect",
        "cumulative",
        "info",
        "help",
        "version",
    ];
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            if !LONG.contains(&name) {
                return Err(format!("`ps --{name}` is an option cairn does not know"));
            }
            if !long.contains('=')
                && !matches!(
                    name,
                    "forest" | "headers" | "no-headers" | "cumulative" | "info" | "deselect" | "help" | "version"
                )
            {
                iter.next();
            }
        } else if let Some(flags) = a.strip_prefix('-') {
            for (i, f) in flags.chars().enumerate() {
                if UNIX_VALUED.contains(f) {
                    if i + 1 == flags.len() {
                        iter.next();
                    }
                    break;
                }
                if !UNIX_FLAGS.contains(f) {
                    return Err(format!("`ps -{f}` is an option cairn does not know"));
                }
            }
        } else if a.chars().all(|c| c.is_ascii_digit() || c == ',' || "auxwfjlrhHTmScvSnsX".contains(c)) {
            // Process ids, or BSD-style options that only choose what is shown.
        } else if a.contains('e') && a.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err("`ps e` shows the environment of every process, other programs' keys among it".into());
        } else {
            return Err(format!("`ps {a}` is an option cairn does not know"));
        }
    }
    Ok(Reads::default())
}

/// `pgrep PATTERN`: lists process ids (or names and command lines with `-l`/`-a`).
pub fn pgrep(args: &[String]) -> Result<Reads, String> {
    let spec = Spec {
        short: "0acd:fF:g:G:ilnoOP:r:s:t:u:U:vwx",
        long: "count delimiter= full pidfile= pgroup= group= ignore-case list-name list-full newest oldest older= \
            parent= runstates= session= terminal= euid= uid= inverse lightweight exact ns= nslist= env= cgroup= \
            signal= help version require-handler quiet logpidfile",
        abbreviations: true,
        permute: true,
    };
    let mut reads = Reads::default();
    for token in getopt::parse(&spec, "pgrep", args)? {
        if let Token::Opt { name, value: Some(v) } = token
            && matches!(name.as_str(), "F" | "pidfile")
        {
            reads.paths.push(v);
        }
    }
    Ok(reads)
}

/// `xxd [options] [infile]`: a second file is where it writes; `-r` turns a dump back into
/// bytes.
pub fn xxd(args: &[String]) -> Result<Reads, String> {
    const FLAGS: &[&str] = &[
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-E",
        "-EBCDIC",
        "-e",
        "-h",
        "-help",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-postscript",
        "-plain",
        "-u",
        "-uppercase",
        "-v",
        "-version",
        "-d",
    ];
    const VALUED: &[&str] =
        &["-c", "-cols", "-g", "-groupsize", "-l", "-len", "-n", "-name", "-o", "-offset", "-s", "-seek", "-R"];
    let mut files = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        if a.starts_with("-r") {
            return Err("`xxd -r` turns a dump back into bytes, for writing".into());
        }
        if FLAGS.contains(&a.as_str()) {
            continue;
        }
        if let Some(flag) = VALUED.iter().find(|f| a.starts_with(**f)) {
            if a.len() == flag.len() {
                iter.next();
            }
            continue;
        }
        if a.starts_with('-') && a != "-" {
            return Err(format!("`xxd {a}` is an option cairn does not know"));
        }
        files.push(a.clone());
    }
    if files.len() > 1 {
        return Err("`xxd` writes its second file argument".into());
    }
    Ok(Reads::files(files))
}

/// `jq [options] FILTER [files]`: filters compute, and read only their input — except
/// `import`/`include`, which read modules from folders outside the project.
pub fn jq(args: &[String]) -> Result<Reads, String> {
    const FLAGS: &[&str] = &[
        "-n",
        "--null-input",
        "-r",
        "--raw-output",
        "-j",
        "--join-output",
        "--raw-output0",
        "-a",
        "--ascii-output",
        "-s",
        "--slurp",
        "-c",
        "--compact-output",
        "-C",
        "--color-output",
        "-M",
        "--monochrome-output",
        "-S",
        "--sort-keys",
        "-e",
        "--exit-status",
        "-R",
        "--raw-input",
        "--tab",
        "--seq",
        "--stream",
        "--stream-errors",
        "--unbuffered",
        "--args",
        "--jsonargs",
        "-h",
        "--help",
        "-V",
        "--version",
        "--build-configuration",
    ];
    let mut reads = Reads::default();
    let mut filter: Option<&String> = None;
    let mut from_file = false;
    let mut rest_are_args = false;
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        if rest_are_args && filter.is_some() {
            continue;
        }
        match a.as_str() {
            f if FLAGS.contains(&f) => rest_are_args |= matches!(f, "--args" | "--jsonargs"),
            "--indent" => {
                iter.next();
            }
            "--arg" | "--argjson" => {
                iter.next();
                iter.next();
            }
            "--slurpfile" | "--rawfile" => {
                iter.next();
                reads.paths.extend(iter.next().cloned());
            }
            "-f" | "--from-file" => {
                from_file = true;
                reads.paths.extend(iter.next().cloned());
            }
            "-L" => return Err("`jq -L` adds a folder of modules the filter may load".into()),
            o if o.starts_with('-') && o.len() > 1 => return Err(format!("`jq {o}` is an option cairn does not know")),
            _ if filter.is_none() && !from_file => filter = Some(a),
            _ => reads.paths.push(a.clone()),
        }
    }
    if let Some(f) = filter
        && (f.contains("import") || f.contains("include"))
    {
        return Err("the jq filter loads modules (`import`/`include`) from folders outside the project".into());
    }
    Ok(reads)
}
