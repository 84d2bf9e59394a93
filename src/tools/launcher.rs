//! cairn's launcher for a command an editor's terminal runs. The editor is asked to run cairn
//! itself (`cairn sandboxed`, a hidden subcommand) with a [`Grant`] in its environment: the
//! command, the project root and the sandbox the call was granted. The launcher builds the same
//! [`Confinement`] `bash` applies to the commands it runs itself, applies it to itself — before
//! any thread exists, as a user namespace requires — and becomes the shell, with the same
//! environment (`shell`). So the editor only runs and shows the command; what it may do is
//! still cairn's to say.
//!
//! The grant travels in the environment, not a file: a command running meanwhile could rewrite
//! a file in the folders it may write, but not what the editor passes to the next one. The
//! editor's terminal may read what it is given as a shell command line (Zed does): only words
//! that read the same in any shell are added for it to show, and the command itself is never
//! one of its arguments.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sandbox::{Confinement, SandboxMode, SandboxPolicy};
use super::shell;
use super::terminals::TerminalCommand;

/// The variable the grant travels in.
pub const GRANT_VAR: &str = "CAIRN_SANDBOX_GRANT";
/// The launcher's subcommand, as the editor shows it: confined, or run outside the sandbox
/// (which the user approved).
pub const SANDBOXED: &str = "sandboxed";
pub const UNSANDBOXED: &str = "unsandboxed";

/// What a command in an editor's terminal may do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub command: String,
    pub root: PathBuf,
    pub policy: SandboxPolicy,
}

impl Grant {
    /// What the editor is asked to run for call `call_id`: `program` (cairn itself) with the
    /// launcher's subcommand, the grant in the environment.
    pub fn terminal_command(&self, program: PathBuf, call_id: &str, output_limit: u64) -> TerminalCommand {
        let sub = if self.policy.mode == SandboxMode::FullAccess { UNSANDBOXED } else { SANDBOXED };
        let mut args = vec![sub.to_string(), "--".to_string()];
        args.extend(shown_words(&self.command));
        // Serialising plain strings, paths, numbers and booleans cannot fail.
        let grant = serde_json::to_string(self).unwrap_or_default();
        TerminalCommand {
            call_id: call_id.to_string(),
            program,
            args,
            env: vec![(GRANT_VAR.to_string(), grant)],
            cwd: self.root.clone(),
            output_limit,
        }
    }
}

/// The command's leading words that mean the same to every shell (the editor may hand what it
/// is given to one), for the editor to show; `...` where the rest is left out. The launcher
/// runs the grant's command, never these.
fn shown_words(command: &str) -> Vec<String> {
    let inert = |word: &str| {
        !word.starts_with('=')
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | ',' | '+' | '-' | '='))
    };
    let mut words = Vec::new();
    for word in command.split_whitespace() {
        if !inert(word) || words.len() == 12 {
            words.push("...".to_string());
            break;
        }
        words.push(word.to_string());
    }
    words
}

/// The launcher: become the granted command, confined. Returns only when it could not, with
/// why (for the terminal, and so for the model).
pub fn exec_granted() -> String {
    let Some(raw) = std::env::var_os(GRANT_VAR) else {
        return format!(
            "this is cairn's launcher for commands an editor runs for a cairn session; it runs only what the session grants in {GRANT_VAR}, and there is none here"
        );
    };
    let grant: Grant = match serde_json::from_str(&raw.to_string_lossy()) {
        Ok(grant) => grant,
        Err(e) => return format!("the grant in {GRANT_VAR} is not one cairn wrote ({e}); nothing was run"),
    };
    match Confinement::build(&grant.policy, &grant.root) {
        Ok(Some(mut confinement)) => {
            if let Err(e) = confinement.apply() {
                return format!("could not apply the sandbox ({e}); nothing was run");
            }
        }
        Ok(None) => {}
        Err(e) => return format!("could not set up the sandbox ({e}); nothing was run"),
    }
    let mut failure = String::new();
    for name in shell::SHELLS {
        let mut command = shell::command(name, &grant.command, &grant.root, grant.policy.confine_reads);
        command.env_remove(GRANT_VAR);
        let error = command.exec();
        if error.kind() != std::io::ErrorKind::NotFound || !grant.root.is_dir() {
            return format!("could not run the command: {error}");
        }
        failure = format!("could not run the command: no {name} ({error})");
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_is_shown_only_words_every_shell_reads_alike() {
        assert_eq!(shown_words("cargo test --all"), ["cargo", "test", "--all"]);
        assert_eq!(shown_words("cargo test 2>&1 | tail"), ["cargo", "test", "..."]);
        assert_eq!(shown_words("echo $(touch x)"), ["echo", "..."]);
        assert_eq!(shown_words("rm 'a b'; touch c"), ["rm", "..."]);
        assert_eq!(shown_words("=ls"), ["..."]);
        assert_eq!(shown_words("a=b make"), ["a=b", "make"]);
    }

    #[test]
    fn the_grant_travels_in_the_environment_and_names_what_it_allows() {
        let grant = Grant {
            command: "cargo test && rm -rf target".into(),
            root: PathBuf::from("/p"),
            policy: SandboxPolicy::new(SandboxMode::WorkspaceWrite),
        };
        let run = grant.terminal_command(PathBuf::from("/bin/cairn"), "call-1", 1024);
        assert_eq!(run.args, [SANDBOXED, "--", "cargo", "test", "..."]);
        assert!(run.args.iter().all(|a| !a.contains("rm")), "the command is never an argument");
        let (var, value) = &run.env[0];
        assert_eq!(var, GRANT_VAR);
        let back: Grant = serde_json::from_str(value).unwrap();
        assert_eq!(back, grant);
        let outside = Grant { policy: SandboxPolicy::full_access(), ..grant };
        assert_eq!(outside.terminal_command(PathBuf::from("/bin/cairn"), "c", 1).args[0], UNSANDBOXED);
    }
}
