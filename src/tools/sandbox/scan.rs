//! What the sandbox must know about the project before a command that may write runs: files
//! with a hard link outside the project (writing one through the project would write the
//! outside file: they are mounted read-only), and the git folders of nested repositories and
//! bare repositories committed to the project (protected like the project's own `.git`).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Entries looked at most; a larger project is scanned this far, and the note says so.
pub const MAX_ENTRIES: usize = 300_000;

#[derive(Debug, Default)]
pub struct Scan {
    /// Regular files with more links than the project holds: another link is outside.
    pub linked_outside: Vec<PathBuf>,
    /// `.git` folders of nested repositories, and bare repositories.
    pub git_dirs: Vec<PathBuf>,
    /// The scan stopped at [`MAX_ENTRIES`].
    pub cut: bool,
}

/// Scan the project at `root` (symlinks not followed).
pub fn scan(root: &Path) -> Scan {
    let mut out = Scan::default();
    // (device, inode) of multiply-linked files: links seen inside, links in all, a path.
    let mut linked: HashMap<(u64, u64), (u64, u64, PathBuf)> = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                out.cut = true;
                return finish(out, linked);
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                if entry.file_name() == ".git" {
                    if dir != root {
                        out.git_dirs.push(path.clone());
                    }
                } else if crate::tools::permissions::protected::is_bare_repository(&path) {
                    out.git_dirs.push(path.clone());
                }
                stack.push(path);
            } else if meta.is_file() && meta.nlink() > 1 {
                let slot = linked.entry((meta.dev(), meta.ino())).or_insert((0, meta.nlink(), path));
                slot.0 += 1;
            }
        }
    }
    finish(out, linked)
}

fn finish(mut out: Scan, linked: HashMap<(u64, u64), (u64, u64, PathBuf)>) -> Scan {
    for (inside, total, path) in linked.into_values() {
        if inside < total {
            out.linked_outside.push(path);
        }
    }
    out.linked_outside.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_links_to_outside_files_and_nested_repositories_are_found() {
        let outside = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(outside.path().join("target"), "outside").unwrap();
        std::fs::write(root.join("inner"), "inner").unwrap();
        if std::fs::hard_link(outside.path().join("target"), root.join("alias")).is_err() {
            eprintln!("skipped: no hard links across these folders");
            return;
        }
        std::fs::hard_link(root.join("inner"), root.join("inner-twin")).unwrap();
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::create_dir_all(root.join("v.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("v.git/refs")).unwrap();
        std::fs::write(root.join("v.git/HEAD"), "x").unwrap();
        let scan = scan(root);
        assert_eq!(scan.linked_outside, [root.join("alias")], "both links of inner are inside");
        let mut git = scan.git_dirs.clone();
        git.sort();
        assert_eq!(git, [root.join("sub/.git"), root.join("v.git")]);
    }
}
