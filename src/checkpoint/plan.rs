//! Deciding how to put a session's files back to before a turn. Pure: from the recorded
//! changes, what is on disk now, and which contents the cap dropped.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::observe::still_holds;
use crate::store::{ChangeRecord, ContentHash, PathState, Unkept};

/// What to do to one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// It already holds what it held before: nothing to write.
    Keep,
    Write {
        hash: ContentHash,
        mode: u32,
    },
    Link {
        hash: ContentHash,
    },
    Delete,
    RemoveDir,
    CreateDir,
}

/// Whether the path can be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ready,
    /// Someone else changed it since cairn did; restored only when forced.
    Conflict(String),
    /// Its earlier content is not available; never touched.
    Unrestorable(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPlan {
    pub path: String,
    /// The recorded changes this restore takes back (marked reverted once it is done).
    pub change_ids: Vec<i64>,
    /// What the path held before the turn.
    pub target: PathState,
    pub action: Action,
    pub verdict: Verdict,
}

/// The plan of a code rewind, paths in the order cairn first touched them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewindPlan {
    pub paths: Vec<PathPlan>,
}

/// One path the report explains.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathNote {
    pub path: String,
    pub reason: String,
}

impl RewindPlan {
    pub fn conflicts(&self) -> Vec<PathNote> {
        self.notes(|v| match v {
            Verdict::Conflict(reason) => Some(reason),
            Verdict::Ready | Verdict::Unrestorable(_) => None,
        })
    }

    pub fn unrestorable(&self) -> Vec<PathNote> {
        self.notes(|v| match v {
            Verdict::Unrestorable(reason) => Some(reason),
            Verdict::Ready | Verdict::Conflict(_) => None,
        })
    }

    fn notes(&self, pick: impl Fn(&Verdict) -> Option<&String>) -> Vec<PathNote> {
        self.paths
            .iter()
            .filter_map(|p| pick(&p.verdict).map(|reason| PathNote { path: p.path.clone(), reason: reason.clone() }))
            .collect()
    }

    /// Nothing to do at all.
    pub fn is_empty(&self) -> bool {
        self.paths.iter().all(|p| p.action == Action::Keep && p.verdict == Verdict::Ready)
    }
}

/// Plan putting every path `changes` touched back to what it held before the first of them.
/// `changes` are those of the turns to take back, oldest first; reverted ones are skipped.
/// `now` holds what each path holds on disk (missing means absent); `dropped` the contents
/// the size cap dropped.
pub fn plan(changes: &[ChangeRecord], now: &HashMap<String, PathState>, dropped: &HashSet<ContentHash>) -> RewindPlan {
    let mut order: Vec<&str> = Vec::new();
    let mut chains: HashMap<&str, Vec<&ChangeRecord>> = HashMap::new();
    for change in changes.iter().filter(|c| !c.reverted) {
        let chain = chains.entry(&change.path).or_default();
        if chain.is_empty() {
            order.push(&change.path);
        }
        chain.push(change);
    }
    let absent = PathState::Absent;
    let paths = order
        .into_iter()
        .filter_map(|path| {
            let chain = chains.get(path)?;
            let (first, last) = (chain.first()?, chain.last()?);
            let current = now.get(path).unwrap_or(&absent);
            let target = first.before.clone();
            let action = action_for(&target, current);
            let verdict = verdict_for(path, chain, &target, &last.after, current, dropped);
            Some(PathPlan {
                path: path.to_string(),
                change_ids: chain.iter().map(|c| c.id).collect(),
                target,
                action,
                verdict,
            })
        })
        .collect();
    RewindPlan { paths }
}

fn action_for(target: &PathState, current: &PathState) -> Action {
    if already(target, current) {
        return Action::Keep;
    }
    match target {
        PathState::Absent if *current == PathState::Dir => Action::RemoveDir,
        PathState::Absent => Action::Delete,
        PathState::Dir => Action::CreateDir,
        PathState::File { hash, mode } => Action::Write { hash: *hash, mode: *mode },
        PathState::Symlink { hash } => Action::Link { hash: *hash },
        PathState::Unkept { .. } => Action::Keep,
    }
}

/// The path holds exactly what it held before, permissions included.
fn already(target: &PathState, current: &PathState) -> bool {
    if let (PathState::File { mode: a, .. }, PathState::File { mode: b, .. }) = (target, current)
        && a != b
    {
        return false;
    }
    still_holds(target, current)
}

fn verdict_for(
    path: &str,
    chain: &[&ChangeRecord],
    target: &PathState,
    left: &PathState,
    current: &PathState,
    dropped: &HashSet<ContentHash>,
) -> Verdict {
    if let PathState::Unkept { reason: Unkept::IgnoredDir, .. } = target {
        return Verdict::Unrestorable(format!(
            "{path}/ is an ignored folder too large to checkpoint; what the command changed inside it is left as it is"
        ));
    }
    if already(target, current) {
        return Verdict::Ready;
    }
    match target {
        PathState::Unkept { reason, .. } => {
            return Verdict::Unrestorable(format!(
                "can't restore {path}: its content was not kept ({})",
                reason.explain()
            ));
        }
        PathState::File { hash, .. } | PathState::Symlink { hash } if dropped.contains(hash) => {
            return Verdict::Unrestorable(format!(
                "can't restore {path}, its content was dropped by the cap (checkpoints.max_store_mb)"
            ));
        }
        PathState::Absent | PathState::Dir | PathState::File { .. } | PathState::Symlink { .. } => {}
    }
    if !still_holds(left, current) {
        return Verdict::Conflict(format!("{path} was changed by someone else after cairn last wrote it"));
    }
    let outside = chain.windows(2).any(|w| !still_holds(&w[0].after, &w[1].before));
    if outside {
        return Verdict::Conflict(format!(
            "{path} was also changed outside cairn between the turns being taken back; restoring it would lose that"
        ));
    }
    Verdict::Ready
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
