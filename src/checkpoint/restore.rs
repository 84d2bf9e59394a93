//! Putting files back (the IO around `plan`): read what is on disk, plan, write, report, and
//! mark what was taken back.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::beneath::{Beneath, Reach};
use super::capture::CheckpointError;
use super::observe::{KeepRules, observe_in};
use super::plan::{Action, PathNote, RewindPlan, Verdict, plan};
use crate::config::{CheckpointsConfig, Redactor};
use crate::store::{BlobContent, ContentHash, Store};

/// What a code rewind did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RewindReport {
    /// Written back (files, links) or re-created (folders).
    pub restored: Vec<String>,
    /// Removed because they did not exist before.
    pub deleted: Vec<String>,
    /// Changed by someone else since; left as they are (unless the user confirmed them).
    pub conflicts: Vec<PathNote>,
    /// Conflicts restored anyway because the user confirmed them.
    pub overridden: Vec<PathNote>,
    /// Their earlier content is not available; left as they are.
    pub unrestorable: Vec<PathNote>,
    /// Could not be written (permissions, a folder that is not empty, …); left as they are.
    pub failed: Vec<PathNote>,
    /// Reached through a link now (a folder on the way was replaced by one): skipped, so that
    /// nothing outside the project is written or deleted.
    pub outside: Vec<PathNote>,
}

impl RewindReport {
    /// Lines for a transcript or a terminal: a summary, then one line per path left alone or
    /// overwritten, with why.
    pub fn lines(&self) -> Vec<String> {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let left = self.unrestorable.len() + self.failed.len() + self.outside.len();
        let mut head = if self.restored.is_empty() && self.deleted.is_empty() {
            "no file needed restoring".to_string()
        } else {
            format!("restored {}, deleted {}", plural(self.restored.len(), "file", "files"), self.deleted.len())
        };
        if !self.conflicts.is_empty() {
            head.push_str(&format!(
                "; {} left as {}",
                plural(self.conflicts.len(), "conflict", "conflicts"),
                if self.conflicts.len() == 1 { "it is" } else { "they are" }
            ));
        }
        if !self.overridden.is_empty() {
            head.push_str(&format!("; {} overwritten", plural(self.overridden.len(), "conflict", "conflicts")));
        }
        if left > 0 {
            head.push_str(&format!("; {} not restorable", plural(left, "file", "files")));
        }
        let mut out = vec![head];
        out.extend(self.conflicts.iter().map(|n| format!("  conflict: {}", n.reason)));
        out.extend(self.overridden.iter().map(|n| format!("  overwritten: {}", n.reason)));
        out.extend(
            self.unrestorable.iter().chain(&self.failed).chain(&self.outside).map(|n| format!("  {}", n.reason)),
        );
        out
    }

    /// Every path was put back (conflicts overwritten count as put back).
    pub fn complete(&self) -> bool {
        self.conflicts.is_empty() && self.unrestorable.is_empty() && self.failed.is_empty() && self.outside.is_empty()
    }
}

/// Plan taking back the code changes of every turn from the one opened by `from_user_seq` on.
/// `secrets` are the key values capture kept out, so what is on disk is read as capture read it.
pub fn plan_code_rewind(
    store: &Store,
    session: &str,
    root: &Path,
    config: &CheckpointsConfig,
    secrets: &Redactor,
    from_user_seq: i64,
) -> Result<RewindPlan, CheckpointError> {
    let changes = store.checkpoint_changes(session, from_user_seq, None)?;
    let rules = KeepRules::new(config).map_err(CheckpointError::Config)?.keeping_out(secrets);
    let beneath =
        Beneath::open(root).map_err(|e| CheckpointError::Io(format!("cannot open {}: {e}", root.display())))?;
    let mut now = HashMap::new();
    let mut targets = Vec::new();
    for change in changes.iter().filter(|c| !c.reverted) {
        if !now.contains_key(&change.path) {
            now.insert(change.path.clone(), observe_in(&beneath, &change.path, &rules).state);
            targets.extend(change.before.hash());
        }
    }
    let dropped = store.blobs_not_kept(&targets)?;
    Ok(plan(&changes, &now, &dropped))
}

/// Which conflicts a code rewind overwrites: the user confirms the ones shown, and a conflict
/// that appeared since is not among them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Overwrite {
    /// Skip every conflict (the default).
    #[default]
    Nothing,
    /// Overwrite every conflict (`cairn rewind --force`).
    All,
    /// Overwrite these paths if they are conflicts; skip any other.
    Only(BTreeSet<String>),
}

impl Overwrite {
    fn covers(&self, path: &str) -> bool {
        match self {
            Overwrite::Nothing => false,
            Overwrite::All => true,
            Overwrite::Only(paths) => paths.contains(path),
        }
    }
}

/// Carry out `plan` under `root`: conflicts only those `overwrite` covers. Paths restored (or
/// already as they were) have their changes marked reverted, so a later rewind does not take
/// them back again.
pub fn apply_code_rewind(
    store: &Store,
    root: &Path,
    plan: &RewindPlan,
    overwrite: &Overwrite,
) -> Result<RewindReport, CheckpointError> {
    let beneath =
        Beneath::open(root).map_err(|e| CheckpointError::Io(format!("cannot open {}: {e}", root.display())))?;
    let mut report = RewindReport::default();
    let mut done: HashSet<&str> = HashSet::new();
    let mut go = Vec::new();
    for p in &plan.paths {
        match &p.verdict {
            Verdict::Unrestorable(reason) => {
                report.unrestorable.push(PathNote { path: p.path.clone(), reason: reason.clone() })
            }
            Verdict::Conflict(reason) if !overwrite.covers(&p.path) => {
                report.conflicts.push(PathNote { path: p.path.clone(), reason: reason.clone() })
            }
            Verdict::Conflict(reason) => {
                report.overridden.push(PathNote { path: p.path.clone(), reason: reason.clone() });
                go.push(p);
            }
            Verdict::Ready => go.push(p),
        }
    }
    // Removals first (files, then folders deepest first), then folders, then contents, so a
    // path that changed kind is cleared before it is recreated.
    let depth = |p: &str| p.matches('/').count();
    let fail = |report: &mut RewindReport, path: &str, e: Reach| match e {
        Reach::Outside { .. } => {
            report.outside.push(PathNote { path: path.to_string(), reason: format!("{path}: {e}") })
        }
        Reach::Io(e) => {
            report.failed.push(PathNote { path: path.to_string(), reason: format!("can't restore {path}: {e}") })
        }
    };
    for p in go.iter().filter(|p| p.action == Action::Delete) {
        match remove_any(&beneath, &p.path) {
            Ok(()) => {
                report.deleted.push(p.path.clone());
                done.insert(&p.path);
            }
            Err(e) => fail(&mut report, &p.path, e),
        }
    }
    let mut dirs: Vec<_> = go.iter().filter(|p| p.action == Action::RemoveDir).collect();
    dirs.sort_by_key(|p| std::cmp::Reverse(depth(&p.path)));
    for p in dirs {
        match beneath.remove_dir(&p.path) {
            Ok(()) => {
                report.deleted.push(p.path.clone());
                done.insert(&p.path);
            }
            Err(Reach::Io(e)) => fail(
                &mut report,
                &p.path,
                Reach::Io(std::io::Error::other(format!(
                    "the folder could not be removed ({e}); it holds files cairn did not create"
                ))),
            ),
            Err(e) => fail(&mut report, &p.path, e),
        }
    }
    let mut dirs: Vec<_> = go.iter().filter(|p| p.action == Action::CreateDir).collect();
    dirs.sort_by_key(|p| depth(&p.path));
    for p in dirs {
        let result = clear_non_dir(&beneath, &p.path).and_then(|()| beneath.create_dir_all(&p.path));
        match result {
            Ok(()) => {
                report.restored.push(p.path.clone());
                done.insert(&p.path);
            }
            Err(e) => fail(&mut report, &p.path, e),
        }
    }
    for p in &go {
        let (hash, mode, link) = match &p.action {
            Action::Write { hash, mode } => (hash, *mode, false),
            Action::Link { hash } => (hash, 0, true),
            Action::Keep => {
                done.insert(&p.path);
                continue;
            }
            Action::Delete | Action::RemoveDir | Action::CreateDir => continue,
        };
        match write_back(store, &beneath, &p.path, hash, mode, link) {
            Ok(()) => {
                report.restored.push(p.path.clone());
                done.insert(&p.path);
            }
            Err(e) => fail(&mut report, &p.path, e),
        }
    }
    let ids: Vec<i64> = plan
        .paths
        .iter()
        .filter(|p| done.contains(p.path.as_str()))
        .flat_map(|p| p.change_ids.iter().copied())
        .collect();
    store.mark_changes_reverted(&ids)?;
    Ok(report)
}

/// Remove what is at `rel`; a path a link now leads elsewhere is named, never deleted.
fn remove_any(beneath: &Beneath, rel: &str) -> Result<(), Reach> {
    match beneath.lookup(rel)? {
        None => Ok(()),
        Some(stamp) if stamp.is_dir() => beneath.remove_dir(rel),
        Some(_) => beneath.remove_file(rel),
    }
}

/// A file or link where a folder must be: removed (it was recorded as cairn's change).
fn clear_non_dir(beneath: &Beneath, rel: &str) -> Result<(), Reach> {
    match beneath.stamp(rel) {
        Some(stamp) if !stamp.is_dir() => beneath.remove_file(rel),
        Some(_) | None => Ok(()),
    }
}

fn write_back(
    store: &Store,
    beneath: &Beneath,
    rel: &str,
    hash: &ContentHash,
    mode: u32,
    link: bool,
) -> Result<(), Reach> {
    let io = |e: String| Reach::Io(std::io::Error::other(e));
    let bytes = match store.blob_content(hash).map_err(|e| io(e.to_string()))? {
        Some(BlobContent::Kept(bytes)) => bytes,
        Some(BlobContent::Dropped) => {
            return Err(io("its content was dropped by the cap (checkpoints.max_store_mb)".into()));
        }
        None => return Err(io("its content is not in the store".into())),
    };
    // A folder cairn put where the file was: empty by now, unless someone else filled it.
    if beneath.stamp(rel).is_some_and(|s| s.is_dir()) {
        beneath.remove_dir(rel).map_err(|e| io(format!("a folder is in the way ({e})")))?;
    }
    if link {
        return beneath.symlink(&bytes, rel);
    }
    beneath.write_atomically(rel, &bytes, mode)
}
