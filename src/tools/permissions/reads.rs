//! What a command reads, as paths: its file arguments resolved where it runs (after `cd`,
//! `~` and patterns), the blobs git prints (`git show HEAD:.env` reads the project's `.env` as
//! committed), and for a recursive read every file under the folders it names — walked when a
//! `file_read` deny rule could match one of them, or when the read follows links that may lead
//! out of the project.

use std::path::{Path, PathBuf};

use crate::tools::{ProjectPath, resolve_in};

/// Entries walked at most under the folders of one recursive read.
pub const MAX_WALK: usize = 200_000;

/// `paths` (as the command received them) resolved against every folder it may run in.
pub fn resolve(paths: &[String], root: &Path, cwds: &[PathBuf]) -> Vec<ProjectPath> {
    let mut out: Vec<ProjectPath> = Vec::new();
    for raw in paths {
        for cwd in cwds {
            let p = resolve_in(root, cwd, raw);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Paths of the repository (`HEAD:src/x`), relative to its root, or to where git runs when
/// they start with `./`.
pub fn repo_paths(paths: &[String], root: &Path, cwds: &[PathBuf]) -> Vec<ProjectPath> {
    let mut out = Vec::new();
    for raw in paths {
        if raw.starts_with("./") || raw.starts_with("../") {
            out.extend(resolve(std::slice::from_ref(raw), root, cwds));
        } else {
            out.push(resolve_in(root, root, raw));
        }
    }
    out
}

/// What walking a recursive read found.
#[derive(Debug, Default)]
pub struct Walked {
    /// A file a deny rule covers.
    pub denied: Option<ProjectPath>,
    /// A link out of the project the read would follow.
    pub escapes: Option<ProjectPath>,
    /// The walk stopped at [`MAX_WALK`] entries.
    pub cut: bool,
}

/// Walk `dirs` (following links when `follow`), stopping at the first entry `denied` covers,
/// and (when `follow`) noting the first link leading out of the project.
pub fn walk(root: &Path, dirs: &[ProjectPath], follow: bool, denied: &dyn Fn(&ProjectPath) -> bool) -> Walked {
    let mut found = Walked::default();
    let mut seen = 0usize;
    for dir in dirs {
        if !dir.absolute.is_dir() {
            continue;
        }
        let walker = ignore::WalkBuilder::new(&dir.absolute).standard_filters(false).follow_links(follow).build();
        for entry in walker.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                found.cut = true;
                return found;
            }
            let path = entry.path();
            // Without links followed the walk's paths are physical already.
            let resolved = if follow {
                resolve_in(root, root, &path.to_string_lossy())
            } else {
                ProjectPath {
                    absolute: path.to_path_buf(),
                    display: path
                        .strip_prefix(root)
                        .map_or_else(|_| path.display().to_string(), |r| r.display().to_string()),
                    inside_project: path.starts_with(root),
                }
            };
            if found.escapes.is_none() && follow && entry.path_is_symlink() && !resolved.inside_project {
                found.escapes = Some(resolved.clone());
            }
            if denied(&resolved) {
                found.denied = Some(resolved);
                return found;
            }
        }
    }
    found
}
