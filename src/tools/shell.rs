//! The shell a command runs in, the same wherever it runs (cairn's own runner, or cairn's
//! launcher in an editor's terminal): `bash -c` (`sh -c` where there is no bash) in the
//! project root, stdin closed, and the environment cairn gives it — no pager, no colours, no
//! provider key, nothing that would make the shell run or look up what the permission check
//! did not see.

use std::path::Path;
use std::process::{Command, Stdio};

/// The shells tried, in order: the first one found runs the command.
pub const SHELLS: [&str; 2] = ["bash", "sh"];

/// `shell -c command` in `cwd`, with cairn's environment; `only_reads`: the command runs in
/// the read-only sandbox that confines reads too. Where its output goes is the caller's.
pub fn command(shell: &str, command: &str, cwd: &Path, only_reads: bool) -> Command {
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("CAIRN", "1");
    // cairn's own provider keys are not the command's business: a model that runs `env` must
    // not see them, and they must not end up in a stored result.
    for var in crate::config::KEY_VARS {
        cmd.env_remove(var);
    }
    // What would make the shell run or look up something the permission check did not see:
    // a startup file for non-interactive shells, and folders `cd NAME` searches.
    for var in ["BASH_ENV", "ENV", "CDPATH"] {
        cmd.env_remove(var);
    }
    if only_reads {
        // `git status` may refresh the index: a write the read-only sandbox refuses anyway.
        // The user's global git configuration lives outside the folders a confined read may
        // reach, and git stops when it cannot read it: the command goes without it.
        cmd.env("GIT_OPTIONAL_LOCKS", "0").env("GIT_CONFIG_GLOBAL", "/dev/null");
    }
    cmd
}
