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
    let mut f = Fingerprinter::default();
    f.update(bytes);
    f.finish()
}

/// A file's fingerprint computed piece by piece, so a file can be fingerprinted while it is
/// streamed: the same value as fingerprinting all its bytes at once.
#[derive(Default)]
pub struct Fingerprinter {
    hasher: std::collections::hash_map::DefaultHasher,
    len: usize,
}

impl Fingerprinter {
    pub fn update(&mut self, bytes: &[u8]) {
        // SipHash is a streaming hash: pieces written one after another hash like their
        // concatenation.
        self.hasher.write(bytes);
        self.len += bytes.len();
    }

    pub fn finish(mut self) -> u64 {
        self.len.hash(&mut self.hasher);
        self.hasher.finish()
    }
}

impl FileTracker {
    /// Remember `bytes` as the content the agent now knows for `path`.
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        self.lock().insert(path.to_path_buf(), fingerprint(bytes));
    }

    /// Remember a fingerprint made with [`Fingerprinter`] while streaming the file.
    pub fn record_fingerprint(&self, path: &Path, fingerprint: u64) {
        self.lock().insert(path.to_path_buf(), fingerprint);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_made_in_pieces_equals_one_made_at_once() {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut pieces = Fingerprinter::default();
        for chunk in bytes.chunks(7_919) {
            pieces.update(chunk);
        }
        assert_eq!(pieces.finish(), fingerprint(&bytes));
        assert_ne!(fingerprint(b"ab"), fingerprint(b"ab\0"));
    }
}
