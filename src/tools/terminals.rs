//! An editor's terminals, as a front end offers them (ACP's `terminal/*`): `bash` runs a command
//! there so the user watches it live in the editor. The editor only runs and shows it: what the
//! command is, the sandbox it is confined by (cairn's own launcher, see
//! `sandbox::grant`), its time limit and when to stop it stay cairn's.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

/// A command for an editor's terminal to run, as ACP's `terminal/create` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalCommand {
    /// The call the terminal belongs to: the front end shows the terminal in it.
    pub call_id: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Set for the command, besides the editor's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// At most this many bytes of output are kept.
    pub output_limit: u64,
}

/// How a terminal's command ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalExit {
    pub code: Option<u32>,
    /// The signal that ended it, as the editor names it (`SIGKILL`, `KILL`, `9`, `Killed`).
    pub signal: Option<String>,
}

/// What a terminal holds of its command's output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    pub text: String,
    /// The editor kept only part of it (the limit was reached).
    pub truncated: bool,
    /// Set once the command has ended.
    pub exit: Option<TerminalExit>,
}

/// What an editor does with its terminals for `bash`. Every terminal created is released.
pub trait Terminals: Send + Sync {
    /// Start `command` in a new terminal, shown in its call; the terminal's id, or why not.
    fn create<'a>(&'a self, command: &'a TerminalCommand) -> BoxFuture<'a, Result<String, String>>;
    /// Until the command of terminal `id` has ended.
    fn wait_for_exit<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>>;
    /// The output so far, and how the command ended if it has.
    fn output<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>>;
    /// Stop the command (the terminal stays, with its output).
    fn kill<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// cairn is done with the terminal: the editor may free it (it keeps showing it in the call).
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// The signal number an editor's name for it stands for (`SIGKILL`, `KILL`, `9`, `Killed`).
pub fn signal_number(name: &str) -> Option<i32> {
    let name = name.trim();
    if let Ok(n) = name.parse::<i32>() {
        return Some(n);
    }
    let bare = name.strip_prefix("SIG").unwrap_or(name).to_ascii_uppercase();
    let number = match bare.as_str() {
        "HUP" | "HANGUP" => libc::SIGHUP,
        "INT" | "INTERRUPT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" | "ABORTED" => libc::SIGABRT,
        "KILL" | "KILLED" => libc::SIGKILL,
        "SEGV" | "SEGMENTATION FAULT" => libc::SIGSEGV,
        "PIPE" | "BROKEN PIPE" => libc::SIGPIPE,
        "ALRM" | "ALARM CLOCK" => libc::SIGALRM,
        "TERM" | "TERMINATED" => libc::SIGTERM,
        _ => return None,
    };
    Some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editors_signal_names_read_as_numbers() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("KILL"), Some(9));
        assert_eq!(signal_number("Killed"), Some(9));
        assert_eq!(signal_number("15"), Some(15));
        assert_eq!(signal_number("Terminated"), Some(15));
        assert_eq!(signal_number("SIGWINCH-ish"), None);
    }
}
