//! Walking a project tree the way the `ignore` crate does (`.gitignore` in git repositories,
//! `.ignore` everywhere, hidden files included, VCS folders skipped), plus the ignored entries
//! next to walked ones, at a bounded cost: an ignored file is tracked like any other; an ignored
//! folder is tracked in full when its subtree fits the walk budget, else only watched through
//! the modification times of a bounded number of its folders.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::stamp::Stamp;

/// Folders of version control systems: their churn is not the project's content.
pub(super) const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj"];

/// Files whose change alters what the walk yields, so the tree is walked afresh.
pub(super) const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

/// How an entry is tracked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// Yielded by the ignore rules.
    Full,
    /// Ignored, but small enough to track like any other.
    Ignored,
    /// A folder of a large ignored folder: only its listing is watched.
    Watched,
}

/// The bounds of one scan.
#[derive(Clone, Debug)]
pub struct ScanLimits {
    /// Entries visited inside ignored folders to find out whether each is small enough to track.
    pub ignored_walk_budget: usize,
    /// Folders of large ignored folders watched through their modification times.
    pub ignored_dir_watch_limit: usize,
    /// A walk past this many entries gives up: see `checkpoints.max_scan_entries`.
    pub max_entries: usize,
    /// Absolute paths never walked (cairn's own data folder when it sits in the project).
    pub exclude: Vec<PathBuf>,
    /// Watch folders with inotify (Linux) so a rescan stats only where something happened.
    pub watch_folders: bool,
}

impl Default for ScanLimits {
    fn default() -> Self {
        let c = crate::config::CheckpointsConfig::default();
        ScanLimits {
            ignored_walk_budget: c.ignored_walk_budget,
            ignored_dir_watch_limit: c.ignored_dir_watch_limit,
            max_entries: c.max_scan_entries,
            exclude: Vec::new(),
            watch_folders: c.watch_folders,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(
        "the project has more than {limit} files and folders, too many to scan around every bash command; bash changes are not checkpointed in this session (raise checkpoints.max_scan_entries to scan anyway)"
    )]
    TooLarge { limit: usize },
    #[error("cannot read the project folder {path}: {message}")]
    Root { path: PathBuf, message: String },
}

/// Budgets left in the current scan.
pub(super) struct Budget {
    /// Entries of ignored folders that may still be tracked.
    pub walk: usize,
    /// Entries that may still be visited trying: a large folder's failed try costs this, not
    /// `walk`, so one node_modules/ does not starve the small ignored folders after it.
    pub visits: usize,
    pub watch: usize,
}

/// Visits allowed per scan, as a multiple of the tracking budget.
const VISITS_PER_TRACKED: usize = 4;

impl Budget {
    pub fn new(limits: &ScanLimits) -> Budget {
        Budget {
            walk: limits.ignored_walk_budget,
            visits: limits.ignored_walk_budget.saturating_mul(VISITS_PER_TRACKED),
            watch: limits.ignored_dir_watch_limit,
        }
    }
}

/// One entry found by a walk.
pub(super) struct Found {
    pub rel: String,
    pub stamp: Stamp,
    pub track: Track,
}

/// What a walk found, and the walked folders that hold a `.git` (which switches `.gitignore`
/// rules on, so its appearance or removal means walking afresh).
pub(super) struct Walked {
    pub found: Vec<Found>,
    pub git_dirs: Vec<String>,
}

/// The names in a folder, and whether a `.git` is among them.
pub(super) struct Listing {
    pub names: Vec<String>,
    pub has_git: bool,
}

/// The path of `abs` relative to `root`, `/`-separated; `None` outside the root or not UTF-8
/// (such names are not tracked: they could not be written back under the same name).
pub(super) fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    rel.to_str().map(str::to_string)
}

pub(super) fn join(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() { root.to_path_buf() } else { root.join(rel) }
}

fn name_of(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_string() } else { format!("{parent}/{name}") }
}

fn skipped(path: &Path, exclude: &[PathBuf]) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| VCS_DIRS.contains(&n))
        || exclude.iter().any(|e| path.starts_with(e))
}

/// Whether every name of `rel` (a path under `root`) is a folder itself, not a link to one: a
/// path through a link is not inside the project, whatever it leads to.
pub(super) fn plain_folders(root: &Path, rel: &str) -> bool {
    let mut path = root.to_path_buf();
    rel.split('/').filter(|n| !n.is_empty()).all(|name| {
        path.push(name);
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
    })
}

/// Walk `start` (relative; "" for the root) and everything under it that the `ignore` crate
/// yields, then the ignored entries next to them. `start` itself is included. A link is an
/// entry, never walked into: `ln -s /usr/include inc` adds `inc`, not what it points to (the
/// walker would follow a link it starts from).
pub(super) fn walk_from(
    root: &Path,
    start: &str,
    limits: &ScanLimits,
    budget: &mut Budget,
    limit_left: usize,
) -> Result<Walked, ScanError> {
    if !start.is_empty() {
        let nothing = Walked { found: Vec::new(), git_dirs: Vec::new() };
        let parent = start.rsplit_once('/').map_or("", |(p, _)| p);
        if !plain_folders(root, parent) {
            return Ok(nothing);
        }
        let Ok(meta) = std::fs::symlink_metadata(join(root, start)) else { return Ok(nothing) };
        let stamp = Stamp::of(&meta);
        if !stamp.is_dir() {
            let found = if stamp.is_other() {
                Vec::new()
            } else {
                vec![Found { rel: start.to_string(), stamp, track: Track::Full }]
            };
            return Ok(Walked { found, git_dirs: Vec::new() });
        }
    }
    let exclude = limits.exclude.clone();
    let mut found = Vec::new();
    let mut dirs = Vec::new();
    let walker = ignore::WalkBuilder::new(join(root, start))
        .hidden(false)
        .parents(true)
        .follow_links(false)
        .filter_entry(move |e| !skipped(e.path(), &exclude))
        .build();
    for item in walker {
        // An entry that vanished or cannot be read mid-walk is simply not there for this scan.
        let Ok(entry) = item else { continue };
        let Some(rel) = relative(root, entry.path()) else { continue };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        let stamp = Stamp::of(&meta);
        if stamp.is_other() {
            continue;
        }
        if stamp.is_dir() {
            dirs.push(rel.clone());
        }
        found.push(Found { rel, stamp, track: Track::Full });
        if found.len() > limit_left {
            return Err(ScanError::TooLarge { limit: limits.max_entries });
        }
    }
    if found.is_empty() && start.is_empty() {
        return Err(ScanError::Root { path: root.to_path_buf(), message: "nothing could be read".into() });
    }
    let walked: std::collections::HashSet<String> = found.iter().map(|f| f.rel.clone()).collect();
    let mut git_dirs = Vec::new();
    for dir in dirs {
        let listing = list(root, &dir, &limits.exclude);
        if listing.has_git {
            git_dirs.push(dir.clone());
        }
        for name in listing.names {
            let rel = child(&dir, &name);
            if !walked.contains(&rel) {
                found.extend(ignored(root, rel, limits, budget));
            }
        }
    }
    Ok(Walked { found, git_dirs })
}

/// The names in a folder, skipping VCS folders, excluded paths and non-UTF-8 names.
pub(super) fn list(root: &Path, dir: &str, exclude: &[PathBuf]) -> Listing {
    let mut listing = Listing { names: Vec::new(), has_git: false };
    let Ok(read) = std::fs::read_dir(join(root, dir)) else { return listing };
    for entry in read.flatten() {
        if entry.file_name() == ".git" {
            listing.has_git = true;
        }
        if skipped(&entry.path(), exclude) {
            continue;
        }
        if let Some(name) = entry.file_name().to_str() {
            listing.names.push(name.to_string());
        }
    }
    // Directory order is the filesystem's; sorted, budgets fall the same way on every run.
    listing.names.sort_unstable();
    listing
}

/// The children of `dir` the ignore rules let through (one level), for classifying new entries.
pub(super) fn walked_children(root: &Path, dir: &str, exclude: &[PathBuf]) -> std::collections::HashSet<String> {
    let exclude = exclude.to_vec();
    ignore::WalkBuilder::new(join(root, dir))
        .hidden(false)
        .parents(true)
        .follow_links(false)
        .max_depth(Some(1))
        .filter_entry(move |e| !skipped(e.path(), &exclude))
        .build()
        .flatten()
        .filter(|e| e.depth() == 1)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect()
}

/// An ignored entry: a file is tracked in full; a folder in full when its subtree fits what is
/// left of the walk budget, else watched through the mtimes of up to the watch budget of its
/// folders (breadth first).
pub(super) fn ignored(root: &Path, rel: String, limits: &ScanLimits, budget: &mut Budget) -> Vec<Found> {
    let Ok(meta) = std::fs::symlink_metadata(join(root, &rel)) else { return Vec::new() };
    let stamp = Stamp::of(&meta);
    if stamp.is_other() {
        return Vec::new();
    }
    if !stamp.is_dir() {
        return vec![Found { rel, stamp, track: Track::Ignored }];
    }
    let mut subtree = vec![Found { rel: rel.clone(), stamp, track: Track::Ignored }];
    let mut queue = VecDeque::from([rel.clone()]);
    let allowance = budget.walk.min(budget.visits);
    let mut visited = 0;
    let mut fits = true;
    'walk: while let Some(dir) = queue.pop_front() {
        for name in list(root, &dir, &limits.exclude).names {
            if visited == allowance {
                fits = false;
                break 'walk;
            }
            visited += 1;
            let rel = child(&dir, &name);
            let Ok(meta) = std::fs::symlink_metadata(join(root, &rel)) else { continue };
            let stamp = Stamp::of(&meta);
            if stamp.is_other() {
                continue;
            }
            if stamp.is_dir() {
                queue.push_back(rel.clone());
            }
            subtree.push(Found { rel, stamp, track: Track::Ignored });
        }
    }
    budget.visits -= visited;
    if fits {
        budget.walk -= visited;
        return subtree;
    }
    watched(root, rel, stamp, limits, budget)
}

/// A large ignored folder: itself and, breadth first, up to the watch budget of its folders.
fn watched(root: &Path, rel: String, stamp: Stamp, limits: &ScanLimits, budget: &mut Budget) -> Vec<Found> {
    let mut out = vec![Found { rel: rel.clone(), stamp, track: Track::Watched }];
    let mut queue = VecDeque::from([rel]);
    while let Some(dir) = queue.pop_front() {
        let Ok(read) = std::fs::read_dir(join(root, &dir)) else { continue };
        for entry in read.flatten() {
            if budget.watch == 0 {
                return out;
            }
            if !entry.file_type().is_ok_and(|t| t.is_dir()) || skipped(&entry.path(), &limits.exclude) {
                continue;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
            budget.watch -= 1;
            let rel = child(&dir, &name);
            queue.push_back(rel.clone());
            out.push(Found { rel, stamp: Stamp::of(&meta), track: Track::Watched });
        }
    }
    out
}

/// Whether `rel` names a file that changes what the walk yields.
pub(super) fn is_ignore_file(rel: &str) -> bool {
    IGNORE_FILES.contains(&name_of(rel))
}
