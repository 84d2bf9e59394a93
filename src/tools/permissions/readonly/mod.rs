//! The read-only command set: an allow-list of programs, each with a grammar of its options
//! (abbreviations resolved as the program resolves them), so that a command is read-only only
//! when every option it is given is known to change nothing and run nothing. Anything not
//! proven read-only here is not: an unknown option, an expansion where a file name or an
//! option should be, an environment assignment before the command, a program that reads
//! project files choosing other programs (`cargo`, `make`, `npm`, git in another repository).
//!
//! The result says what the command reads, so the policy can check the paths against the
//! project and the `file_read` rules.

mod find;
mod getopt;
mod git;
mod listing;
mod programs;
mod sed;
mod small;

use std::path::{Path, PathBuf};

pub use sed::runs_commands as sed_runs_commands;

use super::globbing;
use super::shell::{Part, PartKind, Word, program_base};

/// Where a part runs.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// Canonical project root.
    pub root: &'a Path,
    /// The folders the part may run in: the project root, and each folder a `cd` earlier in
    /// the line may have taken it to.
    pub cwds: &'a [PathBuf],
}

/// What a read-only part reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// Files or folders it reads or lists, as bash passes them (relative to where it runs).
    pub paths: Vec<String>,
    /// Folders among `paths` are read with everything under them.
    pub recursive: bool,
    /// That recursion follows symbolic links.
    pub follows_links: bool,
    /// The folder a `cd` goes to.
    pub cd: Option<String>,
    /// Paths of the repository git prints from its history or index (`git show HEAD:f`).
    pub repo_paths: Vec<String>,
}

impl Reads {
    fn files(paths: Vec<String>) -> Reads {
        Reads { paths, ..Reads::default() }
    }
}

/// A part that only reads, and what it reads, or why it is not read-only.
pub fn check(part: &Part, cx: &Context<'_>) -> Result<Reads, String> {
    match part.kind {
        PartKind::Test => Ok(Reads::default()),
        PartKind::Evaluation => Err(format!(
            "bash evaluates `{}` when it runs, and a variable holding `a[$(cmd)]` would run `cmd` there",
            part.words.first().map(|w| w.text.as_str()).unwrap_or("")
        )),
        PartKind::Read => match part.words.as_slice() {
            [w] if w.literal => Ok(Reads::files(expand_word(w, cx)?)),
            _ => Err("it reads from a file named when it runs".into()),
        },
        PartKind::Write => Err(format!("it writes to `{}`", part.words.first().map(|w| w.text.as_str()).unwrap_or(""))),
        PartKind::Assignment => {
            let text = part.words.first().map(|w| w.text.as_str()).unwrap_or("");
            let name = text.split(['=', '+']).next().unwrap_or("");
            // Lower-case names are the script's own; the environment's (PATH, LD_PRELOAD,
            // BASH_ENV, GIT_*) are upper case and change what the following commands do. A
            // subscript (`a[i]=`) is evaluated.
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                Ok(Reads::default())
            } else {
                Err(format!("it sets `{name}`, which changes what the following commands do"))
            }
        }
        PartKind::Declaration => Err("it changes the environment of the following commands".into()),
        PartKind::Command => command(part, cx),
    }
}

/// Commands that touch no file whatever their arguments, so an expanded argument is harmless.
const PRINT_ONLY: &[&str] = &["echo", "true", "false", ":"];

/// Bash builtins of the set: they run in the shell, whatever PATH holds.
const BUILTINS: &[&str] = &["echo", "printf", "true", "false", ":", "test", "[", "cd", "pwd", "type", "command"];

fn command(part: &Part, cx: &Context<'_>) -> Result<Reads, String> {
    for assignment in &part.env {
        safe_environment(assignment)?;
    }
    let Some(name) = part.name() else {
        return Err("its command name is computed when it runs".into());
    };
    let base = program_base(name);
    if name.contains('/') {
        system_program(name, base)?;
    } else if !BUILTINS.contains(&base) {
        outside_project(base, cx.root)?;
    }
    let rest = &part.words[1..];
    if PRINT_ONLY.contains(&base) {
        return Ok(Reads::default());
    }
    match base {
        "printf" => return small::printf(rest),
        "test" | "[" => return small::test(base, rest),
        _ => {}
    }
    if let Some(w) = rest.iter().find(|w| !w.literal) {
        return Err(format!(
            "its argument `{}` is expanded when it runs, so what it touches is not known before",
            w.text
        ));
    }
    let mut args = Vec::with_capacity(rest.len());
    for w in rest {
        args.extend(expand_word(w, cx)?);
    }
    match base {
        "cd" => small::cd(&args),
        "type" => small::words_only("type", "afpPt", &args),
        "command" => small::command(&args),
        "env" | "hostname" | "tty" if args.is_empty() => Ok(Reads::default()),
        "hostname" => small::words_only("hostname", "fsiIdAa", &args),
        "env" => Err("`env` with arguments runs or changes something".into()),
        "ps" => small::ps(&args),
        "pgrep" => small::pgrep(&args),
        "xxd" => small::xxd(&args),
        "jq" => small::jq(&args),
        "sed" => sed::check(&args),
        "find" => find::check(&args),
        "git" => git::check(&args, cx),
        "node" | "python" | "python3" | "perl" | "ruby" => {
            Err(format!("`{base}` runs code, and what a script or module does is not known before it runs"))
        }
        "cargo" | "rustc" | "rustup" | "make" | "npm" | "npx" | "yarn" | "pnpm" | "go" | "mvn" | "gradle"
        | "bundle" | "pip" | "uv" => Err(format!(
            "`{base}` reads project files that choose which programs it runs (toolchain files, scripts, configuration)"
        )),
        other => match program(other) {
            Some(program) => table(program, other, &args),
            None => Err(format!("`{other}` is not in the read-only command set")),
        },
    }
}

/// `LC_ALL=C sort`: the locale, time zone and width settings change only how output looks.
fn safe_environment(assignment: &str) -> Result<(), String> {
    let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
    let known = matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "COLUMNS" | "LINES" | "CLICOLOR")
        || name.starts_with("LC_");
    let plain = value.chars().all(|c| c.is_ascii_alphanumeric() || "_.-@:+".contains(c));
    if known && plain {
        Ok(())
    } else {
        Err(format!("it runs with {assignment} set, which can change what the command does"))
    }
}

/// `/usr/bin/cat`: a program of the system, named by its path.
/// The table entry for `name`, if it has one.
fn program(name: &str) -> Option<&'static programs::Program> {
    programs::PROGRAMS.iter().chain(listing::LISTING).find(|p| p.names.contains(&name))
}

fn system_program(name: &str, base: &str) -> Result<(), String> {
    let resolved = std::fs::canonicalize(name).ok();
    let system = resolved.as_deref().is_some_and(|p| {
        ["/usr/bin/", "/bin/", "/usr/local/bin/", "/usr/sbin/", "/sbin/"].iter().any(|dir| p.starts_with(dir))
    });
    if system { Ok(()) } else { Err(format!("`{name}` is not a system program cairn knows as `{base}`")) }
}

/// A program found in the project through PATH (`.` in PATH, a project `bin/`) is the
/// project's, whatever its name.
fn outside_project(base: &str, root: &Path) -> Result<(), String> {
    match find_in_path(base) {
        Some(found) if found.starts_with(root) => {
            Err(format!("`{base}` runs {}, a program inside the project", found.display()))
        }
        _ => Ok(()),
    }
}

/// Where PATH finds `name`, resolved.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let candidate = dir.join(name);
        let meta = std::fs::metadata(&candidate).ok()?;
        use std::os::unix::fs::PermissionsExt;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            .then(|| std::fs::canonicalize(&candidate).unwrap_or(candidate))
    })
}

/// A literal word as bash passes it: a pattern expanded against the files where the part
/// runs (a name the pattern matches may itself be read as an option), else its value.
fn expand_word(word: &Word, cx: &Context<'_>) -> Result<Vec<String>, String> {
    let Some(pattern) = &word.pattern else { return Ok(vec![word.text.clone()]) };
    let mut out = Vec::new();
    for cwd in cx.cwds {
        for found in globbing::expand(pattern, cwd)? {
            if !out.contains(&found) {
                out.push(found);
            }
        }
    }
    if out.is_empty() {
        // No match: bash passes the pattern on as written.
        out.push(word.text.clone());
    }
    Ok(out)
}

/// A program of the table: every option known and none unsafe; its operands read as files.
fn table(program: &programs::Program, name: &str, args: &[String]) -> Result<Reads, String> {
    use programs::Operands;
    let tokens = getopt::parse(&program.spec, name, args)?;
    let mut reads = Reads { recursive: program.always_recursive, ..Reads::default() };
    let mut pattern_given = false;
    let mut operands = Vec::new();
    for token in tokens {
        match token {
            getopt::Token::Opt { name: opt, value } => {
                if let Some((_, why)) = program.unsafe_opts.iter().find(|(o, _)| *o == opt) {
                    return Err(if why.starts_with('`') {
                        why.to_string()
                    } else {
                        format!("`{name}` with that option: {why}")
                    });
                }
                let opt = opt.as_str();
                if program.file_opts.contains(&opt)
                    && let Some(v) = &value
                {
                    reads.paths.push(v.clone());
                }
                pattern_given |= program.pattern_opts.contains(&opt);
                reads.recursive |= program.recursive_opts.contains(&opt);
                reads.follows_links |= program.follow_opts.contains(&opt) && reads.recursive;
                // `grep -d recurse` / `--directories=recurse` is `grep -r`.
                if matches!(opt, "d" | "directories") && value.as_deref() == Some("recurse") && name.contains("grep") {
                    reads.recursive = true;
                }
            }
            getopt::Token::Operand(operand) => operands.push(operand),
        }
    }
    // `-L` before `-R` counts as well.
    reads.follows_links |= reads.recursive && args.iter().any(|a| program.follow_opts.iter().any(|f| flag_given(a, f)));
    let none = operands.is_empty();
    match program.operands {
        Operands::Words => return Ok(reads),
        Operands::Files => reads.paths.extend(operands),
        Operands::PatternThenFiles => {
            let files = if pattern_given { &operands[..] } else { operands.get(1..).unwrap_or(&[]) };
            if files.is_empty() && (reads.recursive || program.reads_here) {
                reads.paths.push(".".into());
            }
            reads.paths.extend(files.iter().cloned());
            return Ok(reads);
        }
        Operands::AtMost(n) => {
            if operands.len() > n {
                return Err(format!("`{name}` writes its last file argument"));
            }
            reads.paths.extend(operands);
        }
    }
    if none && program.reads_here {
        reads.paths.push(".".into());
    }
    Ok(reads)
}

/// Whether the word `arg` gives the option `flag` (`-L`, `-RL`, `--follow`).
fn flag_given(arg: &str, flag: &str) -> bool {
    if flag.len() == 1 {
        arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
    } else {
        arg.strip_prefix("--").is_some_and(|a| a == flag)
    }
}

#[cfg(test)]
mod tests;
