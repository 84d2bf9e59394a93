//! The cheap scan around `bash`: the project tree as (size, mtime, ctime, inode, mode) stamps.
//! A rescan stats the entries of the folders inotify saw events in (on Linux), or every entry
//! (in parallel) when there is no watcher, and re-lists only the folders whose own stamp moved.
//! Nothing is read here; the caller hashes what the scan says changed.
//!
//! A full walk (the `ignore` crate's rules) happens on the first scan and again when an ignore
//! file or a `.git` appears, changes or goes.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use super::stamp::Stamp;
use super::walk::{self, Budget, Found, ScanError, ScanLimits, Track};
use super::watch::{Dirty, Watcher};
use crate::store::{ContentHash, Unkept};

/// Below this many entries one thread stats them all; above, the work is split.
const PARALLEL_FROM: usize = 4_096;
/// More threads than this only queue on the kernel's inode locks.
const MAX_THREADS: usize = 4;
/// A file changed this close to a scan may change again within the same timestamp tick and
/// keep its stamp ("racy git"): it is re-hashed at the next scan. Linux ticks are ≤ 10 ms.
const RACY_WINDOW_NS: i64 = 50_000_000;

/// Whether an entry with this stamp may still change within its timestamp tick.
fn is_racy(stamp: &Stamp, scan_started_ns: i64) -> bool {
    stamp.mtime_ns.max(stamp.ctime_ns) >= scan_started_ns - RACY_WINDOW_NS
}

/// What is known of an entry's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Not read since its stamp last changed.
    Unknown,
    Kept(ContentHash),
    Unkept(Unkept),
    Folder,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub stamp: Stamp,
    pub track: Track,
    pub content: Content,
    racy: bool,
}

/// What changed between two scans.
#[derive(Debug, Default)]
pub struct Delta {
    /// New entries (now in the tree with unknown content).
    pub created: Vec<String>,
    /// Files and links whose stamp moved (or was racy), with the entry as it was.
    pub modified: Vec<(String, Entry)>,
    /// Entries gone, as they were.
    pub removed: Vec<(String, Entry)>,
    /// Roots of large ignored folders whose listing changed somewhere.
    pub touched: BTreeSet<String>,
}

impl Delta {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.modified.is_empty() && self.removed.is_empty() && self.touched.is_empty()
    }
}

/// The project tree as last scanned.
#[derive(Debug)]
pub struct Tree {
    root: PathBuf,
    limits: ScanLimits,
    entries: BTreeMap<String, Entry>,
    git_dirs: BTreeSet<String>,
    watcher: Option<Watcher>,
    /// The next rescan stats everything (the tree was just walked: what changed between a
    /// folder's listing and its watch would otherwise go unseen).
    sweep: bool,
}

impl Tree {
    /// Walk `root` in full. Every file's content starts unknown; the first rescan stats
    /// everything once.
    pub fn walk(root: &Path, limits: ScanLimits) -> Result<Tree, ScanError> {
        let started = now_ns();
        let mut budget = Budget::new(&limits);
        let walked = walk::walk_from(root, "", &limits, &mut budget, limits.max_entries)?;
        let watcher = if limits.watch_folders { Watcher::new() } else { None };
        let mut tree = Tree {
            root: root.to_path_buf(),
            limits,
            entries: BTreeMap::new(),
            git_dirs: BTreeSet::new(),
            watcher,
            sweep: true,
        };
        tree.git_dirs.extend(walked.git_dirs);
        for found in walked.found {
            tree.insert(found, started);
        }
        Ok(tree)
    }

    /// Whether folders are watched (rescans stat only where something happened).
    pub fn is_watched(&self) -> bool {
        self.watcher.is_some()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, rel: &str) -> Option<&Entry> {
        self.entries.get(rel)
    }

    pub fn entries(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.entries.iter()
    }

    pub fn set_content(&mut self, rel: &str, content: Content) {
        if let Some(entry) = self.entries.get_mut(rel) {
            entry.content = content;
        }
    }

    /// Record what a write left at `rel` (stat-ed by the caller), tracked as its parent is.
    /// Paths under a large ignored folder, or under no tracked folder, stay untracked.
    pub fn put(&mut self, rel: &str, stamp: Stamp, content: Content) {
        let track = match self.entries.get(rel) {
            Some(e) => e.track,
            None => match parent(rel).and_then(|p| self.entries.get(p)).map(|p| p.track) {
                Some(track @ (Track::Full | Track::Ignored)) => track,
                Some(Track::Watched) | None => return,
            },
        };
        if (stamp.is_dir() || track == Track::Watched)
            && let Some(watcher) = self.watcher.as_mut()
            && !watcher.watch(&self.root, rel, track == Track::Watched)
        {
            self.watcher = None;
        }
        let racy = is_racy(&stamp, now_ns());
        self.entries.insert(rel.to_string(), Entry { stamp, track, content, racy });
    }

    pub fn remove(&mut self, rel: &str) {
        self.entries.remove(rel);
    }

    fn insert(&mut self, found: Found, started: i64) {
        let folder = found.stamp.is_dir() || found.track == Track::Watched;
        if folder
            && let Some(watcher) = self.watcher.as_mut()
            && !watcher.watch(&self.root, &found.rel, found.track == Track::Watched)
        {
            self.watcher = None;
        }
        let content = if folder { Content::Folder } else { Content::Unknown };
        let racy = is_racy(&found.stamp, started);
        self.entries.insert(found.rel, Entry { stamp: found.stamp, track: found.track, content, racy });
    }

    /// The entries to stat: all of them, or those of the folders with events.
    fn entries_to_stat(&mut self) -> Vec<String> {
        let dirty = match self.watcher.as_mut() {
            Some(_) if self.sweep => Dirty::All,
            Some(watcher) => watcher.drain(),
            None => Dirty::All,
        };
        self.sweep = false;
        let dirs = match dirty {
            Dirty::All => return self.entries.keys().cloned().collect(),
            Dirty::Dirs(dirs) => dirs,
        };
        let mut keys = BTreeSet::new();
        for dir in dirs {
            if self.entries.contains_key(&dir) {
                keys.insert(dir.clone());
            }
            let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
            for (key, _) in self.entries.range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded)) {
                if !key.starts_with(&prefix) {
                    break;
                }
                if !key.is_empty() && !key[prefix.len()..].contains('/') {
                    keys.insert(key.clone());
                }
            }
        }
        keys.into_iter().collect()
    }

    /// Take `rel` and everything under it out of the tree, into the delta.
    fn remove_subtree(&mut self, rel: &str, delta: &mut Delta) {
        if rel.is_empty() {
            return;
        }
        let root = self.watch_root(rel);
        let prefix = format!("{rel}/");
        let mut gone: Vec<String> = vec![rel.to_string()];
        gone.extend(
            self.entries
                .range::<str, _>((Bound::Excluded(rel), Bound::Unbounded))
                .map(|(k, _)| k)
                .take_while(|k| k.starts_with(&prefix))
                .cloned(),
        );
        for key in gone {
            let Some(entry) = self.entries.remove(&key) else { continue };
            if let Some(watcher) = self.watcher.as_mut()
                && (entry.stamp.is_dir() || entry.track == Track::Watched)
            {
                watcher.unwatch(&key);
            }
            match entry.track {
                Track::Watched => {
                    delta.touched.insert(root.clone());
                }
                Track::Full | Track::Ignored => delta.removed.push((key, entry)),
            }
        }
    }

    /// Stat the entries that may have changed, re-list folders whose stamp moved, and say what
    /// changed.
    pub fn rescan(&mut self) -> Result<Delta, ScanError> {
        let started = now_ns();
        let keys = self.entries_to_stat();
        let stamps = {
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            stat_all(&self.root, &refs)
        };
        let mut delta = Delta::default();
        let mut relist = Vec::new();
        let mut gone = Vec::new();
        let mut gone_dirs: HashSet<String> = HashSet::new();
        let mut watched_moved = Vec::new();
        let mut rewalk = false;
        for (rel, now) in keys.into_iter().zip(stamps) {
            // What lies under a folder that is gone (replaced by a link, say) was stat-ed through
            // what is there now: it goes with the folder as it was, not modified or listed again.
            // (Keys come sorted: a folder before what it holds.)
            if !gone_dirs.is_empty() && ancestors(&rel).any(|a| gone_dirs.contains(a)) {
                continue;
            }
            let Some(entry) = self.entries.get_mut(&rel) else { continue };
            let Some(stamp) = now.filter(|s| s.kind() == entry.stamp.kind()) else {
                if entry.stamp.is_dir() || entry.track == Track::Watched {
                    gone_dirs.insert(rel.clone());
                }
                gone.push(rel);
                continue;
            };
            match entry.track {
                Track::Watched => {
                    if !stamp.same_listing(&entry.stamp) {
                        watched_moved.push(rel.clone());
                    }
                }
                Track::Full | Track::Ignored if stamp.is_dir() => {
                    if !stamp.same_listing(&entry.stamp) || entry.racy {
                        relist.push(rel.clone());
                    }
                }
                Track::Full | Track::Ignored => {
                    if stamp != entry.stamp || entry.racy {
                        rewalk |= walk::is_ignore_file(&rel) && stamp != entry.stamp;
                        delta.modified.push((rel.clone(), entry.clone()));
                        entry.content = Content::Unknown;
                    }
                }
            }
            entry.stamp = stamp;
            entry.racy = is_racy(&stamp, started);
        }
        for rel in &watched_moved {
            delta.touched.insert(self.watch_root(rel));
        }
        for rel in gone {
            rewalk |= walk::is_ignore_file(&rel);
            self.remove_subtree(&rel, &mut delta);
        }
        let mut budget = Budget::new(&self.limits);
        for dir in relist {
            if !self.entries.contains_key(&dir) || !walk::plain_folders(&self.root, &dir) {
                continue;
            }
            let listing = walk::list(&self.root, &dir, &self.limits.exclude);
            if listing.has_git != self.git_dirs.contains(&dir) {
                rewalk = true;
                break;
            }
            let new: Vec<String> =
                listing.names.into_iter().filter(|n| !self.entries.contains_key(&child(&dir, n))).collect();
            if new.is_empty() {
                continue;
            }
            if new.iter().any(|n| walk::is_ignore_file(n)) {
                rewalk = true;
                break;
            }
            self.add_children(&dir, new, &mut budget, started, &mut delta)?;
        }
        if rewalk {
            return self.rewalk(delta, started);
        }
        if self.entries.len() > self.limits.max_entries {
            return Err(ScanError::TooLarge { limit: self.limits.max_entries });
        }
        Ok(delta)
    }

    /// New names in `dir`: classified by the ignore rules, walked, added.
    fn add_children(
        &mut self,
        dir: &str,
        names: Vec<String>,
        budget: &mut Budget,
        started: i64,
        delta: &mut Delta,
    ) -> Result<(), ScanError> {
        let parent_track = self.entries.get(dir).map(|e| e.track).unwrap_or(Track::Full);
        let walked = match parent_track {
            Track::Full => walk::walked_children(&self.root, dir, &self.limits.exclude),
            Track::Ignored | Track::Watched => HashSet::new(),
        };
        for name in names {
            let rel = child(dir, &name);
            // Watched before it is walked, so nothing created meanwhile goes unseen.
            if parent_track == Track::Full
                && let Some(watcher) = self.watcher.as_mut()
                && std::fs::symlink_metadata(walk::join(&self.root, &rel)).is_ok_and(|m| m.is_dir())
                && !watcher.watch(&self.root, &rel, false)
            {
                self.watcher = None;
            }
            let found = if walked.contains(&name) {
                let left = self.limits.max_entries.saturating_sub(self.entries.len());
                let w = walk::walk_from(&self.root, &rel, &self.limits, budget, left)?;
                self.git_dirs.extend(w.git_dirs);
                w.found
            } else {
                walk::ignored(&self.root, rel, &self.limits, budget)
            };
            for f in found {
                match f.track {
                    Track::Watched => {
                        delta.touched.insert(f.rel.clone());
                    }
                    Track::Full | Track::Ignored => delta.created.push(f.rel.clone()),
                }
                self.insert(f, started);
            }
        }
        // A watched folder found inside another reports under the outer root.
        let touched = std::mem::take(&mut delta.touched);
        delta.touched = touched.iter().map(|t| self.watch_root(t)).collect();
        Ok(())
    }

    /// Walk afresh (an ignore file or a `.git` changed) and compare with what was known.
    fn rewalk(&mut self, mut delta: Delta, started: i64) -> Result<Delta, ScanError> {
        let mut budget = Budget::new(&self.limits);
        let walked = walk::walk_from(&self.root, "", &self.limits, &mut budget, self.limits.max_entries)?;
        let mut old = std::mem::take(&mut self.entries);
        self.git_dirs = walked.git_dirs.into_iter().collect();
        // Watches start over with the tree, and the next scan checks everything once.
        self.watcher = if self.limits.watch_folders { Watcher::new() } else { None };
        self.sweep = true;
        let already: HashSet<String> = delta.modified.iter().map(|(r, _)| r.clone()).collect();
        for found in walked.found {
            let rel = found.rel.clone();
            let previous = old.remove(&rel);
            self.insert(found, started);
            let Some(entry) = self.entries.get_mut(&rel) else { continue };
            match previous {
                None if entry.track == Track::Watched => {
                    delta.touched.insert(rel);
                }
                None => delta.created.push(rel),
                Some(prev) if prev.stamp.kind() != entry.stamp.kind() => {
                    delta.removed.push((rel.clone(), prev));
                    delta.created.push(rel);
                }
                Some(prev) if entry.stamp.is_dir() || entry.track == Track::Watched => {
                    entry.racy |= prev.racy;
                }
                Some(prev) => {
                    if prev.stamp == entry.stamp && !prev.racy {
                        entry.content = prev.content;
                    } else if !already.contains(&rel) {
                        delta.modified.push((rel, prev));
                    }
                }
            }
        }
        // Entries no longer walked but still on disk just left tracking (now ignored).
        for (rel, entry) in old {
            if std::fs::symlink_metadata(walk::join(&self.root, &rel)).is_err() && entry.track != Track::Watched {
                delta.removed.push((rel, entry));
            }
        }
        let touched = std::mem::take(&mut delta.touched);
        delta.touched = touched.iter().map(|t| self.watch_root(t)).collect();
        Ok(delta)
    }

    /// The outermost watched folder holding `rel`.
    fn watch_root(&self, rel: &str) -> String {
        let mut root = rel;
        let mut cursor = rel;
        while let Some(p) = parent(cursor) {
            if self.entries.get(p).is_some_and(|e| e.track == Track::Watched) {
                root = p;
            }
            cursor = p;
        }
        root.to_string()
    }
}

/// The folders holding `rel`, innermost first (not the root).
fn ancestors(rel: &str) -> impl Iterator<Item = &str> {
    rel.char_indices().rev().filter(|(_, c)| *c == '/').map(move |(i, _)| &rel[..i])
}

fn parent(rel: &str) -> Option<&str> {
    if rel.is_empty() {
        return None;
    }
    Some(rel.rsplit_once('/').map(|(p, _)| p).unwrap_or(""))
}

fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_string() } else { format!("{parent}/{name}") }
}

pub(super) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

/// The stamp of every path (relative to `root`), `None` where it is gone; split across threads
/// when there are many.
fn stat_all(root: &Path, keys: &[&str]) -> Vec<Option<Stamp>> {
    let stat = |rel: &&str| std::fs::symlink_metadata(walk::join(root, rel)).ok().map(|m| Stamp::of(&m));
    let threads = if keys.len() < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_THREADS)
    };
    if threads <= 1 {
        return keys.iter().map(stat).collect();
    }
    std::thread::scope(|s| {
        let parts: Vec<_> = keys
            .chunks(keys.len().div_ceil(threads))
            .map(|part| s.spawn(move || part.iter().map(stat).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(stamps) => stamps,
                // lstat does not panic; if a thread did anyway, do not read its absence as
                // deletions.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
