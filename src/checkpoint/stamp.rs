//! What `stat` says of one entry of the project tree, the unit the walk and the scan compare.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

/// What a scan learns of one entry without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    /// `st_mode`: the type bits and the permission bits.
    pub mode: u32,
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        Stamp {
            size: meta.size(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.mode(),
        }
    }

    /// The same from a raw `stat` (what `statat` returns, relative to a folder).
    // The field types differ between platforms: the casts are widening or the identity.
    #[allow(clippy::unnecessary_cast)]
    pub fn of_stat(stat: &rustix::fs::Stat) -> Stamp {
        Stamp {
            size: stat.st_size as u64,
            mtime_ns: (stat.st_mtime as i64).saturating_mul(1_000_000_000).saturating_add(stat.st_mtime_nsec as i64),
            ctime_ns: (stat.st_ctime as i64).saturating_mul(1_000_000_000).saturating_add(stat.st_ctime_nsec as i64),
            ino: stat.st_ino as u64,
            mode: stat.st_mode as u32,
        }
    }

    pub fn is_file(&self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }

    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }

    pub fn is_symlink(&self) -> bool {
        self.mode & S_IFMT == S_IFLNK
    }

    /// Sockets, pipes, devices: not files a checkpoint can hold.
    pub fn is_other(&self) -> bool {
        !(self.is_file() || self.is_dir() || self.is_symlink())
    }

    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }

    pub(super) fn kind(&self) -> u32 {
        self.mode & S_IFMT
    }

    /// A folder's listing can only have changed if one of these moved.
    pub(super) fn same_listing(&self, other: &Stamp) -> bool {
        self.mtime_ns == other.mtime_ns && self.ctime_ns == other.ctime_ns && self.ino == other.ino
    }
}
