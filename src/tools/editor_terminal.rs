//! `bash` in an editor's terminal: the command runs where the user watches it, through cairn's
//! launcher (`launcher`), which confines it by the sandbox the call was granted. Its time limit
//! and the user's interrupt stay cairn's: either kills it through the editor. The output is
//! what the terminal kept; how it reads for the model is the same as for cairn's own runner
//! (`command_run`).

use std::time::Duration;

use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use super::command_run::{Ended, Run, Stop};
use super::launcher::Grant;
use super::sandbox::SandboxPolicy;
use super::terminals::{TerminalExit, Terminals, signal_number};

/// Output the editor is asked to keep: what cairn's own runner keeps in memory.
const OUTPUT_LIMIT: u64 = 10 * 1024 * 1024;
/// How long the editor has to say the command ended once cairn killed it.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The editor could not start a terminal: nothing ran.
#[derive(Debug)]
pub struct NotOpened(pub String);

/// Run `command` for call `call_id` in one of `terminals`, confined by `sandbox`, to its end,
/// `limit` or `cancel`; the terminal is released after.
pub async fn run(
    terminals: &dyn Terminals,
    call_id: &str,
    command: &str,
    root: &std::path::Path,
    sandbox: &SandboxPolicy,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<Run, NotOpened> {
    let program = std::env::current_exe().map_err(|e| NotOpened(format!("cairn cannot find its own program ({e})")))?;
    let grant = Grant { command: command.to_string(), root: root.to_path_buf(), policy: sandbox.clone() };
    let request = grant.terminal_command(program, call_id, OUTPUT_LIMIT);
    let id = terminals.create(&request).await.map_err(NotOpened)?;
    let deadline = Instant::now() + limit;
    let ended = tokio::select! {
        exit = terminals.wait_for_exit(&id) => Ok(exit),
        () = sleep_until(deadline) => Err(Stop::TimedOut),
        () = cancel.cancelled() => Err(Stop::Interrupted),
    };
    let (exit, stop) = match ended {
        Ok(exit) => (exit, None),
        Err(stop) => {
            if let Err(e) = terminals.kill(&id).await {
                tracing::warn!(error = %e, "the editor could not kill a command");
            }
            let exit = match timeout(KILL_WAIT, terminals.wait_for_exit(&id)).await {
                Ok(exit) => exit,
                Err(_) => {
                    Err(format!("the editor did not say the command ended within {}s of the kill", KILL_WAIT.as_secs()))
                }
            };
            (exit, Some(stop))
        }
    };
    let kept = terminals.output(&id).await;
    if let Err(e) = terminals.release(&id).await {
        tracing::debug!(error = %e, "the editor could not release a terminal");
    }
    let mut output = String::new();
    let mut exit = exit.ok();
    match kept {
        Ok(kept) => {
            output = kept.text;
            if kept.truncated {
                if !output.ends_with('\n') {
                    output.push('\n');
                }
                output.push_str(&format!(
                    "[the editor's terminal kept only part of the output (at most {} MiB)]\n",
                    OUTPUT_LIMIT / (1024 * 1024)
                ));
            }
            exit = exit.or(kept.exit);
        }
        Err(e) => output.push_str(&format!("[the editor did not give the command's output: {e}]\n")),
    }
    Ok(Run { output, ended: ended_of(exit), stop })
}

fn ended_of(exit: Option<TerminalExit>) -> Ended {
    let Some(exit) = exit else { return Ended::Unknown };
    match (exit.code, exit.signal.as_deref().and_then(signal_number)) {
        (Some(code), _) => Ended::Code(i32::try_from(code).unwrap_or(i32::MAX)),
        (None, Some(signal)) => Ended::Signal(signal),
        (None, None) => Ended::Unknown,
    }
}
