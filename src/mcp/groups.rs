//! The process groups of the stdio servers this cairn started. Each server leads its own group
//! (its helpers — what `npx` or a wrapper script starts — are in it too); the groups are ended
//! whole when a connection is dropped and, at exit, before cairn ends, since the runtime that
//! would otherwise shut the servers down is gone by then.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every live server group of this process.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Between SIGTERM and SIGKILL at exit: short, since the user is waiting for cairn to end.
const END_GRACE: Duration = Duration::from_millis(500);

/// A server's group, remembered while its connection lives; dropped, the group is asked to end.
pub struct ServerGroup(i32);

impl ServerGroup {
    /// The group `leader` leads (it was started as a group leader, so its pid is the group's id).
    pub fn led_by(leader: Option<u32>) -> Option<ServerGroup> {
        let group = i32::try_from(leader?).ok().filter(|g| *g > 1)?;
        GROUPS.lock().unwrap_or_else(|p| p.into_inner()).push(group);
        Some(ServerGroup(group))
    }
}

impl Drop for ServerGroup {
    fn drop(&mut self) {
        GROUPS.lock().unwrap_or_else(|p| p.into_inner()).retain(|g| *g != self.0);
        signal(self.0, libc::SIGTERM);
    }
}

fn signal(group: i32, signal: libc::c_int) -> bool {
    // SAFETY: killpg only sends a signal to a group this process started; an empty group gives
    // ESRCH, which is fine here.
    unsafe { libc::killpg(group, signal) == 0 }
}

/// End every server group still running (SIGTERM, then SIGKILL after a short grace). Called at
/// exit.
pub fn end_servers() {
    let groups = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(|p| p.into_inner()));
    let running: Vec<i32> = groups.into_iter().filter(|g| signal(*g, libc::SIGTERM)).collect();
    let deadline = Instant::now() + END_GRACE;
    // A group of only zombies still answers signal 0; SIGKILL does them no harm.
    while running.iter().any(|g| signal(*g, 0)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for g in running {
        signal(g, libc::SIGKILL);
    }
}
