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

/// The protected paths of the project that exist now, to be mounted read-only for commands:
/// the settings folders, the project's git configuration (and a linked worktree's), and the
/// git folders of nested and bare repositories `scan` found.
pub fn existing(root: &Path, nested_git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        SETTINGS.iter().map(|s| root.join(s)).filter(|p| p.symlink_metadata().is_ok()).collect();
    let mut git_dirs = vec![root.join(".git")];
    git_dirs.extend(nested_git_dirs.iter().cloned());
    for dir in git_dirs {
        if dir.is_dir() {
            out.extend(GIT_ENTRIES.iter().map(|e| dir.join(e)).filter(|p| p.symlink_metadata().is_ok()));
        }
    }
    out
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
