//! Reading what a path holds now, as a checkpoint state plus the content to keep.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::beneath::Beneath;
use super::stamp::Stamp;
use crate::config::{CheckpointsConfig, Redactor};
use crate::store::{NewBlob, PathState, Unkept};

/// What is kept of file contents, from `[checkpoints]`.
#[derive(Clone, Debug)]
pub struct KeepRules {
    max_file_bytes: u64,
    never_store: GlobSet,
    /// Provider keys: a content holding one is never copied.
    secrets: Redactor,
}

impl KeepRules {
    pub fn new(config: &CheckpointsConfig) -> Result<KeepRules, String> {
        let mut set = GlobSetBuilder::new();
        for pattern in &config.never_store {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("checkpoints.never_store has a bad pattern {pattern:?}: {e}"))?;
            set.add(glob);
        }
        let never_store = set.build().map_err(|e| format!("checkpoints.never_store: {e}"))?;
        Ok(KeepRules { max_file_bytes: config.max_file_bytes, never_store, secrets: Redactor::default() })
    }

    /// The same rules, and a content holding one of these key values is not kept either.
    pub fn keeping_out(mut self, secrets: &Redactor) -> KeepRules {
        self.secrets = secrets.clone();
        self
    }

    /// Whether `rel`'s content must never be copied (matched as a path and as a file name).
    pub fn never_store(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.never_store.is_match(rel) || self.never_store.is_match(name)
    }
}

/// A path's state now, with the content to keep when there is one, and its stamp.
pub struct Observed {
    pub state: PathState,
    pub blob: Option<NewBlob>,
    pub stamp: Option<Stamp>,
}

/// Read `rel` under `root`: a file's content (unless too large or never stored), a link's
/// target, or just that it is a folder or absent. Reached name by name from the root without
/// following links ([`Beneath`]): a path a link now leads elsewhere reads as absent.
pub fn observe(root: &Path, rel: &str, rules: &KeepRules) -> Observed {
    match Beneath::open(root) {
        Ok(beneath) => observe_in(&beneath, rel, rules),
        Err(_) => Observed { state: PathState::Absent, blob: None, stamp: None },
    }
}

/// [`observe`] with the root already open.
pub fn observe_in(beneath: &Beneath, rel: &str, rules: &KeepRules) -> Observed {
    let Some(stamp) = beneath.stamp(rel) else {
        return Observed { state: PathState::Absent, blob: None, stamp: None };
    };
    let unkept = |reason| PathState::Unkept { reason, size: stamp.size, mtime_ns: stamp.mtime_ns };
    let (state, blob) = if stamp.is_dir() {
        (PathState::Dir, None)
    } else if stamp.is_symlink() {
        match beneath.read_link(rel) {
            Ok(target) if rules.secrets.found_in(&target).is_some() => (unkept(Unkept::Secret), None),
            Ok(target) => {
                let blob = NewBlob::new(target);
                (PathState::Symlink { hash: blob.hash }, Some(blob))
            }
            Err(_) => (unkept(Unkept::Unreadable), None),
        }
    } else if !stamp.is_file() {
        (unkept(Unkept::Unreadable), None)
    } else if rules.never_store(rel) {
        (unkept(Unkept::NeverStore), None)
    } else if stamp.size > rules.max_file_bytes {
        (unkept(Unkept::TooLarge), None)
    } else {
        match beneath.read(rel) {
            Ok(bytes) if rules.secrets.found_in(&bytes).is_some() => (unkept(Unkept::Secret), None),
            Ok(bytes) => {
                let blob = NewBlob::new(bytes);
                (PathState::File { hash: blob.hash, mode: stamp.permissions() }, Some(blob))
            }
            Err(_) => (unkept(Unkept::Unreadable), None),
        }
    };
    Observed { state, blob, stamp: Some(stamp) }
}

/// Whether what is on disk is still `expected` (what cairn left there). A kept content compares
/// by hash; a content not kept by size and mtime, the best that can be known of it.
pub fn still_holds(expected: &PathState, now: &PathState) -> bool {
    match (expected, now) {
        (PathState::Absent, PathState::Absent) | (PathState::Dir, PathState::Dir) => true,
        (PathState::File { hash: a, .. }, PathState::File { hash: b, .. }) => a == b,
        (PathState::Symlink { hash: a }, PathState::Symlink { hash: b }) => a == b,
        (PathState::Unkept { size, mtime_ns, .. }, PathState::Unkept { size: s, mtime_ns: m, .. }) => {
            size == s && mtime_ns == m
        }
        (PathState::Absent, _)
        | (PathState::Dir, _)
        | (PathState::File { .. }, _)
        | (PathState::Symlink { .. }, _)
        | (PathState::Unkept { .. }, _) => false,
    }
}
