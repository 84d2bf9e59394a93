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

/// Resolve `raw` (absolute, or relative to `root`) the way the kernel would: each symlink
/// followed where it appears, so `link/../x` is the parent of where `link` points, not `x`
/// beside it; components that do not exist yet are kept as written.
pub fn resolve_path(root: &Path, raw: &str) -> ProjectPath {
    resolve_in(root, root, raw)
}

/// [`resolve_path`] for a path relative to `cwd` (where a command runs after a `cd`).
pub fn resolve_in(root: &Path, cwd: &Path, raw: &str) -> ProjectPath {
    let raw = raw.trim();
    let expanded = expand_home(raw);
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    let absolute = physical(&joined);
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

/// Symbolic links followed at most while resolving one path (the kernel's limit).
const MAX_LINKS: usize = 40;

/// The physical path of an absolute `path`: components taken left to right, a symlink
/// replaced by its target when it is met and `..` applied to what is resolved so far.
fn physical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: std::collections::VecDeque<std::ffi::OsString> = path.components().filter_map(component).collect();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                let Ok(target) = std::fs::read_link(&next) else {
                    out = next;
                    continue;
                };
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for (i, c) in target.components().filter_map(component).enumerate() {
                    pending.insert(i, c);
                }
            }
            _ => out = next,
        }
    }
    out
}

fn component(c: Component<'_>) -> Option<std::ffi::OsString> {
    match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some("..".into()),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
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
    fn a_symlink_is_followed_before_the_dotdot_after_it() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        let deep = outside.path().canonicalize().unwrap().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(&deep, root.join("link")).unwrap();
        // `link/..` is `a`, outside: not the project root, as a lexical `..` would say.
        let p = resolve_path(&root, "link/../f");
        assert!(!p.inside_project, "{p:?}");
        assert_eq!(p.absolute, deep.parent().unwrap().join("f"));
        let relative = root.join("rel");
        std::os::unix::fs::symlink("src/../..", &relative).unwrap();
        assert!(!resolve_path(&root, "rel/x").inside_project);
    }

    #[test]
    fn absolute_path_inside_is_inside() {
        let (_d, root) = root();
        let p = resolve_path(&root, &root.join("src").display().to_string());
        assert!(p.inside_project);
        assert_eq!(p.display, "src");
    }
}
