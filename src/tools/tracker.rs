//! What the agent has seen of each file, so an edit of a file that changed since the agent
//! last read it is refused instead of clobbering someone else's work.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Content fingerprints of files the agent read or wrote in this session.
#[derive(Debug, Default)]
pub struct FileTracker {
    seen: Mutex<HashMap<PathBuf, u64>>,
}

fn fingerprint(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

impl FileTracker {
    /// Remember `bytes` as the content the agent now knows for `path`.
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        self.lock().insert(path.to_path_buf(), fingerprint(bytes));
    }

    /// Whether the agent has read or written `path` in this session.
    pub fn knows(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    /// `Some(true)` when the file differs from what the agent last saw, `None` when it never
    /// saw it.
    pub fn changed_since_seen(&self, path: &Path, current: &[u8]) -> Option<bool> {
        self.lock().get(path).map(|&f| f != fingerprint(current))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, u64>> {
        // A poisoned map is still a valid map of fingerprints; keep using it.
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}
