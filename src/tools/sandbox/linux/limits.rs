//! Per-command limits: processes (`RLIMIT_NPROC`, counted per user namespace, so only the
//! command's own processes count; root is exempt from it, so for root a `pids` cgroup of the
//! command's own), and memory (`RLIMIT_AS`, the address space of each process).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

pub struct Limits {
    processes: Option<u64>,
    memory_bytes: Option<u64>,
    /// `cgroup.procs` of the command's own pids cgroup, opened for writing.
    cgroup: Option<(OwnedFd, PathBuf)>,
}

impl Limits {
    /// `in_namespace`: the command gets a user namespace of its own, where RLIMIT_NPROC counts
    /// only its processes (outside one it would count every process of the user).
    pub fn new(processes: Option<u64>, memory_mb: Option<u64>, in_namespace: bool) -> Limits {
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let cgroup = match processes {
            Some(max) if root => pids_cgroup(max),
            _ => None,
        };
        Limits {
            processes: processes.filter(|_| in_namespace),
            memory_bytes: memory_mb.map(|mb| mb.saturating_mul(1024 * 1024)),
            cgroup,
        }
    }

    /// What enforces the process limit, for `doctor`.
    pub fn describe(processes: Option<u64>, in_namespace: bool) -> String {
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        match processes {
            None => "no process limit".into(),
            Some(n) if root && pids_controller().is_some() => format!("{n} processes (pids cgroup)"),
            Some(n) if root => format!(
                "{n} processes asked for, not enforced: root is exempt from RLIMIT_NPROC and no pids cgroup is writable"
            ),
            Some(n) if in_namespace => format!("{n} processes (RLIMIT_NPROC in the command's user namespace)"),
            Some(n) => format!(
                "{n} processes asked for, not enforced: without a user namespace RLIMIT_NPROC would count every process of the user"
            ),
        }
    }

    /// In the child, before it enters its user namespace: join the cgroup, cap memory.
    pub fn apply_before_namespace(&self) -> std::io::Result<()> {
        if let Some((fd, _)) = &self.cgroup {
            // SAFETY: writing two bytes from a static buffer to a descriptor we own.
            let written = unsafe { libc::write(fd.as_raw_fd(), b"0\n".as_ptr().cast(), 2) };
            if written != 2 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(bytes) = self.memory_bytes {
            set(libc::RLIMIT_AS, bytes)?;
        }
        Ok(())
    }

    /// In the child, inside its user namespace: the process limit counts from here.
    pub fn apply_in_namespace(&self) -> std::io::Result<()> {
        match self.processes {
            Some(n) => set(libc::RLIMIT_NPROC, n),
            None => Ok(()),
        }
    }
}

impl Drop for Limits {
    /// The cgroup goes once its processes have (a background job keeps it until it ends).
    fn drop(&mut self) {
        if let Some((_, dir)) = self.cgroup.take() {
            sweep(Some(dir));
        }
    }
}

fn set(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(resource, &limit) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// The folder of the cgroup v1 `pids` hierarchy this process is in, when it can be written.
fn pids_controller() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| {
        let mut fields = l.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers.split(',').any(|c| c == "pids").then(|| path.trim_start_matches('/').to_string())
    })?;
    let mount = super::mounts::mount_points().ok()?.into_iter().find(|m| {
        m.fstype == "cgroup" && m.path.file_name().is_some_and(|n| n.to_string_lossy().split(',').any(|c| c == "pids"))
    })?;
    let dir = mount.path.join(path);
    let probe = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: access only reads the path.
    (unsafe { libc::access(probe.as_ptr(), libc::W_OK) } == 0).then_some(dir)
}

/// A new pids cgroup limited to `max` tasks, and its `cgroup.procs` opened for the child.
fn pids_cgroup(max: u64) -> Option<(OwnedFd, PathBuf)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = pids_controller()?;
    sweep(None);
    let dir = base.join(format!("cairn-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join("pids.max"), max.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    let procs = std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs")).ok()?;
    Some((OwnedFd::from(procs), dir))
}

/// The pids cgroups (`cairn-PID-N`) of processes that have ended, removed: cairn's launcher in
/// an editor's terminal becomes the command it confines, so nothing of it is left to remove the
/// cgroup it made; a cairn that was killed leaves its own. Only an empty cgroup can be removed,
/// and only those whose process is gone are tried. For root only (no one else gets one).
pub fn sweep_ended() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let Some(base) = pids_controller() else { return };
    let Ok(entries) = std::fs::read_dir(&base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix("cairn-")).and_then(|rest| rest.split('-').next());
        let Some(pid) = pid.and_then(|p| p.parse::<libc::pid_t>().ok()) else { continue };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone =
            unsafe { libc::kill(pid, 0) } == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Remove `dir`, and the earlier cgroups of this process whose background jobs have ended.
fn sweep(dir: Option<PathBuf>) {
    use std::sync::Mutex;
    static LEFT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut left = LEFT.lock().unwrap_or_else(|p| p.into_inner());
    left.extend(dir);
    left.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
}
