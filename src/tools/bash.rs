//! `bash`: run a shell command in the project root and capture its output, stdout and stderr
//! interleaved as written. Owns the process's lifetime: its own session and process group, the
//! timeout and the user's interrupt (both kill the whole group), and not hanging on background
//! children that keep the output pipe open. A call the front end shows runs in the editor's
//! terminal instead, when it offers one (`editor_terminal`), confined the same way.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until, timeout_at};
use tokio_util::sync::CancellationToken;

use super::command_run::{self, Ended, Run, Stop};
use super::editor_terminal::{self, NotOpened};
use super::sandbox::{self, Confinement, SandboxPolicy};
use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args, shell};
use crate::conversation::tool_names::BASH;

/// Between SIGTERM and SIGKILL: time for the command to clean up after itself.
const TERM_GRACE: Duration = Duration::from_millis(2_000);
/// How long output is still read after the shell ended: what it wrote is already in the pipe,
/// and anything later comes from background children that may never close it.
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// Memory guard on captured output: keep this much of the start and of the end. Truncation for
/// the model happens later, in the context pipeline.
const KEEP_HEAD_BYTES: usize = 5 * 1024 * 1024;
const KEEP_TAIL_BYTES: usize = 5 * 1024 * 1024;
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// The `bash` tool, with the OS sandbox its commands run in.
#[derive(Clone, Debug)]
pub struct Bash {
    sandbox: SandboxPolicy,
}

impl Default for Bash {
    /// Unconfined: the sandbox is chosen where the registry is built, from `[sandbox]`,
    /// `.cairn/settings*.toml` and `--sandbox`.
    fn default() -> Bash {
        Bash { sandbox: SandboxPolicy::full_access() }
    }
}

impl Bash {
    pub fn sandboxed(sandbox: SandboxPolicy) -> Bash {
        Bash { sandbox }
    }

    async fn run_with(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
        sandbox: &SandboxPolicy,
        shown_as: Option<&str>,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        if args.background {
            return start_in_background(&args.command, ctx, sandbox).await;
        }
        let limit = Duration::from_millis(match args.timeout_ms {
            None | Some(0) => ctx.config.bash_timeout_ms,
            Some(ms) => ms.min(ctx.config.bash_max_timeout_ms),
        });
        // A call the front end shows runs in the editor's terminal, when it offers one.
        let terminal = shown_as.zip(ctx.editor.as_deref().and_then(|e| e.terminals()));
        let mut not_opened = None;
        let (run, absent, confined) = match terminal {
            Some((call, terminals)) => {
                let (policy, root) = (sandbox.clone(), ctx.root.clone());
                let absent = tokio::task::spawn_blocking(move || sandbox::absent_protected(&policy, &root))
                    .await
                    .unwrap_or_default();
                let run = editor_terminal::run(terminals, call, &args.command, &ctx.root, sandbox, limit, &ctx.cancel);
                match run.await {
                    Ok(run) => (run, absent, sandbox.is_enforced()),
                    Err(NotOpened(why)) => {
                        not_opened = Some(why);
                        on_own(&args.command, ctx, sandbox, limit).await?
                    }
                }
            }
            None => on_own(&args.command, ctx, sandbox, limit).await?,
        };
        let in_terminal = terminal.is_some() && not_opened.is_none();
        let mut output = run.into_output(limit);
        if let Some(why) = not_opened {
            output
                .content
                .push_str(&format!("\n[the editor could not open a terminal ({why}); cairn ran the command itself]"));
        }
        let created = tokio::task::spawn_blocking(move || {
            if in_terminal {
                sandbox::sweep_after_launcher();
            }
            sandbox::undo_created(&absent)
        })
        .await
        .unwrap_or_default();
        if !created.is_empty() {
            let names: Vec<String> =
                created.iter().map(|p| p.strip_prefix(&ctx.root).unwrap_or(p).display().to_string()).collect();
            let why = format!(
                "{} {} protected (git and agents obey {}), so cairn removed what the command created there",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
                if names.len() == 1 { "it" } else { "them" }
            );
            output.content.push_str(&format!(
                "\n[sandbox: {why}. Do not work around it; if the change is needed, say so: the user can approve running it outside the sandbox.]"
            ));
            output.sandbox_denial = Some(why);
            return Ok(output);
        }
        if confined
            && command_run::was_complete(&output)
            && let Some(why) = sandbox::denial(sandbox, &output.content, output.exit_code.unwrap_or(0))
        {
            output.content.push_str(&format!(
                "\n[sandbox: this probably failed because {why}. Do not work around it; if the command needs more, say so: the user can approve running it outside the sandbox.]"
            ));
            output.sandbox_denial = Some(why);
        }
        Ok(output)
    }
}

/// Run `command` in cairn's own runner, confined by `sandbox`: the run, the protected paths
/// that did not exist before it, and whether it ran confined.
async fn on_own(
    command: &str,
    ctx: &ToolContext,
    sandbox: &SandboxPolicy,
    limit: Duration,
) -> Result<(Run, Vec<std::path::PathBuf>, bool), ToolError> {
    let (policy, root) = (sandbox.clone(), ctx.root.clone());
    let confinement = tokio::task::spawn_blocking(move || Confinement::build(&policy, &root))
        .await
        .map_err(|e| ToolError::new(format!("could not set up the sandbox: {e}")))?
        .map_err(|e| ToolError::new(format!("could not run the command: {e}")))?;
    let confined = confinement.is_some();
    let absent = confinement.as_ref().map(|c| c.absent().to_vec()).unwrap_or_default();
    let run = run(command, &ctx.root, limit, &ctx.cancel, confinement, sandbox.confine_reads)
        .await
        .map_err(|e| ToolError::new(format!("could not run the command: {e}")))?;
    Ok((run, absent, confined))
}

#[derive(Deserialize)]
struct Args {
    command: String,
    timeout_ms: Option<u64>,
    #[serde(default)]
    background: bool,
}

const SHAPE: &str = r#"{"command": "cargo test", "timeout_ms"?: milliseconds, "background"?: true}"#;

/// A background command's start waits this long for it to fail at once (a port in use, a typo)
/// and for its first lines, before the call returns.
const START_SETTLE: Duration = Duration::from_millis(1_000);
/// Output a start shows at most; the rest is for `bash_output`.
const START_OUTPUT_BYTES: usize = 8 * 1024;

/// `background: true`: start the command in the same sandbox as a foreground one and return
/// with its job id once it has had a moment to fail or print its first lines.
async fn start_in_background(
    command: &str,
    ctx: &ToolContext,
    sandbox: &SandboxPolicy,
) -> Result<ToolOutput, ToolError> {
    let Some(place) = &ctx.background else {
        return Err(ToolError::new(
            "background commands are not available here (a subagent's commands run to their end); run it without `background`",
        ));
    };
    let (policy, root) = (sandbox.clone(), ctx.root.clone());
    let confinement = tokio::task::spawn_blocking(move || Confinement::build(&policy, &root))
        .await
        .map_err(|e| ToolError::new(format!("could not set up the sandbox: {e}")))?
        .map_err(|e| ToolError::new(format!("could not run the command: {e}")))?;
    let absent = confinement.as_ref().map(|c| c.absent().to_vec()).unwrap_or_default();
    let confined = confinement.is_some();
    let job = place
        .jobs
        .start(place, command, &ctx.root, confinement, sandbox.confine_reads)
        .map_err(|e| ToolError::new(format!("could not start the command: {e}")))?;
    let ended = tokio::select! {
        ended = job.wait_ended(START_SETTLE) => ended,
        () = ctx.cancel.cancelled() => false,
    };
    let so_far =
        job.read(Some(0), START_OUTPUT_BYTES).map_err(|e| ToolError::new(format!("could not read its output: {e}")))?;
    let id = job.id();
    let mut content = String::new();
    if ended {
        content.push_str(if so_far.text.is_empty() { "(no output)\n" } else { &so_far.text });
        let state = job.state();
        content.push_str(&format!("[background job {id} already ended: {}]", state.label()));
        let code = match state {
            crate::conversation::JobState::Exited { code } => code,
            crate::conversation::JobState::Killed { signal } => 128 + signal,
            crate::conversation::JobState::Running | crate::conversation::JobState::Stopped => 0,
        };
        let mut output = ToolOutput { content, is_error: code != 0, exit_code: Some(code), ..Default::default() };
        // A server the sandbox kept from its port ends at once: the user may run it outside.
        if confined && let Some(why) = sandbox::denial(sandbox, &output.content, code) {
            output.content.push_str(&format!(
                "\n[sandbox: this probably failed because {why}. Do not work around it; if the command needs more, say so: the user can approve running it outside the sandbox.]"
            ));
            output.sandbox_denial = Some(why);
        }
        return Ok(output);
    }
    let group = job.picture().group;
    content.push_str(&format!("Started in the background as job {id} (process group {group}). "));
    if so_far.text.is_empty() {
        content.push_str("No output yet.\n");
    } else {
        content.push_str("Output so far:\n");
        content.push_str(&so_far.text);
        if !so_far.text.ends_with('\n') {
            content.push('\n');
        }
    }
    content.push_str(&format!(
        "[job {id} is running: bash_output {{\"id\": {id}}} reads what it prints next, bash_stop {{\"id\": {id}}} ends it. It is ended when cairn exits; the user sees it in /ps.]"
    ));
    let created = tokio::task::spawn_blocking(move || sandbox::undo_created(&absent)).await.unwrap_or_default();
    if !created.is_empty() {
        let names: Vec<String> =
            created.iter().map(|p| p.strip_prefix(&ctx.root).unwrap_or(p).display().to_string()).collect();
        content.push_str(&format!(
            "\n[sandbox: {} protected, so cairn removed what the command created there]",
            names.join(", ")
        ));
    }
    Ok(ToolOutput { content, exit_code: None, ..Default::default() })
}

impl Tool for Bash {
    fn name(&self) -> &'static str {
        BASH
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/bash.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run with `bash -c`, in the project root."},
                "timeout_ms": {"type": "integer", "minimum": 1, "description": "Time limit in milliseconds. Default 120000, at most 600000."},
                "background": {"type": "boolean", "description": "Start a command that keeps running (a dev server, a watcher) and return at once with its job id; read its output with bash_output, end it with bash_stop."}
            },
            "required": ["command"]
        })
    }

    fn access(&self) -> Access {
        Access::Execute
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::new("command is empty; give the shell command to run"));
        }
        let background = if args.background { "  (background)" } else { "" };
        Ok(Prepared::new(format!("$ {}{background}", args.command)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move { self.run_with(args, ctx, &self.sandbox, prepared.shown_as.as_deref()).await }.boxed()
    }

    fn execute_in_sandbox<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
        sandbox: &'a SandboxPolicy,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move { self.run_with(args, ctx, sandbox, prepared.shown_as.as_deref()).await }.boxed()
    }
}

/// Run `command` to its end, its timeout, or the user's interrupt, and collect its output.
async fn run(
    command: &str,
    cwd: &Path,
    limit: Duration,
    cancel: &CancellationToken,
    confinement: Option<Confinement>,
    only_reads: bool,
) -> std::io::Result<Run> {
    let (mut child, mut reader) = spawn(command, cwd, confinement, only_reads)?;
    let mut group = ProcessGroup::of(&child)?;
    let mut output = OutputBuffer::new(KEEP_HEAD_BYTES, KEEP_TAIL_BYTES);
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    let mut open = true;
    let deadline = Instant::now() + limit;
    let ended = loop {
        tokio::select! {
            read = reader.read(&mut chunk), if open => match read {
                Ok(0) | Err(_) => open = false,
                Ok(n) => output.push(&chunk[..n]),
            },
            status = child.wait() => break Ok(status?),
            () = sleep_until(deadline) => break Err(Stop::TimedOut),
            () = cancel.cancelled() => break Err(Stop::Interrupted),
        }
    };
    let (status, stop) = match ended {
        Ok(status) => {
            // Background jobs it started may keep running (a dev server, say); they are
            // remembered, so cairn can say at exit what is still running and end it.
            group.disarm();
            super::leftover::record_if_alive(group.id, command);
            (status, None)
        }
        Err(stop) => {
            group.signal(libc::SIGTERM);
            let grace = Instant::now() + TERM_GRACE;
            let status = loop {
                tokio::select! {
                    read = reader.read(&mut chunk), if open => match read {
                        Ok(0) | Err(_) => open = false,
                        Ok(n) => output.push(&chunk[..n]),
                    },
                    status = child.wait() => break Some(status?),
                    () = sleep_until(grace) => break None,
                }
            };
            // Whatever ignored SIGTERM or outlived the shell goes now.
            group.signal(libc::SIGKILL);
            group.disarm();
            let status = match status {
                Some(status) => status,
                None => child.wait().await?,
            };
            (status, Some(stop))
        }
    };
    let drain_until = Instant::now() + DRAIN_GRACE;
    while open {
        match timeout_at(drain_until, reader.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => output.push(&chunk[..n]),
            Ok(Ok(_)) | Ok(Err(_)) | Err(_) => open = false,
        }
    }
    // On Unix a status carries either an exit code or the signal that ended the process.
    let ended = match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Code(code),
        (None, Some(signal)) => Ended::Signal(signal),
        (None, None) => Ended::Unknown,
    };
    Ok(Run { output: output.into_text(), ended, stop })
}

/// Start `bash -c command` (or `sh -c` where there is no bash) with stdout and stderr both
/// writing into one pipe, so their output arrives interleaved as it was written.
pub(super) fn spawn(
    command: &str,
    cwd: &Path,
    confinement: Option<Confinement>,
    only_reads: bool,
) -> std::io::Result<(Child, pipe::Receiver)> {
    // Shared by both attempts; each child takes what it applies from its own copy.
    let confinement = std::sync::Arc::new(std::sync::Mutex::new(confinement));
    let [first, second] = shell::SHELLS;
    match spawn_shell(first, command, cwd, confinement.clone(), only_reads) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && cwd.is_dir() => {
            spawn_shell(second, command, cwd, confinement, only_reads)
        }
        other => other,
    }
}

fn spawn_shell(
    shell: &str,
    command: &str,
    cwd: &Path,
    confinement: std::sync::Arc<std::sync::Mutex<Option<Confinement>>>,
    only_reads: bool,
) -> std::io::Result<(Child, pipe::Receiver)> {
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = shell::command(shell, command, cwd, only_reads);
    cmd.stdout(writer.try_clone()?).stderr(writer);
    // A new session, not just a process group: the command gets its own group (so a timeout
    // can kill all of it) and no controlling terminal, so nothing it runs can draw over the
    // TUI or stop on a read from /dev/tty; a password prompt fails at once instead.
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            if libc::setsid() == -1 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
        });
    }
    // The OS sandbox, in the child only: cairn itself stays unrestricted. The ruleset and the
    // filter were built before the fork; applying them makes system calls and nothing else.
    // SAFETY: in the forked child this thread is the only one, so the lock is free (`try_lock`
    // never waits); applying a prepared Landlock ruleset and seccomp filter does not allocate.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || match confinement.try_lock() {
            Ok(mut slot) => match slot.as_mut() {
                Some(c) => c.apply(),
                None => Ok(()),
            },
            Err(_) => Err(std::io::Error::other("the sandbox could not be applied")),
        });
    }
    let mut cmd = Command::from(cmd);
    let child = cmd.spawn()?;
    // Our copies of the pipe's write end live in `cmd`; close them so the reader sees the end
    // of output once the command's processes have closed theirs.
    drop(cmd);
    let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok((child, reader))
}

/// The command's process group; killed when dropped while armed, so a run abandoned halfway
/// (its future dropped) leaves nothing behind.
struct ProcessGroup {
    id: libc::pid_t,
    armed: bool,
}

impl ProcessGroup {
    fn of(child: &Child) -> std::io::Result<ProcessGroup> {
        // After setsid the shell leads its own group, whose id is the shell's pid.
        let pid = child.id().ok_or_else(|| std::io::Error::other("the shell ended before it could be tracked"))?;
        let id = libc::pid_t::try_from(pid).map_err(|_| std::io::Error::other("process id out of range"))?;
        Ok(ProcessGroup { id, armed: true })
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: killpg only sends a signal; an empty group gives ESRCH, which is fine here.
        unsafe {
            libc::killpg(self.id, signal);
        }
    }

    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.armed {
            self.signal(libc::SIGKILL);
        }
    }
}

/// Captured output with bounded memory: the first `head_cap` bytes and the last `tail_cap`.
struct OutputBuffer {
    head: Vec<u8>,
    tail: Vec<u8>,
    head_cap: usize,
    tail_cap: usize,
    dropped: usize,
}

impl OutputBuffer {
    fn new(head_cap: usize, tail_cap: usize) -> OutputBuffer {
        OutputBuffer { head: Vec::new(), tail: Vec::new(), head_cap, tail_cap, dropped: 0 }
    }

    fn push(&mut self, bytes: &[u8]) {
        let into_head = bytes.len().min(self.head_cap - self.head.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        self.tail.extend_from_slice(&bytes[into_head..]);
        // Compact only when the tail doubled, so dropping old bytes stays amortised O(1).
        if self.tail.len() > 2 * self.tail_cap {
            self.trim_tail();
        }
    }

    fn trim_tail(&mut self) {
        let excess = self.tail.len().saturating_sub(self.tail_cap);
        self.tail.drain(..excess);
        self.dropped += excess;
    }

    fn into_text(mut self) -> String {
        self.trim_tail();
        if self.dropped == 0 {
            self.head.append(&mut self.tail);
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        format!(
            "{}\n[… {} bytes of output omitted …]\n{}",
            String::from_utf8_lossy(&self.head),
            self.dropped,
            String::from_utf8_lossy(&self.tail)
        )
    }
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "bash_sandbox_tests.rs"]
mod sandbox_tests;

#[cfg(test)]
#[path = "bash_confinement_tests.rs"]
mod confinement_tests;
