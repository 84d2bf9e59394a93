//! `bash`: run a shell command in the project root and capture its output, stdout and stderr
//! interleaved as written. Owns the process's lifetime: its own session and process group, the
//! timeout and the user's interrupt (both kill the whole group), and not hanging on background
//! children that keep the output pipe open.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
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

use super::sandbox::{self, Confinement, SandboxPolicy};
use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
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
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        if args.background {
            return start_in_background(&args.command, ctx, sandbox).await;
        }
        let limit = Duration::from_millis(match args.timeout_ms {
            None | Some(0) => ctx.config.bash_timeout_ms,
            Some(ms) => ms.min(ctx.config.bash_max_timeout_ms),
        });
        let (policy, root) = (sandbox.clone(), ctx.root.clone());
        let confinement = tokio::task::spawn_blocking(move || Confinement::build(&policy, &root))
            .await
            .map_err(|e| ToolError::new(format!("could not set up the sandbox: {e}")))?
            .map_err(|e| ToolError::new(format!("could not run the command: {e}")))?;
        let confined = confinement.is_some();
        let absent = confinement.as_ref().map(|c| c.absent().to_vec()).unwrap_or_default();
        let only_reads = sandbox.confine_reads;
        let run = run(&args.command, &ctx.root, limit, &ctx.cancel, confinement, only_reads)
            .await
            .map_err(|e| ToolError::new(format!("could not run the command: {e}")))?;
        let mut output = run.into_output(limit);
        let created = tokio::task::spawn_blocking(move || sandbox::undo_created(&absent)).await.unwrap_or_default();
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
            && run_was_complete(&output)
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

/// A run that ended by itself (not timed out or interrupted) is one the sandbox may have failed.
fn run_was_complete(output: &ToolOutput) -> bool {
    !output.content.contains("[timed out after ") && !output.content.contains("[interrupted by the user]")
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
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.run_with(args, ctx, &self.sandbox).boxed()
    }

    fn execute_in_sandbox<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
        sandbox: &'a SandboxPolicy,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.run_with(args, ctx, sandbox).boxed()
    }
}

/// Why a command was stopped before it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    TimedOut,
    Interrupted,
}

struct Run {
    output: String,
    status: ExitStatus,
    stop: Option<Stop>,
}

impl Run {
    fn into_output(self, limit: Duration) -> ToolOutput {
        let mut content = self.output;
        if content.is_empty() {
            content.push_str("(no output)");
        }
        if !content.ends_with('\n') {
            content.push('\n');
        }
        match self.stop {
            Some(Stop::TimedOut) => {
                content.push_str(&format!("[timed out after {}; the process group was killed]\n", seconds(limit)));
            }
            Some(Stop::Interrupted) => content.push_str("[interrupted by the user]\n"),
            None => {}
        }
        // On Unix a status carries either an exit code or the signal that ended the process.
        let code = match (self.status.code(), self.status.signal()) {
            (Some(code), _) => {
                content.push_str(&format!("[exit code {code}]"));
                code
            }
            (None, Some(signal)) => {
                content.push_str(&format!("[killed by signal {signal}]"));
                128 + signal
            }
            (None, None) => {
                content.push_str("[exit status unknown]");
                -1
            }
        };
        ToolOutput {
            content,
            is_error: code != 0,
            exit_code: Some(code),
            diff: None,
            sandbox_denial: None,
            image: None,
        }
    }
}

fn seconds(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms.is_multiple_of(1000) { format!("{}s", ms / 1000) } else { format!("{:.1}s", limit.as_secs_f64()) }
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
    Ok(Run { output: output.into_text(), status, stop })
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
    match spawn_shell("bash", command, cwd, confinement.clone(), only_reads) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && cwd.is_dir() => {
            spawn_shell("sh", command, cwd, confinement, only_reads)
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
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
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
    // A new session, not just a process group: the command gets its own group (so a timeout
    // can kill all of it) and no controlling terminal, so nothing it runs can draw over the
    // TUI or stop on a read from /dev/tty; a password prompt fails at once instead.
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| if libc::setsid() == -1 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
    }
    // The OS sandbox, in the child only: cairn itself stays unrestricted. The ruleset and the
    // filter were built before the fork; applying them makes system calls and nothing else.
    // SAFETY: in the forked child this thread is the only one, so the lock is free (`try_lock`
    // never waits); applying a prepared Landlock ruleset and seccomp filter does not allocate.
    unsafe {
        cmd.pre_exec(move || match confinement.try_lock() {
            Ok(mut slot) => match slot.as_mut() {
                Some(c) => c.apply(),
                None => Ok(()),
            },
            Err(_) => Err(std::io::Error::other("the sandbox could not be applied")),
        });
    }
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
