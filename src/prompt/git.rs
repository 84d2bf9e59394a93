//! The git cairn runs by itself — the session's `git status` — with everything of the
//! repository's configuration that would run a program switched off. A repository's
//! `.git/config` is the project's file (a command in the sandbox may write it): the
//! `core.fsmonitor`, hooks, pager, filter drivers, transports and credential helpers it names
//! must not run because cairn looked at the status. Settings given on the command line outrank
//! every config file, includes included; filter drivers are found by name first (`git config`
//! only reads). The system config is not read (`GIT_CONFIG_NOSYSTEM`), nothing is fetched on
//! demand (`GIT_NO_LAZY_FETCH`), submodules are not entered, and a git that hangs is killed.
//! (A diff run through here would add `--no-ext-diff --no-textconv`: `status` runs neither.)

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longer than any sane `git status`; a repository that makes it hang costs the session this.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Settings that name programs, each switched off.
const OFF: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// The settings of a filter driver that run a program (an empty one runs nothing).
const DRIVER_KEYS: &str = r"^filter\..+\.(clean|smudge|process)$";

/// `git ARGS` in `root` with the repository's programs off; `None` when git is missing, fails,
/// takes too long, or names a driver that cannot be switched off safely.
pub fn run_git(root: &Path, args: &[&str]) -> Option<String> {
    // Exit 1: no such setting; anything else, something is wrong with the repository.
    let drivers = match run(root, &["config", "--null", "--get-regexp", DRIVER_KEYS], &[])? {
        (0, listing) => driver_keys(&listing)?,
        (1, _) => Vec::new(),
        (_, _) => return None,
    };
    let mut off: Vec<(String, String)> = OFF.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // Emptied, a driver runs nothing; not required, its file is read as it is rather than
    // failing the status.
    for key in drivers {
        if let Some((driver, _)) = key.rsplit_once('.') {
            let required = format!("{driver}.required");
            if !off.iter().any(|(k, _)| *k == required) {
                off.push((required, "false".into()));
            }
        }
        off.push((key, String::new()));
    }
    match run(root, args, &off)? {
        (0, out) => Some(out),
        (_, _) => None,
    }
}

/// The keys of the driver settings `git config --null --get-regexp` printed; `None` when a name
/// could not be given back on a command line as it was written (an `=` or a line break in it).
fn driver_keys(listing: &str) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        let key = entry.split('\n').next().unwrap_or(entry);
        if key.contains('=') || key.chars().any(char::is_control) {
            return None;
        }
        keys.push(key.to_string());
    }
    Some(keys)
}

/// Run git; its exit code and what it printed, `None` when it could not run or was stopped.
fn run(root: &Path, args: &[&str], off: &[(String, String)]) -> Option<(i32, String)> {
    let mut cmd = Command::new("git");
    cmd.arg("--no-pager").arg("-C").arg(root);
    for (key, value) in off {
        cmd.arg("-c").arg(format!("{key}={value}"));
    }
    cmd.args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < TIMEOUT => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                kill_group(&mut child);
                tracing::warn!(?args, "git took longer than {TIMEOUT:?} and was stopped");
                return None;
            }
        }
    };
    let bytes = reader.join().ok()?.ok()?;
    Some((status.code()?, String::from_utf8_lossy(&bytes).into_owned()))
}

/// Kill git and whatever it started (its own process group).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group git leads (made so by
        // `process_group(0)` above); it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_names_that_cannot_be_overridden_refuse_the_run() {
        assert_eq!(
            driver_keys("filter.lfs.clean\ngit-lfs clean -- %f\0filter.lfs.process\ngit-lfs filter-process\0"),
            Some(vec!["filter.lfs.clean".to_string(), "filter.lfs.process".to_string()])
        );
        assert_eq!(driver_keys(""), Some(vec![]));
        assert_eq!(driver_keys("filter.a=b.clean\nx\0"), None);
    }
}
