//! The note cairn keeps of a server it started (`DATA/local/llama-server-….json`): its process,
//! port, model, and which cairn runs it — so a kept server (`keep = true`) is found and used
//! again, and one a crashed cairn left behind is taken over rather than started twice.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Record {
    /// The server's process, leader of its own process group.
    pub pid: u32,
    pub port: u16,
    pub model: PathBuf,
    /// The cairn that stops it at exit (none stops a kept server).
    pub owner: u32,
    pub keep: bool,
}

pub(super) fn path(dir: &Path, fingerprint: u64) -> PathBuf {
    dir.join(format!("llama-server-{fingerprint:016x}.json"))
}

pub(super) fn read(path: &Path) -> Option<Record> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Written whole or not at all (a temporary file renamed over the old one).
pub(super) fn write(path: &Path, record: &Record) {
    let written = (|| -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(record)?)?;
        std::fs::rename(tmp, path)
    })();
    if let Err(e) = written {
        // Without the note the server is not found again: a kept one is started anew.
        tracing::warn!(path = %path.display(), error = %e, "could not write the local server's record");
    }
}

pub(super) fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Whether process `pid` runs: it exists and is not a zombie (one that exited and waits to be
/// reaped, which a server whose cairn is gone may do for a while).
pub(super) fn alive(pid: u32) -> bool {
    let Ok(id) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(id, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // `/proc/PID/stat`: "PID (NAME) STATE …", the name possibly holding spaces or parentheses.
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false);
    exists && !zombie
}

/// Whether `pid` is a llama-server listening on `port` (its command line says so): a pid in a
/// stale record may belong to another program by now, which must never be signalled.
pub(super) fn is_server_on(pid: u32, port: u16) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let port = port.to_string();
    args.windows(2).any(|w| w[0] == b"--port" && w[1] == port.as_bytes())
}

/// Send `signal` to the process group `pid` leads.
pub(super) fn signal_group(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: a plain kill(2) of a process group cairn started (pid > 0, so -pid is the
        // group, never "every process").
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_a_stale_pid_is_never_taken_for_a_server() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path(), 0xabc);
        assert!(p.ends_with("llama-server-0000000000000abc.json"));
        assert_eq!(read(&p), None);
        let r = Record { pid: 42, port: 9, model: "/m/q.gguf".into(), owner: 7, keep: true };
        write(&p, &r);
        assert_eq!(read(&p), Some(r));
        remove(&p);
        assert_eq!(read(&p), None);
        let me = std::process::id();
        assert!(alive(me));
        assert!(!is_server_on(me, 9), "the test runner is no llama-server");
    }
}
