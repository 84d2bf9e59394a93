//! Paths inside the project, reached the way `openat` reaches them: from the root folder, one
//! name at a time, never through a link. A checkpoint's path names what was inside the project
//! when it was captured; by the time it is read back, restored or deleted, a folder on the way
//! may have been replaced by a link to somewhere else (`rm -r src; ln -s /etc src`). Such a path
//! is not inside the project any more: it reads as absent, and writing or deleting it is refused
//! with the link named — nothing outside the project is read, written or deleted through it.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::stamp::Stamp;

/// Why a path could not be reached inside the project.
#[derive(Debug)]
pub enum Reach {
    /// A folder on the way is a link (or not a folder): the path would resolve elsewhere.
    Outside {
        through: String,
    },
    Io(io::Error),
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reach::Outside { through } => write!(
                f,
                "`{through}` is a link or a file now, not the folder it was, so the path would lead outside what was checkpointed; skipped (nothing outside the project is touched)"
            ),
            Reach::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for Reach {
    fn from(e: io::Error) -> Reach {
        Reach::Io(e)
    }
}

/// The project root, open, for reaching paths under it.
pub struct Beneath {
    root: OwnedFd,
}

const DIR: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

impl Beneath {
    pub fn open(root: &Path) -> io::Result<Beneath> {
        Ok(Beneath { root: rustix::fs::openat(rustix::fs::CWD, root, DIR, Mode::empty())? })
    }

    /// The folder holding `rel` (its parent, reached name by name without following a link), and
    /// `rel`'s last name. With `create`, missing folders on the way are made.
    fn parent(&self, rel: &str, create: bool) -> Result<(OwnedFd, String), Reach> {
        let mut names: Vec<&str> = rel.split('/').filter(|n| !n.is_empty() && *n != ".").collect();
        let last = names.pop().ok_or_else(|| Reach::Io(io::Error::other("an empty path")))?;
        if last == ".." || names.contains(&"..") {
            return Err(Reach::Outside { through: rel.to_string() });
        }
        let mut dir = rustix::fs::openat(&self.root, ".", DIR, Mode::empty()).map_err(io::Error::from)?;
        for (i, name) in names.iter().enumerate() {
            let opened = match rustix::fs::openat(&dir, *name, DIR, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(Reach::Io(e.into())),
                    }
                    rustix::fs::openat(&dir, *name, DIR, Mode::empty())
                }
                other => other,
            };
            dir = match opened {
                Ok(fd) => fd,
                // A link (O_NOFOLLOW) or a file where a folder was.
                Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                    return Err(Reach::Outside { through: names[..=i].join("/") });
                }
                Err(e) => return Err(Reach::Io(e.into())),
            };
        }
        Ok((dir, last.to_string()))
    }

    /// What `rel` is, not following a link at its end; `None` when it is not there — or not
    /// inside the project any more.
    pub fn stamp(&self, rel: &str) -> Option<Stamp> {
        self.lookup(rel).ok().flatten()
    }

    /// What `rel` is: `Ok(None)` when it is not there, `Err` when a link on the way leads
    /// elsewhere.
    pub fn lookup(&self, rel: &str) -> Result<Option<Stamp>, Reach> {
        let (dir, name) = match self.parent(rel, false) {
            Ok(found) => found,
            Err(Reach::Io(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Ok(Some(Stamp::of_stat(&s))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(Reach::Io(e.into())),
        }
    }

    /// The target of the link `rel`.
    pub fn read_link(&self, rel: &str) -> Result<Vec<u8>, Reach> {
        let (dir, name) = self.parent(rel, false)?;
        let target = rustix::fs::readlinkat(&dir, name.as_str(), Vec::new()).map_err(io::Error::from)?;
        Ok(target.into_bytes())
    }

    /// The content of the file `rel` (not a link, not a FIFO that would wait for a writer).
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, Reach> {
        let (dir, name) = self.parent(rel, false)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, name.as_str(), flags, Mode::empty()).map_err(io::Error::from)?;
        let mut file = std::fs::File::from(fd);
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Remove the file or link `rel` (a link itself, never what it points to).
    pub fn remove_file(&self, rel: &str) -> Result<(), Reach> {
        let (dir, name) = self.parent(rel, false)?;
        rustix::fs::unlinkat(&dir, name.as_str(), AtFlags::empty()).map_err(|e| Reach::Io(e.into()))
    }

    /// Remove the empty folder `rel`.
    pub fn remove_dir(&self, rel: &str) -> Result<(), Reach> {
        let (dir, name) = self.parent(rel, false)?;
        rustix::fs::unlinkat(&dir, name.as_str(), AtFlags::REMOVEDIR).map_err(|e| Reach::Io(e.into()))
    }

    /// Make the folder `rel` and the ones on the way (an existing one is fine).
    pub fn create_dir_all(&self, rel: &str) -> Result<(), Reach> {
        let (dir, name) = self.parent(rel, true)?;
        match rustix::fs::mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(Reach::Io(e.into())),
        }
        // What is there now must be a folder, not a link someone put in its place.
        match rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) if Stamp::of_stat(&s).is_dir() => Ok(()),
            Ok(_) => Err(Reach::Outside { through: rel.to_string() }),
            Err(e) => Err(Reach::Io(e.into())),
        }
    }

    /// Make `rel` a link to `target`, its folders made as needed.
    pub fn symlink(&self, target: &[u8], rel: &str) -> Result<(), Reach> {
        let (dir, name) = self.parent(rel, true)?;
        let _ = rustix::fs::unlinkat(&dir, name.as_str(), AtFlags::empty());
        rustix::fs::symlinkat(OsStr::from_bytes(target), &dir, name.as_str()).map_err(|e| Reach::Io(e.into()))
    }

    /// Write `bytes` to `rel` with permission bits `mode`: a temporary file beside it, then a
    /// rename, so a reader never sees half a file; its folders made as needed.
    pub fn write_atomically(&self, rel: &str, bytes: &[u8], mode: u32) -> Result<(), Reach> {
        let (dir, name) = self.parent(rel, true)?;
        let tmp = format!(".{name}.cairn-rewind-{}-{:08x}", std::process::id(), fastrand::u32(..));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, tmp.as_str(), flags, Mode::from_raw_mode(0o600)).map_err(io::Error::from)?;
        let written = (|| -> io::Result<()> {
            let mut file = std::fs::File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()?;
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o7777))?;
            rustix::fs::renameat(&dir, tmp.as_str(), &dir, name.as_str())?;
            Ok(())
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        }
        written.map_err(Reach::Io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_reached_through_a_link_to_outside() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep.txt"), "outside").unwrap();
        std::fs::create_dir(project.path().join("real")).unwrap();
        std::fs::write(project.path().join("real/a.txt"), "inside").unwrap();
        std::os::unix::fs::symlink(outside.path(), project.path().join("sub")).unwrap();
        let b = Beneath::open(project.path()).unwrap();

        assert_eq!(b.read("real/a.txt").unwrap(), b"inside");
        assert!(b.stamp("sub").is_some_and(|s| s.is_symlink()), "the link itself is inside");
        assert!(b.stamp("sub/keep.txt").is_none(), "through it, nothing is there");
        assert!(matches!(b.lookup("sub/keep.txt"), Err(Reach::Outside { through }) if through == "sub"));
        assert!(matches!(b.lookup("real/none.txt"), Ok(None)));
        assert!(matches!(b.lookup("none/none.txt"), Ok(None)));
        assert!(matches!(b.read("sub/keep.txt"), Err(Reach::Outside { through }) if through == "sub"));
        assert!(matches!(b.remove_file("sub/keep.txt"), Err(Reach::Outside { .. })));
        assert!(matches!(b.write_atomically("sub/new.txt", b"x", 0o644), Err(Reach::Outside { .. })));
        assert!(matches!(b.create_dir_all("sub/deeper"), Err(Reach::Outside { .. })));
        assert!(matches!(b.symlink(b"/etc", "sub/l"), Err(Reach::Outside { .. })));
        assert!(matches!(b.read("../x"), Err(Reach::Outside { .. })));
        assert_eq!(std::fs::read_to_string(outside.path().join("keep.txt")).unwrap(), "outside");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);

        // The link itself may go; what it pointed to stays.
        b.remove_file("sub").unwrap();
        assert!(outside.path().join("keep.txt").exists());
        // Inside, folders are made, files written whole with their mode, links made.
        b.write_atomically("new/deep/f.sh", b"#!/bin/sh\n", 0o755).unwrap();
        let meta = std::fs::metadata(project.path().join("new/deep/f.sh")).unwrap();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777, 0o755);
        b.symlink(b"f.sh", "new/deep/link").unwrap();
        assert_eq!(b.read_link("new/deep/link").unwrap(), b"f.sh");
        b.remove_file("new/deep/link").unwrap();
        b.remove_file("new/deep/f.sh").unwrap();
        b.remove_dir("new/deep").unwrap();
        assert!(!project.path().join("new/deep").exists());
    }
}
