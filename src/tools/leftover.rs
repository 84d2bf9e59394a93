//! Processes a `bash` call left running after its shell ended (`server &`, `nohup job &`):
//! remembered by process group, so cairn can say at exit what is still running and end it
//! (`tools.bash_keep_background` keeps them).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One command whose process group outlived its shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// The group's id: the shell's pid (the shell led its own session).
    pub group: i32,
    /// The command as the model gave it, for the exit message.
    pub command: String,
}

/// Every group recorded in this process. A process-wide list: whatever session or agent ran the
/// command, the processes are this cairn's to account for when it exits.
static LEFT: Mutex<Vec<Leftover>> = Mutex::new(Vec::new());

/// Between SIGTERM and SIGKILL at exit: short, since the user is waiting for cairn to end.
const END_GRACE: Duration = Duration::from_millis(500);

/// True while any live process is in `group`. A zombie (ended, not yet reaped by whoever
/// inherited it) still counts for `killpg(0)`, so where `/proc` exists it has the last word.
pub fn group_alive(group: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists and may be signalled.
    if unsafe { libc::killpg(group, 0) } != 0 {
        return false;
    }
    match std::fs::read_dir("/proc") {
        Ok(entries) => entries.flatten().any(|e| live_in_group(&e.file_name().to_string_lossy(), group)),
        Err(_) => true,
    }
}

/// Whether `/proc/<pid>` is a process of `group` that has not ended.
fn live_in_group(pid: &str, group: i32) -> bool {
    if !pid.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // After the command name (in parentheses, may hold spaces): state, ppid, pgrp.
    let Some(close) = stat.rfind(')') else { return false };
    let mut fields = stat[close + 1..].split_whitespace();
    let state = fields.next();
    let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
    pgrp == Some(group) && !matches!(state, Some("Z" | "X"))
}

/// Remember `group` if anything in it still runs after its shell ended.
pub fn record_if_alive(group: i32, command: &str) {
    if !group_alive(group) {
        return;
    }
    let mut left = LEFT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    left.retain(|l| l.group != group && group_alive(l.group));
    left.push(Leftover { group, command: command.to_string() });
}

/// The recorded groups that still have a process in them.
pub fn still_running() -> Vec<Leftover> {
    let mut left = LEFT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    left.retain(|l| group_alive(l.group));
    left.clone()
}

/// End every recorded group still running (SIGTERM, then SIGKILL after a short grace) and
/// return what was running.
pub fn end_all() -> Vec<Leftover> {
    let running = still_running();
    for l in &running {
        // SAFETY: killpg only sends a signal to a group this process started.
        unsafe { libc::killpg(l.group, libc::SIGTERM) };
    }
    let deadline = Instant::now() + END_GRACE;
    while running.iter().any(|l| group_alive(l.group)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for l in running.iter().filter(|l| group_alive(l.group)) {
        // SAFETY: as above.
        unsafe { libc::killpg(l.group, libc::SIGKILL) };
    }
    LEFT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    running
}

/// What cairn says at exit about the groups in `left`: one line each, and what was done.
pub fn exit_report(left: &[Leftover], ended: bool) -> Vec<String> {
    if left.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![if ended {
        format!(
            "{} background process group(s) started by bash were still running and were ended (set tools.bash_keep_background = true to keep them):",
            left.len()
        )
    } else {
        format!(
            "{} background process group(s) started by bash are still running (tools.bash_keep_background = true); end them with kill -- -<group>:",
            left.len()
        )
    }];
    lines.extend(left.iter().map(|l| format!("  group {}: {}", l.group, crate::conversation::clip(&l.command, 120))));
    lines
}

/// At exit: end (or, when configured, keep) what `bash` calls left running, and return the
/// lines that say so. Blocking for at most `END_GRACE`.
pub fn settle_at_exit(keep: bool) -> Vec<String> {
    if keep { exit_report(&still_running(), false) } else { exit_report(&end_all(), true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_each_group_and_what_was_done() {
        let left = vec![Leftover { group: 42, command: "python -m http.server &".into() }];
        let ended = exit_report(&left, true);
        assert!(ended[0].contains("1 background") && ended[0].contains("were ended"), "{ended:?}");
        assert!(ended[1].contains("group 42") && ended[1].contains("http.server"), "{ended:?}");
        let kept = exit_report(&left, false);
        assert!(kept[0].contains("still running") && kept[0].contains("kill -- -"), "{kept:?}");
        assert!(exit_report(&[], true).is_empty());
    }

    #[test]
    fn a_group_is_alive_while_a_process_runs_in_it_and_not_after() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let group = child.id() as i32;
        assert!(group_alive(group));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!group_alive(group));
    }
}
