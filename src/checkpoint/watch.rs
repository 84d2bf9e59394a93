//! Linux: an inotify watch on every tracked folder, so a rescan stats only the entries of the
//! folders where something happened since the last one. The events of a write are queued by
//! the kernel before the write returns, so once a command has exited, draining the queue
//! names every folder it touched. Without a watcher (another OS, `checkpoints.watch_folders`
//! off, the kernel's watch limit reached) or after the queue overflowed, the scan stats every
//! entry instead.

use std::collections::HashSet;

/// Which folders a rescan must look at.
#[derive(Debug)]
pub(super) enum Dirty {
    All,
    Dirs(HashSet<String>),
}

#[cfg(target_os = "linux")]
pub(super) use linux::Watcher;

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};
    use std::path::Path;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

    use super::Dirty;

    /// Room for a few hundred events per read.
    const BUFFER_BYTES: usize = 64 * 1024;

    pub struct Watcher {
        inotify: Inotify,
        by_id: HashMap<i32, String>,
        by_dir: HashMap<String, WatchDescriptor>,
        buffer: Vec<u8>,
    }

    impl std::fmt::Debug for Watcher {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Watcher").field("folders", &self.by_dir.len()).finish()
        }
    }

    impl Watcher {
        pub fn new() -> Option<Watcher> {
            match Inotify::init() {
                Ok(inotify) => Some(Watcher {
                    inotify,
                    by_id: HashMap::new(),
                    by_dir: HashMap::new(),
                    buffer: vec![0; BUFFER_BYTES],
                }),
                Err(e) => {
                    tracing::info!(error = %e, "no inotify; checkpoint scans stat every entry");
                    None
                }
            }
        }

        /// Watch `dir` (relative to `root`): its listing, and unless `listing_only` the
        /// contents and attributes of its files. False when the kernel refuses.
        pub fn watch(&mut self, root: &Path, dir: &str, listing_only: bool) -> bool {
            let mut mask = WatchMask::CREATE
                | WatchMask::DELETE
                | WatchMask::MOVED_FROM
                | WatchMask::MOVED_TO
                | WatchMask::DELETE_SELF
                | WatchMask::MOVE_SELF
                | WatchMask::ATTRIB
                | WatchMask::ONLYDIR
                | WatchMask::DONT_FOLLOW
                | WatchMask::EXCL_UNLINK;
            if !listing_only {
                mask |= WatchMask::MODIFY | WatchMask::CLOSE_WRITE;
            }
            let path = if dir.is_empty() { root.to_path_buf() } else { root.join(dir) };
            match self.inotify.watches().add(&path, mask) {
                Ok(wd) => {
                    self.by_id.insert(wd.get_watch_descriptor_id(), dir.to_string());
                    self.by_dir.insert(dir.to_string(), wd);
                    true
                }
                // Gone already: its parent's events tell the scan.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => {
                    tracing::warn!(error = %e, folder = dir, "cannot watch a folder; checkpoint scans stat every entry");
                    false
                }
            }
        }

        /// Stop watching `dir` (it is gone or moved away).
        pub fn unwatch(&mut self, dir: &str) {
            if let Some(wd) = self.by_dir.remove(dir) {
                self.by_id.remove(&wd.get_watch_descriptor_id());
                // Fails when the kernel already dropped it with the folder: nothing to undo.
                let _ = self.inotify.watches().remove(wd);
            }
        }

        /// The folders with events since the last drain.
        pub fn drain(&mut self) -> Dirty {
            let mut dirs = HashSet::new();
            loop {
                let events = match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Dirty::Dirs(dirs),
                    Err(e) => {
                        tracing::warn!(error = %e, "reading inotify events failed; scanning everything");
                        return Dirty::All;
                    }
                };
                let mut overflow = false;
                for event in events {
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        overflow = true;
                        continue;
                    }
                    let id = event.wd.get_watch_descriptor_id();
                    if event.mask.contains(EventMask::IGNORED) {
                        if let Some(dir) = self.by_id.remove(&id) {
                            self.by_dir.remove(&dir);
                            dirs.insert(dir);
                        }
                        continue;
                    }
                    if let Some(dir) = self.by_id.get(&id) {
                        dirs.insert(dir.clone());
                    }
                }
                if overflow {
                    tracing::info!("inotify queue overflowed; scanning everything once");
                    // Empty the queue so the next scan starts clean.
                    while self.inotify.read_events(&mut self.buffer).is_ok_and(|e| e.count() > 0) {}
                    return Dirty::All;
                }
            }
        }
    }
}

/// Elsewhere there is no watcher: every scan stats everything.
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(super) struct Watcher;

#[cfg(not(target_os = "linux"))]
impl Watcher {
    pub fn new() -> Option<Watcher> {
        None
    }

    pub fn watch(&mut self, _root: &std::path::Path, _dir: &str, _listing_only: bool) -> bool {
        false
    }

    pub fn unwatch(&mut self, _dir: &str) {}

    pub fn drain(&mut self) -> Dirty {
        Dirty::All
    }
}
