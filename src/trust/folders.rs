//! The items of the folders cairn reads prompts from: custom commands, skills, agent types, and
//! the instruction files of the project.

use std::path::{Path, PathBuf};

use super::items::{Item, Kind, Origin, digest, one_line};
use crate::prompt::{AgentTypes, commands, skills};

/// Files of a skill folder hashed at most, and bytes read of each; past them, a file counts by
/// its size and modification time (a skill is a few scripts, not a repository).
const MAX_SKILL_FILES: usize = 200;
const MAX_HASHED_BYTES: u64 = 1 << 20;

/// The longest description shown.
const SHOWN: usize = 120;

/// How a file of these folders is named in a listing: relative to the project root, or as found.
fn shown(root: Option<&Path>, path: &Path) -> String {
    match root.and_then(|r| path.strip_prefix(r).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

fn item(kind: Kind, origin: Origin, file: String, line: usize, what: String, digest: Option<String>) -> Item {
    Item { kind, origin, id: file.clone(), file, line, what, digest }
}

/// Custom commands in `dirs`: those whose text runs commands or pre-approves tools run.
pub(super) fn command_items(dirs: &[PathBuf], root: Option<&Path>, origin: Origin) -> Vec<Item> {
    let (found, _) = commands::discover(dirs);
    let mut out = Vec::new();
    for command in found {
        let text = std::fs::read(&command.path).unwrap_or_default();
        let spans: Vec<String> = commands::shell_spans(&command.body).into_iter().map(|(_, c)| c).collect();
        let line_of =
            |needle: &str| String::from_utf8_lossy(&text).lines().position(|l| l.contains(needle)).map_or(1, |i| i + 1);
        let (what, line, runs) = if !spans.is_empty() {
            (format!("/{} runs: {}", command.name, one_line(&spans.join("; "), SHOWN)), line_of("!`"), true)
        } else if !command.allowed_tools.is_empty() {
            let allowed = command.allowed_tools.join(", ");
            (
                format!("/{} lets run without asking: {}", command.name, one_line(&allowed, SHOWN)),
                line_of("allowed"),
                true,
            )
        } else {
            (format!("/{}: {}", command.name, one_line(&command.description, SHOWN)), 1, false)
        };
        let digest = runs.then(|| digest(&[&text]));
        out.push(item(Kind::Command, origin, shown(root, &command.path), line, what, digest));
    }
    out
}

/// Skills in `dirs`: a folder with files beside its `SKILL.md` runs (its scripts).
pub(super) fn skill_items(dirs: &[PathBuf], root: Option<&Path>, origin: Origin) -> Vec<Item> {
    let (found, _) = skills::discover(dirs);
    let mut out = Vec::new();
    for skill in found {
        let files = skill.dir.as_deref().map(skill_files).unwrap_or_default();
        let description = one_line(&skill.description, SHOWN);
        let (what, digest) = if files.is_empty() {
            (format!("{}: {description}", skill.name), None)
        } else {
            let dir = skill.dir.as_deref().unwrap_or(Path::new(""));
            let names: Vec<String> = files.iter().map(|f| shown(Some(dir), f)).collect();
            let what = format!("{}: {description} (with {})", skill.name, one_line(&names.join(", "), SHOWN));
            (what, Some(folder_digest(dir, &skill.path, &files)))
        };
        let file = skill.dir.as_deref().map_or_else(|| shown(root, &skill.path), |d| format!("{}/", shown(root, d)));
        out.push(item(Kind::Skill, origin, file, 1, what, digest));
    }
    out
}

/// The files under a skill folder but its `SKILL.md`, sorted, without following links, hidden
/// and ignored files included (a script the model may run is a script, whatever git thinks).
fn skill_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut queue = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => queue.push((path, depth + 1)),
                Ok(t) if t.is_dir() => {}
                Ok(_) if folder == dir && entry.file_name() == "SKILL.md" => {}
                Ok(_) => out.push(path),
                Err(_) => {}
            }
            if out.len() >= MAX_SKILL_FILES {
                out.sort();
                return out;
            }
        }
    }
    out.sort();
    out
}

/// The digest of `SKILL.md` and every file beside it: names and contents (a link's target).
fn folder_digest(dir: &Path, skill_md: &Path, files: &[PathBuf]) -> String {
    let mut parts: Vec<Vec<u8>> = vec![std::fs::read(skill_md).unwrap_or_default()];
    for file in files {
        parts.push(file.strip_prefix(dir).unwrap_or(file).as_os_str().as_encoded_bytes().to_vec());
        let Ok(meta) = std::fs::symlink_metadata(file) else { continue };
        let content = if meta.is_symlink() {
            std::fs::read_link(file).map(|t| t.as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default()
        } else if meta.len() <= MAX_HASHED_BYTES {
            std::fs::read(file).unwrap_or_default()
        } else {
            use std::os::unix::fs::MetadataExt;
            format!("{} bytes, modified {}.{}", meta.len(), meta.mtime(), meta.mtime_nsec()).into_bytes()
        };
        parts.push(content);
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    digest(&refs)
}

/// The agent types of the project (`.claude/agents/`, `.cairn/agents/`) or of the user's folder.
pub(super) fn agent_type_items(root: Option<&Path>, user_dir: Option<&Path>, origin: Origin) -> Vec<Item> {
    let types = AgentTypes::load(root, user_dir);
    types
        .all()
        .iter()
        .filter(|t| t.source != "built-in")
        .map(|t| {
            let tools = if t.tools.is_empty() { String::new() } else { format!(" (tools: {})", t.tools.join(", ")) };
            let what = format!("{}: {}{tools}", t.name, one_line(&t.description, SHOWN));
            item(Kind::AgentType, origin, t.source.clone(), 1, what, None)
        })
        .collect()
}

/// The project's instruction files that apply in `cwd` (the user's own are no project's item).
pub(super) fn instruction_items(root: &Path, cwd: &Path) -> Vec<Item> {
    crate::prompt::scan_instruction_files(root, cwd, &[])
        .files
        .iter()
        .filter(|f| !f.user)
        .map(|f| {
            let lines = f.text.lines().count();
            let what = format!("{lines} line{} the model is told to follow", if lines == 1 { "" } else { "s" });
            item(Kind::Instructions, Origin::Project, f.path.clone(), 1, what, None)
        })
        .collect()
}
