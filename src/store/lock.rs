//! One writer per session. Two cairn processes appending to one session would interleave both
//! conversations in it, so opening a session takes its lock and a second opener is refused.
//!
//! The lock is an OS file lock (`flock` on Unix, `LockFileEx` on Windows) on
//! `locks/<session>.lock` beside the database: the kernel releases it when the holder exits,
//! however it exits, so a crash (even `kill -9`) can never leave a session stuck. The holder
//! writes its pid and start time into the file so the refusal can name it. An in-memory
//! database has no folder; its locks live in the process.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::{Store, StoreError};

/// Where a store keeps its session locks.
pub(crate) enum Locks {
    /// One lock file per session in this folder.
    Dir(PathBuf),
    /// Sessions held in this process (in-memory databases are private to it anyway).
    InProcess(Arc<Mutex<HashSet<String>>>),
}

/// A held session lock; dropping it (or [`SessionLock::release`]) lets the session go.
#[derive(Debug)]
pub struct SessionLock {
    session: String,
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// The open, locked file: closing it releases the lock.
    File(File),
    InProcess(Arc<Mutex<HashSet<String>>>),
}

impl SessionLock {
    /// The session this lock holds.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Let the session go now rather than at drop.
    pub fn release(self) {}
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        match &self.held {
            // Closing the file releases the lock; unlocking first makes it immediate even if
            // another handle to the same open file lives on somewhere.
            Held::File(file) => {
                let _ = file.unlock();
            }
            Held::InProcess(set) => {
                set.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.session);
            }
        }
    }
}

impl Store {
    /// Take the session's lock, or say which process holds it. The lock lasts until the
    /// returned value is dropped or the process ends.
    pub fn lock_session(&self, session: &str) -> Result<SessionLock, StoreError> {
        let held = match &self.locks {
            Locks::InProcess(set) => {
                if !set.lock().unwrap_or_else(|p| p.into_inner()).insert(session.to_string()) {
                    return Err(StoreError::SessionBusy { id: session.into(), holder: "this same process".into() });
                }
                Held::InProcess(set.clone())
            }
            Locks::Dir(dir) => Held::File(lock_file(dir, session)?),
        };
        Ok(SessionLock { session: session.to_string(), held })
    }
}

impl Store {
    /// A deleted session's lock file goes too, unless someone holds it.
    pub(crate) fn remove_session_lock(&self, session: &str) {
        if let Locks::Dir(dir) = &self.locks
            && let Ok(_held) = lock_file(dir, session)
        {
            let _ = std::fs::remove_file(dir.join(format!("{session}.lock")));
        }
    }
}

fn lock_file(dir: &std::path::Path, session: &str) -> Result<File, StoreError> {
    // Session ids are hex; anything else must not become a path outside the folder.
    if session.is_empty() || !session.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(StoreError::UnknownSession { id: session.to_string() });
    }
    let io = |e: std::io::Error| StoreError::Corrupt(format!("cannot use the session lock in {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let path = dir.join(format!("{session}.lock"));
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let holder = if holder.is_empty() { "another process".to_string() } else { holder.to_string() };
            return Err(StoreError::SessionBusy { id: session.to_string(), holder });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    // Who holds it, for the refusal another process prints. Best effort: the lock is what counts.
    let started = chrono::Local::now().format("%Y-%m-%d %H:%M:%S");
    let _ = file.set_len(0).and_then(|()| file.rewind());
    let _ = write!(file, "pid {}, since {started}", std::process::id()).and_then(|()| file.flush());
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let other = Store::open(&dir.path().join("cairn.db")).unwrap();
        let first = store.lock_session("abc123").unwrap();
        let err = other.lock_session("abc123").unwrap_err().to_string();
        assert!(err.contains("abc123") && err.contains(&format!("pid {}", std::process::id())), "{err}");
        // Another session is free.
        let _b = other.lock_session("def456").unwrap();
        first.release();
        other.lock_session("abc123").unwrap();
    }

    #[test]
    fn in_memory_locks_hold_within_the_process() {
        let store = Store::open_in_memory().unwrap();
        let held = store.lock_session("abc123").unwrap();
        assert!(matches!(store.lock_session("abc123"), Err(StoreError::SessionBusy { .. })));
        drop(held);
        store.lock_session("abc123").unwrap();
    }

    #[test]
    fn odd_session_ids_never_become_paths() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        assert!(matches!(store.lock_session("../x"), Err(StoreError::UnknownSession { .. })));
    }
}
