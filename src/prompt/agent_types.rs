//! Agent types: what a subagent started by the `task` tool is — a name, a description the
//! model chooses by, the tools it may be given, its model, and its prompt. Files with a front
//! matter (`name`, `description`, `tools`, `model`, `mode`) and the prompt as the body, the
//! format Claude Code uses, found in `.cairn/agents/`, `.claude/agents/` and the user's config
//! folder (`agents/`). The built-ins `explore` and `general` are files of the same format in
//! `assets/prompts/agents/`.

use std::path::{Path, PathBuf};

use crate::conversation::Mode;
use crate::conversation::tool_names::{
    BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, MEMORY_SAVE, MEMORY_SEARCH, TASK, TODO, WEB_FETCH,
};

const EXPLORE: &str = include_str!("../../assets/prompts/agents/explore.md");
const GENERAL: &str = include_str!("../../assets/prompts/agents/general.md");

/// The tools a type gets when its file names none: reading, searching, read-only commands.
pub const READ_ONLY_TOOLS: &[&str] = &[FILE_READ, GLOB, GREP, BASH, WEB_FETCH, MEMORY_SEARCH];
/// Tools that change files: a type naming one may edit (when the session is in edit mode).
const WRITE_TOOLS: &[&str] = &[FILE_WRITE, FILE_EDIT];
/// The type a `task` call without `agent_type` starts.
pub const DEFAULT_TYPE: &str = "general";

/// Which model a type runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelChoice {
    /// The session's model (`inherit`, or no `model:` line).
    Inherit,
    /// `[subagents] fast_model` when set, else the session's model (`fast`, `haiku`).
    Fast,
    /// This model.
    Named(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentType {
    pub name: String,
    pub description: String,
    /// cairn's tool names, in the file's order.
    pub tools: Vec<String>,
    pub model: ModelChoice,
    /// Edit when the session is; or never more than plan.
    pub may_edit: bool,
    /// The body: how this type works.
    pub prompt: String,
    /// `built-in` or the file it came from.
    pub source: String,
}

/// Every type a session offers, and what was wrong with files that were skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentTypes {
    types: Vec<AgentType>,
    pub warnings: Vec<String>,
}

impl AgentTypes {
    /// Only the built-ins.
    pub fn builtin() -> AgentTypes {
        let mut out = AgentTypes::default();
        for text in [EXPLORE, GENERAL] {
            // The built-ins are parsed by the same code as users' files; a test keeps them valid.
            if let Ok(t) = parse(text, "agent", "built-in") {
                out.types.push(t);
            }
        }
        out
    }

    /// The built-ins, then the user's folder, `.claude/agents/` and `.cairn/agents/` of the
    /// project (a later one of the same name replaces an earlier one). `root` is `None` in a
    /// folder the user has not trusted: its files are not read.
    pub fn load(root: Option<&Path>, user_dir: Option<&Path>) -> AgentTypes {
        let mut out = AgentTypes::builtin();
        let mut dirs: Vec<PathBuf> = user_dir.map(Path::to_path_buf).into_iter().collect();
        if let Some(root) = root {
            dirs.push(root.join(".claude").join("agents"));
            dirs.push(root.join(".cairn").join("agents"));
        }
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
                .collect();
            files.sort();
            for path in files {
                let shown = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(&path).display().to_string();
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("agent").to_string();
                let parsed = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read it: {e}"))
                    .and_then(|text| parse(&text, &stem, &shown));
                match parsed {
                    Ok(t) => out.add(t),
                    Err(why) => out.warnings.push(format!("agent type {shown} was skipped: {why}")),
                }
            }
        }
        out
    }

    fn add(&mut self, t: AgentType) {
        self.types.retain(|o| o.name != t.name);
        self.types.push(t);
    }

    pub fn get(&self, name: &str) -> Option<&AgentType> {
        self.types.iter().find(|t| t.name == name)
    }

    pub fn all(&self) -> &[AgentType] {
        &self.types
    }

    #[cfg(test)]
    pub fn names(&self) -> Vec<&str> {
        self.types.iter().map(|t| t.name.as_str()).collect()
    }
}

/// Claude Code's tool names, for `.claude/agents/` files.
fn cairn_tool(name: &str) -> Option<&'static str> {
    Some(match name.trim() {
        FILE_READ | "Read" => FILE_READ,
        GLOB | "Glob" | "LS" => GLOB,
        GREP | "Grep" => GREP,
        FILE_WRITE | "Write" => FILE_WRITE,
        FILE_EDIT | "Edit" | "MultiEdit" => FILE_EDIT,
        BASH | "Bash" => BASH,
        WEB_FETCH | "WebFetch" => WEB_FETCH,
        MEMORY_SEARCH => MEMORY_SEARCH,
        MEMORY_SAVE => MEMORY_SAVE,
        TODO | "TodoWrite" => TODO,
        TASK | "Task" => TASK,
        _ => return None,
    })
}

/// One file: `---`, `key: value` lines, `---`, then the prompt. `stem` names a type whose file
/// has no `name:`.
pub fn parse(text: &str, stem: &str, source: &str) -> Result<AgentType, String> {
    let text = text.trim_start_matches('\u{feff}');
    let rest = text
        .strip_prefix("---")
        .ok_or("it does not start with a front matter (a `---` line, `name:` and `description:` lines, `---`)")?;
    let end = rest.find("\n---").ok_or("its front matter has no closing `---` line")?;
    let (head, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map(|(_, b)| b).unwrap_or("").trim().to_string();
    let mut name = stem.to_string();
    let mut description = None;
    let mut tools = None;
    let mut model = ModelChoice::Inherit;
    let mut mode = None;
    for line in head.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("the front matter line {line:?} is not `key: value`"));
        };
        let value = value.trim().trim_matches('"').trim_matches('\'');
        match key.trim() {
            "name" => name = value.to_string(),
            "description" => description = Some(value.to_string()),
            "tools" => {
                let list = value.trim_start_matches('[').trim_end_matches(']');
                let mut names = Vec::new();
                for word in
                    list.split(',').map(|w| w.trim().trim_matches('"').trim_matches('\'')).filter(|w| !w.is_empty())
                {
                    let tool = cairn_tool(word).ok_or_else(|| {
                        format!("`tools` names {word:?}, which is not a tool cairn has (file_read, glob, grep, file_write, file_edit, bash, web_fetch, memory_search)")
                    })?;
                    if !names.iter().any(|n| n == tool) {
                        names.push(tool.to_string());
                    }
                }
                tools = Some(names);
            }
            "model" => {
                model = match value {
                    "" | "inherit" | "sonnet" | "opus" => ModelChoice::Inherit,
                    "fast" | "haiku" => ModelChoice::Fast,
                    other => ModelChoice::Named(other.to_string()),
                }
            }
            "mode" => {
                mode = Some(match Mode::parse(value) {
                    Some(m @ (Mode::Edit | Mode::Plan)) => m,
                    Some(Mode::Ask) | None => return Err(format!("`mode` must be edit or plan, not {value:?}")),
                })
            }
            // Claude Code's colour for its interface: nothing to do here.
            "color" => {}
            other => return Err(format!("unknown front matter key {other:?} (name, description, tools, model, mode)")),
        }
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!("the name {name:?} must be letters, digits, `-` or `_`"));
    }
    let description =
        description.filter(|d| !d.is_empty()).ok_or("it has no `description:` (the model chooses a type by it)")?;
    let tools = tools.unwrap_or_else(|| READ_ONLY_TOOLS.iter().map(|t| t.to_string()).collect());
    let may_edit = match mode {
        Some(m) => m == Mode::Edit,
        None => tools.iter().any(|t| WRITE_TOOLS.contains(&t.as_str())),
    };
    Ok(AgentType { name, description, tools, model, may_edit, prompt: body, source: source.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_ins_parse_explore_reads_and_general_may_edit() {
        let types = AgentTypes::builtin();
        assert_eq!(types.names(), ["explore", "general"]);
        let explore = types.get("explore").unwrap();
        assert!(!explore.may_edit && explore.model == ModelChoice::Fast);
        assert!(!explore.tools.iter().any(|t| t == "file_write" || t == "task"));
        assert!(types.get("general").unwrap().may_edit);
        assert!(types.get(DEFAULT_TYPE).is_some());
    }

    #[test]
    fn a_claude_code_file_maps_its_tool_names_and_a_project_file_replaces_a_built_in() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude/agents")).unwrap();
        std::fs::create_dir_all(root.join(".cairn/agents")).unwrap();
        std::fs::write(
            root.join(".claude/agents/reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews a diff\ntools: Read, Grep, Glob\nmodel: haiku\ncolor: blue\n---\nReview carefully.\n",
        )
        .unwrap();
        std::fs::write(
            root.join(".cairn/agents/explore.md"),
            "---\ndescription: my explorer\nmodel: claude-haiku-4-5\n---\nMine.",
        )
        .unwrap();
        std::fs::write(root.join(".cairn/agents/broken.md"), "no front matter").unwrap();
        let types = AgentTypes::load(Some(root), None);
        let reviewer = types.get("reviewer").unwrap();
        assert_eq!(reviewer.tools, ["file_read", "grep", "glob"]);
        assert_eq!((reviewer.model.clone(), reviewer.may_edit), (ModelChoice::Fast, false));
        assert_eq!(reviewer.prompt, "Review carefully.");
        let explore = types.get("explore").unwrap();
        assert_eq!(explore.description, "my explorer");
        assert_eq!(explore.model, ModelChoice::Named("claude-haiku-4-5".into()));
        assert_eq!(explore.tools, READ_ONLY_TOOLS, "no tools line: the read-only set");
        assert_eq!(types.warnings.len(), 1);
        assert!(types.warnings[0].contains(".cairn/agents/broken.md") && types.warnings[0].contains("front matter"));
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let err = |t: &str| parse(t, "x", "x.md").unwrap_err();
        assert!(err("---\nname: x\n---\nbody").contains("description"));
        assert!(err("---\ndescription: d\ntools: Read, Teleport\n---\n").contains("Teleport"));
        assert!(err("---\ndescription: d\nmode: ask\n---\n").contains("edit or plan"));
        assert!(err("---\ndescription: d\nname: a b\n---\n").contains("letters"));
        let edit = parse("---\ndescription: d\ntools: bash\nmode: edit\n---\n", "runner", "r.md").unwrap();
        assert!(edit.may_edit && edit.name == "runner");
    }
}
