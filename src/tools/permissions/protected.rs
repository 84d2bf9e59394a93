//! Protected paths inside the project: what cairn or git later obeys outside the sandbox — git
//! configuration and hooks (of the project's repository, of a nested one, of a bare repository
//! committed to the project), and the settings folders of cairn and its peers (`.cairn/`,
//! `.claude/`, `.codex/`, `.mcp.json`). Commands may not write them, even in workspace-write
//! (the sandbox mounts them read-only); `file_write` and `file_edit` to them always ask, and
//! only the user in the dialog (or the user's own rule) may approve — never `--yes`.

use std::path::{Component, Path, PathBuf};

/// Top-level entries of the project that are protected whole.
pub const SETTINGS: &[&str] = &[".cairn", ".claude", ".codex", ".mcp.json"];

/// Entries of a git folder that configure what git runs: its configuration, hooks,
/// attributes and excludes, submodules' folders, alternates and worktree links.
pub const GIT_ENTRIES: &[&str] =
    &["config", "config.worktree", "hooks", "info", "modules", "objects/info", "commondir", "worktrees"];

/// Why `path` (absolute, resolved) is protected, if it is: a short phrase for messages.
pub fn protection(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    let first = *parts.first()?;
    if SETTINGS.contains(&first) {
        return Some(format!("{first} holds settings cairn or another agent obeys"));
    }
    // `.git/config`, `sub/.git/hooks/x`: a git folder's configuration, at any depth.
    for (i, part) in parts.iter().enumerate() {
        if *part == ".git" {
            let inside = parts[i + 1..].join("/");
            if inside.is_empty() || GIT_ENTRIES.iter().any(|e| inside == *e || inside.starts_with(&format!("{e}/"))) {
                return Some("git configuration and hooks choose programs git runs".into());
            }
        }
    }
    // Inside a bare repository committed to the project (`vendor.git/config`).
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        if is_bare_repository(d) {
            return Some(format!("{} is a git repository, whose configuration chooses programs git runs", d.display()));
        }
        dir = d.parent();
    }
    None
}

/// A folder that git would take for a bare repository.
pub fn is_bare_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// Protected folders at the top of the project.
const SETTINGS_DIRS: &[&str] = &[".cairn", ".claude", ".codex"];

/// Entries of a git folder that are folders, created empty where missing, as git itself does.
const GIT_DIRS: &[&str] = &["hooks", "info", "modules", "objects/info", "worktrees"];

/// How commands are kept from the protected paths of a project, for the sandbox.
#[derive(Debug, Default)]
pub struct Guard {
    /// Mounted read-only.
    pub read_only: Vec<PathBuf>,
    /// Git folders bound onto themselves: a mount point cannot be renamed away, so
    /// `mv .git x && mkdir .git` cannot swap in a configuration of the command's own.
    pub pinned: Vec<PathBuf>,
    /// Protected paths that do not exist (`.claude/`, `.mcp.json`, `.git/commondir`, …):
    /// nothing can be mounted on them, so one a command creates is removed after it, and named.
    pub absent: Vec<PathBuf>,
}

/// The guard for the project at `root` with the git folders of nested and bare repositories
/// `nested_git_dirs` (a bare one is mounted read-only whole by the caller). Creates the folders
/// of a git folder that are missing (empty, as git itself would), so they can be mounted.
pub fn guard(root: &Path, nested_git_dirs: &[PathBuf]) -> Guard {
    let mut out = Guard::default();
    // Those that are missing are not created (they would show in the user's project and in
    // what /undo takes back): one a command creates is removed after it, like a file.
    for name in SETTINGS_DIRS.iter().chain(&[".mcp.json"]) {
        let path = root.join(name);
        if path.symlink_metadata().is_ok() {
            out.read_only.push(path);
        } else {
            out.absent.push(path);
        }
    }
    let dot_git = root.join(".git");
    // A linked worktree's `.git` is a file naming the git folder (outside the project, so
    // read-only already): the file itself must not be rewritten to name another.
    if dot_git.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        out.read_only.push(dot_git.clone());
    }
    let mut git_dirs = vec![dot_git];
    git_dirs.extend(nested_git_dirs.iter().cloned());
    for dir in git_dirs.into_iter().filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir())) {
        for entry in GIT_DIRS {
            let path = dir.join(entry);
            if path.symlink_metadata().is_err() {
                let _ = std::fs::create_dir(&path);
            }
        }
        for entry in GIT_ENTRIES {
            let path = dir.join(entry);
            if path.symlink_metadata().is_ok() {
                out.read_only.push(path);
            } else {
                out.absent.push(path);
            }
        }
        out.pinned.push(dir);
    }
    out
}

/// Remove what a command created at `absent` paths (a file, or a folder with what is in it;
/// links not followed); the paths it removed.
pub fn remove_created(absent: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for path in absent {
        let Ok(meta) = path.symlink_metadata() else { continue };
        let gone = if meta.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
        if gone.is_ok() {
            removed.push(path.clone());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_configuration_and_agent_settings_are_protected_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (rel, protected) in [
            (".git/config", true),
            (".git/hooks/pre-commit", true),
            (".git/info/attributes", true),
            (".git/objects/info/alternates", true),
            (".git/index", false),
            (".git/objects/ab/cdef", false),
            (".git/refs/heads/main", false),
            ("sub/.git/config", true),
            (".cairn/settings.local.toml", true),
            (".claude/settings.json", true),
            (".codex/config.toml", true),
            (".mcp.json", true),
            ("src/.mcp.json", false),
            ("src/main.rs", false),
            ("notes.git.md", false),
        ] {
            assert_eq!(protection(root, &root.join(rel)).is_some(), protected, "{rel}");
        }
        std::fs::create_dir_all(root.join("vendor.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("vendor.git/refs")).unwrap();
        std::fs::write(root.join("vendor.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(protection(root, &root.join("vendor.git/config")).is_some());
        assert!(protection(root, &root.join("vendor.git/hooks/post-update")).is_some());
    }
}
