//! A mount namespace for the command, in a user namespace of its own (as bubblewrap does):
//! every mount outside the writable roots is remounted read-only, so what Landlock does not
//! cover — `chmod`, `chown`, `utime`, extended attributes — fails outside them too; inside
//! them, protected paths (git configuration, `.cairn/`, …) and files with a hard link outside
//! are bound read-only on top.
//!
//! Everything is prepared in cairn (strings, the list of mounts read from
//! `/proc/self/mountinfo`); the child, between fork and exec, only makes system calls.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use libc::c_ulong;

/// Filesystems whose remount may fail without weakening the sandbox: the kernel's own views,
/// where a write outside is refused or meaningless anyway (and Landlock still applies).
const PSEUDO: &[&str] = &[
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "devpts",
    "mqueue",
    "debugfs",
    "tracefs",
    "securityfs",
    "bpf",
    "pstore",
    "configfs",
    "fusectl",
    "binfmt_misc",
    "hugetlbfs",
    "autofs",
    "efivarfs",
    "nsfs",
    "rpc_pipefs",
    "selinuxfs",
];

/// One mount of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountPoint {
    pub path: PathBuf,
    /// The per-mount flags a remount must keep (a user namespace may not clear them).
    pub flags: c_ulong,
    pub fstype: String,
}

/// The mounts of this process, parsed.
pub fn mount_points() -> std::io::Result<Vec<MountPoint>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    Ok(text.lines().filter_map(parse_line).collect())
}

fn parse_line(line: &str) -> Option<MountPoint> {
    let (left, right) = line.split_once(" - ")?;
    let fields: Vec<&str> = left.split(' ').collect();
    let path = PathBuf::from(unescape(fields.get(4)?));
    let mut flags = 0;
    for option in fields.get(5)?.split(',') {
        flags |= match option {
            "nosuid" => libc::MS_NOSUID,
            "nodev" => libc::MS_NODEV,
            "noexec" => libc::MS_NOEXEC,
            "noatime" => libc::MS_NOATIME,
            "nodiratime" => libc::MS_NODIRATIME,
            "relatime" => libc::MS_RELATIME,
            "strictatime" => libc::MS_STRICTATIME,
            "nosymfollow" => libc::MS_NOSYMFOLLOW,
            _ => 0,
        };
    }
    let fstype = right.split(' ').next()?.to_string();
    Some(MountPoint { path, flags, fstype })
}

/// `\040` and the like in mountinfo paths.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the child does to its mount namespace.
pub struct Plan {
    /// Where the command runs: entered again once the mounts are in place (the folder it is
    /// in was entered through the old ones, before the namespace existed).
    cwd: CString,
    uid_map: CString,
    gid_map: CString,
    /// Bound onto themselves, writable as they are.
    writable: Vec<CString>,
    /// Bound onto themselves as they are, so they cannot be renamed or removed (a git folder).
    pinned: Vec<CString>,
    /// Bound onto themselves and made read-only, with the flags to keep.
    read_only_binds: Vec<(CString, c_ulong)>,
    /// Remounted read-only; `true` where a failure is tolerated.
    remount: Vec<(CString, c_ulong, bool)>,
}

impl Plan {
    /// The plan for a command whose writable roots are `writable` (existing folders,
    /// canonical) and that must not write `read_only` nor move `pinned` (inside them).
    pub fn new(cwd: &Path, writable: &[PathBuf], read_only: &[PathBuf], pinned: &[PathBuf]) -> std::io::Result<Plan> {
        let mounts = mount_points()?;
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        // Each maps only itself: a process inside a new user namespace may write no wider map
        // (that needs CAP_SETUID over the parent namespace). Files of other owners show as
        // `nobody` inside, which even root there may not override.
        let map = |id: u32| format!("{id} {id} 1\n");
        let c = |p: &Path| CString::new(p.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other);
        let mut writable: Vec<PathBuf> = writable.to_vec();
        writable.sort_by_key(|p| p.components().count());
        writable.dedup();
        let under_writable = |p: &Path| writable.iter().any(|w| p.starts_with(w));
        let flags_at = |p: &Path| {
            mounts
                .iter()
                .filter(|m| p.starts_with(&m.path))
                .max_by_key(|m| m.path.components().count())
                .map_or(0, |m| m.flags)
        };
        let mut remount = Vec::new();
        let mut done: Vec<&Path> = Vec::new();
        for m in mounts.iter().rev() {
            if under_writable(&m.path) || done.contains(&m.path.as_path()) {
                continue;
            }
            done.push(&m.path);
            remount.push((c(&m.path)?, m.flags, PSEUDO.contains(&m.fstype.as_str())));
        }
        Ok(Plan {
            cwd: c(cwd)?,
            uid_map: CString::new(map(uid)).map_err(std::io::Error::other)?,
            gid_map: CString::new(map(gid)).map_err(std::io::Error::other)?,
            writable: writable.iter().map(|p| c(p)).collect::<Result<_, _>>()?,
            pinned: pinned.iter().map(|p| c(p)).collect::<Result<_, _>>()?,
            read_only_binds: read_only.iter().map(|p| Ok((c(p)?, flags_at(p)))).collect::<std::io::Result<_>>()?,
            remount,
        })
    }

    /// In the child, between fork and exec: no allocation, only system calls.
    pub fn apply(&self) -> std::io::Result<()> {
        // SAFETY: unshare, open, write, close and mount only take pointers to the strings the
        // plan owns, which live until exec.
        unsafe {
            // cairn keeps itself non-dumpable, which makes /proc/self of this child root's and
            // its uid_map unwritable for anyone else. The child is about to exec (which resets
            // the flag anyway) and holds nothing of its own yet.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
            // Needed before gid_map for an unprivileged user; harmless for root.
            let _ = write_file(c"/proc/self/setgroups", c"deny");
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for dir in &self.writable {
                check(libc::mount(
                    dir.as_ptr(),
                    dir.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
            for dir in &self.pinned {
                // Before the read-only binds inside it, which it would otherwise cover; one that
                // went away since the plan was made has nothing to pin.
                if libc::mount(dir.as_ptr(), dir.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT)
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for (path, flags) in &self.read_only_binds {
                // A path that went away since the plan was made has nothing to protect.
                if libc::mount(path.as_ptr(), path.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0 {
                    continue;
                }
                check(remount_read_only(path, *flags))?;
            }
            for (path, flags, lenient) in &self.remount {
                if remount_read_only(path, *flags) != 0 {
                    let errno = std::io::Error::last_os_error().raw_os_error();
                    // Unreachable mount points cannot be written through either.
                    let unreachable = matches!(errno, Some(libc::ENOENT | libc::EACCES | libc::ENOTDIR | libc::ELOOP));
                    if !lenient && !unreachable {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            check(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }
}

/// SAFETY: `path` must be a valid C string.
unsafe fn remount_read_only(path: &CString, flags: c_ulong) -> libc::c_int {
    // SAFETY: as the caller promises.
    unsafe {
        libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
            std::ptr::null(),
        )
    }
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// SAFETY: both must be valid C strings.
unsafe fn write_file(path: &std::ffi::CStr, content: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: as the caller promises.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let bytes = content.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize { Err(error) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_give_the_path_the_flags_and_the_type() {
        let line = "28 27 0:25 / /mnt/with\\040space ro,nosuid,nodev,relatime - tmpfs none ro,size=4k";
        let m = parse_line(line).unwrap();
        assert_eq!(m.path, PathBuf::from("/mnt/with space"));
        assert_eq!(m.flags, libc::MS_NOSUID | libc::MS_NODEV | libc::MS_RELATIME);
        assert_eq!(m.fstype, "tmpfs");
        assert!(!mount_points().unwrap().is_empty());
    }
}
