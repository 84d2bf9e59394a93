//! Capturing what each tool call changes, into the checkpoint of the current turn.
//!
//! Writes (`file_write`, `file_edit`): the named paths are read before and after. Commands
//! (`bash`): the tree is rescanned before (and every file whose stamp moved since the last scan
//! is read and kept, so its content can be put back) and after (what moved is read and recorded
//! against the content kept before). The first scan of a session walks the whole tree; a file
//! whose stamp matches the project's manifest is not read again, so only the first session on a
//! project reads every file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::observe::{KeepRules, Observed, observe};
use super::scan::{Content, Delta, Entry, Tree};
use super::stamp::Stamp;
use super::walk::{ScanError, ScanLimits};
use crate::config::{CheckpointsConfig, Redactor};
use crate::store::{
    CaptureBatch, ManifestDelta, ManifestEntry, NewBlob, NewChange, PathState, ProjectId, Store, StoreError,
    TurnChanges, Unkept,
};

/// Contents committed per transaction while warming up: bounds memory and lock time.
const WARM_UP_BATCH_BYTES: usize = 16 * 1024 * 1024;
const WARM_UP_BATCH_FILES: usize = 2_000;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Scan(#[from] ScanError),
    #[error("{0}")]
    Config(String),
    #[error("no turn is open: call begin_turn with the seq of the user message first")]
    NoTurn,
    #[error("{0}")]
    Io(String),
}

/// What a call is, for capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// Writes exactly these paths (absolute, as `Prepared::paths` resolved them).
    Write(Vec<PathBuf>),
    /// Runs a command that may touch anything in the project.
    Exec,
}

/// Held between `before_call` and `after_call` of one tool call.
#[derive(Debug)]
pub struct CallGuard {
    kind: GuardKind,
}

#[derive(Debug)]
enum GuardKind {
    /// Checkpoints are off, or bash scanning is off for this session.
    Inactive,
    Write(Vec<WriteBefore>),
    Exec,
}

#[derive(Debug)]
struct WriteBefore {
    rel: String,
    state: PathState,
    blob: Option<NewBlob>,
    /// Folders above the path that did not exist, outermost first.
    missing_dirs: Vec<String>,
}

/// One path a call changed, as the transcript may list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedPath {
    pub path: String,
    pub before: PathState,
    pub after: PathState,
}

/// What warming up did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarmUp {
    pub entries: usize,
    /// Files read because the manifest did not already hold them.
    pub files_read: usize,
    pub bytes_read: u64,
    /// Set when bash changes cannot be checkpointed in this session, and why.
    pub scan_off: Option<String>,
    /// Folders are watched (Linux inotify): scans stat only where something happened.
    pub watched: bool,
    /// Stopped before the end (the session closed): what was read is kept, and the next warm-up
    /// (or the first command) goes on from the manifest.
    pub stopped: bool,
}

/// The checkpoints of one session.
pub struct Checkpointer {
    store: Arc<Store>,
    session: String,
    project: ProjectId,
    root: PathBuf,
    config: CheckpointsConfig,
    rules: KeepRules,
    limits: ScanLimits,
    tree: Option<Tree>,
    scan_off: Option<String>,
    turn: Option<i64>,
}

impl Checkpointer {
    /// `root` must be canonical (as `ToolContext::root` is); `exclude` lists absolute paths
    /// never scanned (cairn's data folder when it sits inside the project).
    pub fn new(
        store: Arc<Store>,
        session: &str,
        project: ProjectId,
        root: &Path,
        config: &CheckpointsConfig,
        exclude: Vec<PathBuf>,
    ) -> Result<Checkpointer, CheckpointError> {
        let rules = KeepRules::new(config).map_err(CheckpointError::Config)?;
        let limits = ScanLimits {
            ignored_walk_budget: config.ignored_walk_budget,
            ignored_dir_watch_limit: config.ignored_dir_watch_limit,
            max_entries: config.max_scan_entries,
            exclude,
            watch_folders: config.watch_folders,
        };
        Ok(Checkpointer {
            store,
            session: session.to_string(),
            project,
            root: root.to_path_buf(),
            config: config.clone(),
            rules,
            limits,
            tree: None,
            scan_off: None,
            turn: None,
        })
    }

    /// Contents holding one of these key values are never kept (they are recorded as changed,
    /// and a rewind says it cannot restore them).
    pub fn keeping_out(mut self, secrets: &Redactor) -> Checkpointer {
        self.rules = self.rules.keeping_out(secrets);
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn session(&self) -> &str {
        &self.session
    }

    /// Why bash changes are not checkpointed in this session, if they are not.
    pub fn scan_off(&self) -> Option<&str> {
        self.scan_off.as_deref()
    }

    /// Open the checkpoint of a turn: `user_seq` is the seq of the user message that started it.
    pub fn begin_turn(&mut self, user_seq: i64) {
        self.turn = Some(user_seq);
    }

    /// Walk the tree and keep the content of every file not yet kept, so the first `bash` of the
    /// session has nothing left to read. Idempotent; run it on a blocking thread at session start.
    pub fn warm_up(&mut self) -> Result<WarmUp, CheckpointError> {
        self.warm_up_until(&AtomicBool::new(false))
    }

    /// [`Checkpointer::warm_up`], stopping early once `stop` is set (checked between files), so
    /// a session that closes does not wait for the first read of a large project.
    pub fn warm_up_until(&mut self, stop: &AtomicBool) -> Result<WarmUp, CheckpointError> {
        if !self.config.enabled || self.scan_off.is_some() {
            return Ok(WarmUp { scan_off: self.scan_off.clone(), ..Default::default() });
        }
        if let Some(tree) = &self.tree {
            return Ok(WarmUp { entries: tree.len(), ..Default::default() });
        }
        let mut tree = match Tree::walk(&self.root, self.limits.clone()) {
            Ok(tree) => tree,
            Err(e @ ScanError::TooLarge { .. }) => {
                tracing::warn!(error = %e, "bash changes will not be checkpointed");
                self.scan_off = Some(e.to_string());
                return Ok(WarmUp { scan_off: self.scan_off.clone(), ..Default::default() });
            }
            Err(e) => return Err(e.into()),
        };
        let manifest: HashMap<String, ManifestEntry> =
            self.store.manifest(self.project)?.into_iter().map(|e| (e.path.clone(), e)).collect();
        let mut report = WarmUp { entries: tree.len(), ..Default::default() };
        let mut batch = Batch::default();
        let files: Vec<(String, Stamp)> = tree
            .entries()
            .filter(|(_, e)| !e.stamp.is_dir() && e.content == Content::Unknown)
            .map(|(p, e)| (p.clone(), e.stamp))
            .collect();
        let walked: HashSet<&String> = files.iter().map(|(p, _)| p).collect();
        let stale: Vec<String> = manifest.keys().filter(|p| !walked.contains(p)).cloned().collect();
        batch.removals = stale;
        for (rel, stamp) in &files {
            if stop.load(Ordering::Relaxed) {
                self.commit(batch, None)?;
                return Ok(WarmUp { stopped: true, ..report });
            }
            if let Some(known) = manifest.get(rel).filter(|m| same_stamp(m, stamp)) {
                tree.set_content(rel, Content::Kept(known.hash));
                continue;
            }
            let seen = observe(&self.root, rel, &self.rules);
            report.files_read += usize::from(seen.blob.is_some());
            report.bytes_read += seen.blob.as_ref().map(|b| b.bytes.len() as u64).unwrap_or(0);
            batch.keep(&mut tree, rel, seen);
            if batch.bytes >= WARM_UP_BATCH_BYTES || batch.upserts.len() >= WARM_UP_BATCH_FILES {
                self.commit(std::mem::take(&mut batch), None)?;
            }
        }
        self.commit(batch, None)?;
        // One pass over everything now that the folders are watched, so the first command
        // starts from a settled tree.
        self.settle(&mut tree)?;
        report.watched = tree.is_watched();
        self.tree = Some(tree);
        Ok(report)
    }

    /// Call right before a tool that changes files runs.
    pub fn before_call(&mut self, kind: &CallKind) -> Result<CallGuard, CheckpointError> {
        if !self.config.enabled {
            return Ok(CallGuard { kind: GuardKind::Inactive });
        }
        match kind {
            CallKind::Write(paths) => {
                let mut before = Vec::new();
                for path in paths {
                    let Some(rel) = self.relative(path) else { continue };
                    let seen = observe(&self.root, &rel, &self.rules);
                    let missing_dirs = missing_ancestors(&self.root, &rel);
                    before.push(WriteBefore { rel, state: seen.state, blob: seen.blob, missing_dirs });
                }
                Ok(CallGuard { kind: GuardKind::Write(before) })
            }
            CallKind::Exec => {
                if self.tree.is_none() {
                    self.warm_up()?;
                }
                let Some(mut tree) = self.tree.take() else { return Ok(CallGuard { kind: GuardKind::Inactive }) };
                let result = self.settle(&mut tree);
                self.tree = Some(tree);
                match result {
                    Ok(()) => Ok(CallGuard { kind: GuardKind::Exec }),
                    Err(e) => self.stop_scanning(e).map(|()| CallGuard { kind: GuardKind::Inactive }),
                }
            }
        }
    }

    /// Call right after the tool ran, whatever its outcome (failed, timed out, interrupted: it
    /// may have changed files all the same). Records the changes in the current turn.
    pub fn after_call(
        &mut self,
        guard: CallGuard,
        tool: &str,
        call_id: &str,
    ) -> Result<Vec<ChangedPath>, CheckpointError> {
        match guard.kind {
            GuardKind::Inactive => Ok(Vec::new()),
            GuardKind::Write(before) => self.after_write(before, tool, call_id),
            GuardKind::Exec => {
                let Some(mut tree) = self.tree.take() else { return Ok(Vec::new()) };
                let result = self.after_exec(&mut tree, tool, call_id);
                self.tree = Some(tree);
                match result {
                    Ok(changed) => Ok(changed),
                    Err(CheckpointError::Scan(e)) => self.stop_scanning(e.into()).map(|()| Vec::new()),
                    Err(e) => Err(e),
                }
            }
        }
    }

    fn stop_scanning(&mut self, error: CheckpointError) -> Result<(), CheckpointError> {
        match error {
            CheckpointError::Scan(e @ ScanError::TooLarge { .. }) => {
                tracing::warn!(error = %e, "bash changes will no longer be checkpointed");
                self.scan_off = Some(e.to_string());
                self.tree = None;
                Ok(())
            }
            other => Err(other),
        }
    }

    /// Before a command: rescan, and keep the content of whatever moved since the last scan
    /// (someone else's edits), so the command's changes are recorded against the real before.
    fn settle(&self, tree: &mut Tree) -> Result<(), CheckpointError> {
        let delta = tree.rescan()?;
        let mut batch = Batch::default();
        for rel in delta.created.iter().chain(delta.modified.iter().map(|(p, _)| p)) {
            if tree.get(rel).is_some_and(|e| e.content == Content::Unknown) {
                batch.keep(tree, rel, observe(&self.root, rel, &self.rules));
            }
        }
        batch.removals.extend(delta.removed.into_iter().map(|(p, _)| p));
        self.commit(batch, None)
    }

    fn after_exec(&self, tree: &mut Tree, tool: &str, call_id: &str) -> Result<Vec<ChangedPath>, CheckpointError> {
        let turn = self.turn.ok_or(CheckpointError::NoTurn)?;
        let Delta { created, modified, removed, touched } = tree.rescan()?;
        let mut batch = Batch::default();
        let mut changed = Vec::new();
        // A path both gone and new changed kind (a folder replaced by a link): one change, from
        // what it was to what it is.
        let mut removed: std::collections::BTreeMap<String, _> = removed.into_iter().collect();
        for rel in created {
            let was = removed.remove(&rel);
            let before = was.as_ref().map_or(PathState::Absent, state_of);
            let after = match tree.get(&rel) {
                Some(e) if e.stamp.is_dir() => {
                    if was.is_some() {
                        // What the manifest held for it (a file, a link) is not there any more.
                        batch.removals.push(rel.clone());
                    }
                    PathState::Dir
                }
                Some(_) => batch.keep(tree, &rel, observe(&self.root, &rel, &self.rules)),
                None => continue,
            };
            if after != before {
                changed.push(ChangedPath { path: rel, before, after });
            }
        }
        for (rel, old) in modified {
            let after = batch.keep(tree, &rel, observe(&self.root, &rel, &self.rules));
            let before = state_of(&old);
            if before != after {
                changed.push(ChangedPath { path: rel, before, after });
            }
        }
        for (rel, old) in removed {
            batch.removals.push(rel.clone());
            changed.push(ChangedPath { path: rel, before: state_of(&old), after: PathState::Absent });
        }
        for root in touched {
            let unkept = PathState::Unkept { reason: Unkept::IgnoredDir, size: 0, mtime_ns: 0 };
            changed.push(ChangedPath { path: root, before: unkept.clone(), after: unkept });
        }
        changed.sort_by(|a, b| a.path.cmp(&b.path));
        self.commit(batch, Some(self.turn_changes(turn, tool, call_id, &changed)))?;
        Ok(changed)
    }

    fn after_write(
        &mut self,
        before: Vec<WriteBefore>,
        tool: &str,
        call_id: &str,
    ) -> Result<Vec<ChangedPath>, CheckpointError> {
        let turn = self.turn.ok_or(CheckpointError::NoTurn)?;
        let mut tree = self.tree.take();
        let mut batch = Batch::default();
        let mut changed = Vec::new();
        for b in before {
            for dir in &b.missing_dirs {
                if std::fs::symlink_metadata(self.root.join(dir)).is_ok_and(|m| m.is_dir()) {
                    changed.push(ChangedPath { path: dir.clone(), before: PathState::Absent, after: PathState::Dir });
                }
            }
            let seen = observe(&self.root, &b.rel, &self.rules);
            let after = seen.state.clone();
            if let Some(tree) = tree.as_mut() {
                for dir in &b.missing_dirs {
                    if let Ok(meta) = std::fs::symlink_metadata(self.root.join(dir)) {
                        tree.put(dir, Stamp::of(&meta), Content::Folder);
                    }
                }
            }
            match tree.as_mut() {
                Some(tree) => {
                    batch.keep(tree, &b.rel, seen);
                }
                None => batch.blobs.extend(seen.blob),
            }
            if b.state != after {
                batch.blobs.extend(b.blob);
                changed.push(ChangedPath { path: b.rel, before: b.state, after });
            }
        }
        let turn_changes = self.turn_changes(turn, tool, call_id, &changed);
        let result = match tree {
            Some(_) => self.commit(batch, Some(turn_changes)),
            None => self.commit_without_tree(batch, turn_changes),
        };
        self.tree = tree;
        result.map(|()| changed)
    }

    fn turn_changes(&self, user_seq: i64, tool: &str, call_id: &str, changed: &[ChangedPath]) -> TurnChanges {
        TurnChanges {
            session: self.session.clone(),
            user_seq,
            changes: changed
                .iter()
                .map(|c| NewChange {
                    path: c.path.clone(),
                    tool: tool.to_string(),
                    call_id: call_id.to_string(),
                    before: c.before.clone(),
                    after: c.after.clone(),
                })
                .collect(),
        }
    }

    /// Store a batch, then hold the contents under the cap. A content the cap drops keeps its
    /// hash in the tree: a later rewind that needs it says it was dropped, rather than reading
    /// the whole project again into a store too small for it.
    fn commit(&self, batch: Batch, turn: Option<TurnChanges>) -> Result<(), CheckpointError> {
        let manifest = ManifestDelta { project: self.project, upserts: batch.upserts, removals: batch.removals };
        self.store.commit_capture(CaptureBatch { blobs: batch.blobs, turn, manifest: Some(manifest) })?;
        self.enforce_cap()
    }

    fn commit_without_tree(&self, batch: Batch, turn: TurnChanges) -> Result<(), CheckpointError> {
        self.store.commit_capture(CaptureBatch { blobs: batch.blobs, turn: Some(turn), manifest: None })?;
        self.enforce_cap()
    }

    fn enforce_cap(&self) -> Result<(), CheckpointError> {
        let cap = self.config.max_store_bytes();
        if self.store.checkpoint_stored_bytes()? > cap {
            self.store.enforce_checkpoint_cap(cap)?;
        }
        Ok(())
    }

    fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?.to_str()?;
        (!rel.is_empty()).then(|| rel.to_string())
    }
}

/// Contents read in one step and the manifest rows that come with them.
#[derive(Default)]
struct Batch {
    blobs: Vec<NewBlob>,
    upserts: Vec<ManifestEntry>,
    removals: Vec<String>,
    bytes: usize,
}

impl Batch {
    /// Note what `rel` holds now in the tree, keep its content, and return its state.
    fn keep(&mut self, tree: &mut Tree, rel: &str, seen: Observed) -> PathState {
        let Observed { state, blob, stamp } = seen;
        let Some(stamp) = stamp else {
            tree.remove(rel);
            self.removals.push(rel.to_string());
            return state;
        };
        let content = match &state {
            PathState::Absent => Content::Unknown,
            PathState::Dir => Content::Folder,
            PathState::File { hash, .. } | PathState::Symlink { hash } => Content::Kept(*hash),
            PathState::Unkept { reason, .. } => Content::Unkept(*reason),
        };
        match &state {
            PathState::File { hash, .. } | PathState::Symlink { hash } => self.upserts.push(ManifestEntry {
                path: rel.to_string(),
                size: stamp.size,
                mtime_ns: stamp.mtime_ns,
                ctime_ns: stamp.ctime_ns,
                ino: stamp.ino,
                mode: stamp.mode,
                hash: *hash,
            }),
            PathState::Absent | PathState::Dir | PathState::Unkept { .. } => self.removals.push(rel.to_string()),
        }
        if let Some(blob) = blob {
            self.bytes += blob.bytes.len();
            self.blobs.push(blob);
        }
        tree.put(rel, stamp, content);
        state
    }
}

/// The state an entry recorded before a command ran.
fn state_of(entry: &Entry) -> PathState {
    let unkept = |reason| PathState::Unkept { reason, size: entry.stamp.size, mtime_ns: entry.stamp.mtime_ns };
    match &entry.content {
        Content::Folder => PathState::Dir,
        Content::Kept(hash) if entry.stamp.is_symlink() => PathState::Symlink { hash: *hash },
        Content::Kept(hash) => PathState::File { hash: *hash, mode: entry.stamp.permissions() },
        Content::Unkept(reason) => unkept(*reason),
        Content::Unknown => unkept(Unkept::Unreadable),
    }
}

fn same_stamp(m: &ManifestEntry, s: &Stamp) -> bool {
    m.size == s.size && m.mtime_ns == s.mtime_ns && m.ctime_ns == s.ctime_ns && m.ino == s.ino && m.mode == s.mode
}

/// The folders above `rel` that do not exist yet, outermost first.
fn missing_ancestors(root: &Path, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor = rel;
    while let Some((parent, _)) = cursor.rsplit_once('/') {
        if std::fs::symlink_metadata(root.join(parent)).is_ok() {
            break;
        }
        out.push(parent.to_string());
        cursor = parent;
    }
    out.reverse();
    out
}
