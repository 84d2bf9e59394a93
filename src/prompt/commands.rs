//! Custom slash commands: markdown files in `.cairn/commands/`, `.claude/commands/` (so the
//! commands a project already has for Claude Code work) and the user's folders, run as
//! `/NAME ARGS`. A file in a subfolder is `/FOLDER:NAME`. Front matter may give
//! `description`, `argument-hint`, `allowed-tools` and `model`; the body takes `$ARGUMENTS`
//! and `$1`…`$9`, `@path` to include a file, and `` !`command` `` for a command's output (run
//! by the agent, with the user's approval).

use std::path::{Path, PathBuf};

use super::arguments::{self, Numbering};
use super::frontmatter;

/// One command, as found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash: `fix`, `frontend:test`.
    pub name: String,
    pub description: String,
    pub argument_hint: String,
    /// Permission rules as written (`Bash(git add:*)` or `bash(git add *)`).
    pub allowed_tools: Vec<String>,
    /// The model to answer this command with, if not the session's.
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
}

/// A command file that could not be read, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandProblem {
    pub path: PathBuf,
    pub problem: String,
}

/// The command folders, most specific first: a command found earlier hides one of the same
/// name found later. `root` is `None` in a folder the user has not trusted.
pub fn command_dirs(root: Option<&Path>, user_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        root.map(|r| vec![r.join(".cairn").join("commands"), r.join(".claude").join("commands")]).unwrap_or_default();
    dirs.extend(user_dirs.iter().map(|d| d.join("commands")));
    dirs
}

/// Every command in `dirs` (one folder level of namespaces), by name.
pub fn discover(dirs: &[PathBuf]) -> (Vec<CustomCommand>, Vec<CommandProblem>) {
    let mut commands: Vec<CustomCommand> = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        for (path, name) in command_files(dir) {
            if commands.iter().any(|c| c.name == name) {
                continue;
            }
            match read_command(&path, name) {
                Ok(command) => commands.push(command),
                Err(problem) => problems.push(CommandProblem { path, problem }),
            }
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, problems)
}

fn command_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            let space = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if let Ok(inner) = std::fs::read_dir(&path) {
                for f in inner.flatten().map(|e| e.path()).filter(|p| is_md(p)) {
                    let name = format!("{space}:{}", stem(&f));
                    out.push((f, name));
                }
            }
        } else if is_md(&path) {
            let name = stem(&path);
            out.push((path, name));
        }
    }
    out.sort();
    out
}

fn is_md(path: &Path) -> bool {
    path.is_file() && path.extension().is_some_and(|e| e == "md")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}

fn read_command(path: &Path, name: String) -> Result<CustomCommand, String> {
    if !valid_name(&name) {
        return Err(format!("`/{name}` is not a usable command name (letters, digits, -, _)"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let fm = frontmatter::parse(&text)?;
    Ok(CustomCommand {
        description: fm.text("description").unwrap_or_else(|| first_line(&fm.body)),
        // Shown as written: `[number]` reads as a YAML list, but it is a hint.
        argument_hint: match fm.get("argument_hint") {
            Some(super::frontmatter::Value::List(items)) => format!("[{}]", items.join(", ")),
            Some(super::frontmatter::Value::Text(text)) => text.trim().to_string(),
            None => String::new(),
        },
        allowed_tools: fm.get("allowed_tools").map(|v| v.items()).unwrap_or_default(),
        model: fm.text("model"),
        body: fm.body,
        path: path.to_path_buf(),
        name,
    })
}

/// The first line of text of `body`, for a file without a description.
pub fn first_line(body: &str) -> String {
    let line = body.lines().map(|l| l.trim().trim_start_matches('#').trim()).find(|l| !l.is_empty());
    crate::conversation::clip(line.unwrap_or(""), 80)
}

/// A command's text with its arguments in, before `!` commands run and `@` files are read.
pub fn substitute(command: &CustomCommand, args: &str) -> String {
    arguments::substitute(&command.body, args, Numbering::FromOne)
}

/// The `` !`command` `` spans of `text`: (byte range, command).
pub fn shell_spans(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("!`") {
        let start = from + at;
        let inner = start + 2;
        let Some(len) = text[inner..].find('`') else { break };
        let command = text[inner..inner + len].trim().to_string();
        if !command.is_empty() && !command.contains('\n') {
            out.push((start..inner + len + 1, command));
        }
        from = inner + len + 1;
    }
    out
}

/// The `@path` mentions of `text` (a word starting with `@`, not an e-mail address).
pub fn file_mentions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('@') {
        if i > 0 && !text[..i].ends_with(char::is_whitespace) && !text[..i].ends_with('(') {
            continue;
        }
        let word: String = text[i + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ')' | ',' | ';' | '`' | '"' | '\''))
            .collect();
        let word = word.trim_end_matches(['.', ':', '!', '?']).to_string();
        if !word.is_empty() && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_found_with_namespaces_and_front_matter() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            ".claude/commands/fix.md",
            "---\ndescription: Fix an issue\nargument-hint: [number]\n---\nFix issue #$ARGUMENTS\n",
        );
        write(".claude/commands/frontend/test.md", "# Run the frontend tests\nnpm test $1");
        write(".cairn/commands/fix.md", "---\ndescription: cairn's own fix\n---\nOurs $1");
        write(".cairn/commands/bad name.md", "x");
        let (commands, problems) = discover(&command_dirs(Some(root), &[]));
        let names: Vec<_> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["fix", "frontend:test"]);
        assert_eq!(commands[0].description, "cairn's own fix", ".cairn comes before .claude");
        assert_eq!(commands[1].description, "Run the frontend tests");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(substitute(&commands[1], "unit"), "# Run the frontend tests\nnpm test unit");
    }

    #[test]
    fn shell_spans_and_file_mentions_are_found() {
        let text = "Status: !`git status --short` and !`ls`.\nSee @src/lib.rs, mail a@b.c and (@README.md).";
        let spans = shell_spans(text);
        assert_eq!(spans.iter().map(|s| s.1.as_str()).collect::<Vec<_>>(), ["git status --short", "ls"]);
        assert_eq!(&text[spans[0].0.clone()], "!`git status --short`");
        assert_eq!(file_mentions(text), ["src/lib.rs", "README.md"]);
    }
}
