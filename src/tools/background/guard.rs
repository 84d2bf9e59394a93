//! The watchdog of a background command: a tiny `sh` that waits on a pipe only cairn holds
//! open. However cairn ends — an exit, a panic, SIGKILL, a crash — the kernel closes the pipe,
//! and the watchdog ends the command's whole process group (SIGTERM, then SIGKILL). cairn says
//! "leave it" with a line on the pipe when it ended the group itself or keeps it on purpose.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::process::Stdio;

/// Waits for a line; at end of input (cairn gone) ends the group named by `$1`.
/// (`kill -SIG -GROUP`, without `--`, which dash's `kill` refuses.)
const WATCH: &str = r#"read -r _ || { kill -TERM "-$1" 2>/dev/null; sleep 1; kill -KILL "-$1" 2>/dev/null; }"#;

pub(super) struct Guard {
    /// Our end of the pipe; closing it without a line ends the group.
    line: Option<std::fs::File>,
    watchdog: Option<std::process::Child>,
}

impl Guard {
    /// Watch `group`. The pipe's end we keep is close-on-exec, so no other child holds it.
    pub(super) fn watch(group: i32) -> std::io::Result<Guard> {
        use std::os::unix::process::CommandExt;
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", WATCH, "cairn-watchdog", &group.to_string()])
            .stdin(Stdio::from(OwnedFd::from(reader)))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own session: no terminal's hangup or Ctrl+C reaches it, and it is not in the group
        // it watches.
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| if libc::setsid() == -1 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
        }
        let watchdog = cmd.spawn()?;
        Ok(Guard { line: Some(std::fs::File::from(OwnedFd::from(writer))), watchdog: Some(watchdog) })
    }

    /// The group is cairn's business again (ended by cairn, or kept on purpose): the watchdog
    /// leaves it and exits.
    pub(super) fn stand_down(&mut self) {
        if let Some(mut line) = self.line.take() {
            let _ = line.write_all(b"done\n");
        }
        self.reap();
    }

    fn reap(&mut self) {
        if let Some(mut child) = self.watchdog.take() {
            // It exits at once on the line; waiting briefly keeps no zombie behind.
            for _ in 0..50 {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => return,
                    Ok(None) => std::thread::sleep(std::time::Duration::from_millis(2)),
                }
            }
            // Still there (a loaded machine): whoever reaps orphans will.
            drop(child);
        }
    }
}

impl Drop for Guard {
    /// Dropped while still watching: the pipe closes and the watchdog ends the group, as it
    /// would if cairn had died.
    fn drop(&mut self) {
        self.line.take();
        self.reap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::leftover::group_alive;
    use std::time::{Duration, Instant};

    fn sleeper() -> (std::process::Child, i32) {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("sleep").arg("300").process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        (child, group)
    }

    fn gone_within(group: i32, child: &mut std::process::Child, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            let _ = child.try_wait();
            if !group_alive(group) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_closed_pipe_ends_the_group_and_a_line_leaves_it() {
        let (mut child, group) = sleeper();
        let guard = Guard::watch(group).unwrap();
        drop(guard);
        assert!(gone_within(group, &mut child, Duration::from_secs(5)), "the watchdog ended the group");

        let (mut child, group) = sleeper();
        let mut guard = Guard::watch(group).unwrap();
        guard.stand_down();
        drop(guard);
        assert!(!gone_within(group, &mut child, Duration::from_millis(1500)), "a stood-down watchdog leaves it");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
