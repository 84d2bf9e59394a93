//! Resolving the paths the model names, and telling whether they stay inside the project.

use std::path::{Component, Path, PathBuf};

/// A path the model named, resolved against the project root with `..` and symlinks followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectPath {
    /// Absolute, normalised; symlinks resolved as far as the path exists.
    pub absolute: PathBuf,
    /// Relative to the root when inside it, else absolute: what transcripts show.
    pub display: String,
    pub inside_project: bool,
}

/// Resolve `raw` (absolute, or relative to `root`) the way the filesystem would: lexically
/// drop `.` and apply `..`, then follow symlinks through the longest prefix that exists, so
/// `link-to-etc/passwd` is recognised as outside the project.
pub fn resolve_path(root: &Path, raw: &str) -> ProjectPath {
    let raw = raw.trim();
    let expanded = expand_home(raw);
    let joined = if expanded.is_absolute() { expanded } else { root.join(expanded) };
    let lexical = normalise(&joined);
    let absolute = canonicalise_existing_prefix(&lexical);
    let inside_project = absolute.starts_with(root);
    let display = match absolute.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => absolute.display().to_string(),
    };
    ProjectPath { absolute, display, inside_project }
}

fn expand_home(raw: &str) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return Path::new(&home).join(rest);
    }
    PathBuf::from(raw)
}

fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalise the longest existing ancestor and re-attach the rest, so a file that does not
/// exist yet still resolves through symlinked parents.
fn canonicalise_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let (_d, root) = root();
        let p = resolve_path(&root, "src/../src/./new.rs");
        assert!(p.inside_project);
        assert_eq!(p.display, "src/new.rs");
        assert_eq!(p.absolute, root.join("src/new.rs"));
    }

    #[test]
    fn dotdot_escape_is_outside() {
        let (_d, root) = root();
        let p = resolve_path(&root, "../../etc/passwd");
        assert!(!p.inside_project);
        assert!(p.display.starts_with('/'));
    }

    #[test]
    fn symlink_out_of_the_project_is_outside() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
        let p = resolve_path(&root, "escape/secret.txt");
        assert!(!p.inside_project, "{p:?}");
    }

    #[test]
    fn absolute_path_inside_is_inside() {
        let (_d, root) = root();
        let p = resolve_path(&root, &root.join("src").display().to_string());
        assert!(p.inside_project);
        assert_eq!(p.display, "src");
    }
}
