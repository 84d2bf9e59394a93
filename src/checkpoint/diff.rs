//! What a session (or one turn) changed, as unified diffs from the checkpoints.

use similar::TextDiff;

use crate::store::{BlobContent, ChangeRecord, ContentHash, PathState, Store, StoreError, Unkept};

/// What the session changed and still stands: every change no code rewind took back, from the
/// state before cairn first touched each path to the state it last left.
pub fn session_diff(store: &Store, session: &str) -> Result<String, StoreError> {
    let changes = store.checkpoint_changes(session, i64::MIN, None)?;
    render(store, &net(changes.iter().filter(|c| !c.reverted)))
}

/// What one turn changed (including what a rewind later took back, marked as such).
pub fn turn_diff(store: &Store, session: &str, user_seq: i64) -> Result<String, StoreError> {
    let changes = store.checkpoint_changes(session, user_seq, Some(user_seq))?;
    let mut out = render(store, &net(changes.iter()))?;
    if changes.iter().any(|c| c.reverted) {
        out.insert_str(0, "# a code rewind has since taken back some of these changes\n");
    }
    Ok(out)
}

/// Per path, in the order first touched: the state before the first change and after the last.
fn net<'a>(changes: impl Iterator<Item = &'a ChangeRecord>) -> Vec<(String, PathState, PathState)> {
    let mut out: Vec<(String, PathState, PathState)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for c in changes {
        match index.get(&c.path) {
            Some(&i) => out[i].2 = c.after.clone(),
            None => {
                index.insert(c.path.clone(), out.len());
                out.push((c.path.clone(), c.before.clone(), c.after.clone()));
            }
        }
    }
    out
}

enum Side {
    Absent,
    Text(String),
    Binary,
    /// Why the content cannot be shown.
    Missing(String),
}

fn side(store: &Store, state: &PathState) -> Result<Side, StoreError> {
    let hash: ContentHash = match state {
        PathState::Absent | PathState::Dir => return Ok(Side::Absent),
        PathState::Unkept { reason, .. } => {
            return Ok(Side::Missing(format!("content not kept: {}", reason.explain())));
        }
        PathState::File { hash, .. } | PathState::Symlink { hash } => *hash,
    };
    Ok(match store.blob_content(&hash)? {
        Some(BlobContent::Kept(bytes)) if bytes.contains(&0) => Side::Binary,
        Some(BlobContent::Kept(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => Side::Text(text),
            Err(_) => Side::Binary,
        },
        Some(BlobContent::Dropped) => Side::Missing("content dropped by the cap".into()),
        None => Side::Missing("content not in the store".into()),
    })
}

fn render(store: &Store, entries: &[(String, PathState, PathState)]) -> Result<String, StoreError> {
    let mut out = String::new();
    for (path, before, after) in entries {
        if let PathState::Unkept { reason: Unkept::IgnoredDir, .. } = before {
            out.push_str(&format!("# {path}/: changed inside an ignored folder (not checkpointed)\n"));
            continue;
        }
        if before == after || (is_dirish(before) && is_dirish(after)) {
            continue;
        }
        let old_name =
            if matches!(before, PathState::Absent | PathState::Dir) { "/dev/null".into() } else { format!("a/{path}") };
        let new_name =
            if matches!(after, PathState::Absent | PathState::Dir) { "/dev/null".into() } else { format!("b/{path}") };
        if let (PathState::File { hash: a, mode: ma }, PathState::File { hash: b, mode: mb }) = (before, after)
            && a == b
        {
            out.push_str(&format!("# {path}: mode {:o} → {:o}\n", 0o100000 | ma, 0o100000 | mb));
            continue;
        }
        if let Some(what) = link_change(store, before, after)? {
            out.push_str(&format!("# {path}: {what}\n"));
            continue;
        }
        match (side(store, before)?, side(store, after)?) {
            (Side::Missing(why), _) | (_, Side::Missing(why)) => out.push_str(&format!("# {path}: changed; {why}\n")),
            (Side::Binary, _) | (_, Side::Binary) => {
                out.push_str(&format!("Binary files {old_name} and {new_name} differ\n"));
            }
            (old, new) => {
                let text = |s: Side| match s {
                    Side::Text(t) => t,
                    Side::Absent | Side::Binary | Side::Missing(_) => String::new(),
                };
                let (old, new) = (text(old), text(new));
                let diff = TextDiff::from_lines(&old, &new);
                out.push_str(&diff.unified_diff().context_radius(3).header(&old_name, &new_name).to_string());
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}

/// What became of a symbolic link (its target is its content): said in words, not diffed as
/// a one-line file.
fn link_change(store: &Store, before: &PathState, after: &PathState) -> Result<Option<String>, StoreError> {
    let target = |state: &PathState| -> Result<String, StoreError> {
        Ok(match side(store, state)? {
            Side::Text(t) => t,
            Side::Absent | Side::Binary | Side::Missing(_) => "?".to_string(),
        })
    };
    Ok(match (before, after) {
        (PathState::Symlink { .. }, PathState::Symlink { .. }) => {
            Some(format!("symbolic link to {} now points to {}", target(before)?, target(after)?))
        }
        (PathState::Symlink { .. }, PathState::Absent | PathState::Dir) => {
            Some(format!("symbolic link to {} removed", target(before)?))
        }
        (PathState::Symlink { .. }, _) => Some(format!("symbolic link to {} replaced by a file", target(before)?)),
        (PathState::Absent | PathState::Dir, PathState::Symlink { .. }) => {
            Some(format!("new symbolic link to {}", target(after)?))
        }
        (_, PathState::Symlink { .. }) => Some(format!("replaced by a symbolic link to {}", target(after)?)),
        _ => None,
    })
}

/// Folders and absence carry no content to diff.
fn is_dirish(state: &PathState) -> bool {
    matches!(state, PathState::Absent | PathState::Dir)
}
