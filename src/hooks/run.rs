//! Running one hook: `sh -c COMMAND` in the project root, in its own process group, the event
//! as JSON on stdin, stdout and stderr read (capped), and the whole group killed when the
//! timeout passes or the turn is interrupted.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use process_wrap::tokio::{CommandWrap, KillOnDrop};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Output of a hook kept at most, per stream: a hook's answer is a line or a small object.
const MAX_OUTPUT: usize = 64 * 1024;

/// How one hook run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookRun {
    /// `None` when it was killed (timeout, interrupt) or died of a signal.
    pub exit: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub interrupted: bool,
    pub duration: Duration,
}

/// Run `command` with `input` on stdin.
pub async fn run(
    command: &str,
    root: &Path,
    input: &serde_json::Value,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<HookRun, String> {
    let started = Instant::now();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .env("CAIRN_PROJECT_DIR", root)
        // Claude Code's name for it, so hooks written for it find the project too.
        .env("CLAUDE_PROJECT_DIR", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut wrapped = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    wrapped.wrap(KillOnDrop);
    let mut child = wrapped.spawn().map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let mut stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let payload = format!("{input}\n");
    let write = async move {
        if let Some(stdin) = stdin.as_mut() {
            // A hook that does not read its input closes the pipe early: not an error.
            let _ = stdin.write_all(payload.as_bytes()).await;
            let _ = stdin.shutdown().await;
        }
    };
    let read_out = read_capped(stdout);
    let read_err = read_capped(stderr);
    let work = async {
        let ((), out, err) = tokio::join!(write, read_out, read_err);
        (out, err)
    };
    tokio::pin!(work);
    let outcome = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        _ = tokio::time::sleep(timeout) => Some(None),
        streams = &mut work => Some(Some(streams)),
    };
    let (interrupted, timed_out, streams) = match outcome {
        None => (true, false, None),
        Some(None) => (false, true, None),
        Some(Some(streams)) => (false, false, Some(streams)),
    };
    if streams.is_none() {
        // Kill the whole group: `sh -c 'sleep 100 | cat'` leaves children that would hold
        // the pipes open.
        let _ = Box::into_pin(child.kill()).await;
        return Ok(HookRun {
            exit: None,
            stdout: String::new(),
            stderr: String::new(),
            timed_out,
            interrupted,
            duration: started.elapsed(),
        });
    }
    let (stdout, stderr) = streams.unwrap_or_default();
    // The streams closed: the hook has exited or is about to; give it the rest of its time.
    let remaining = timeout.saturating_sub(started.elapsed());
    let exit = match tokio::time::timeout(remaining, child.wait()).await {
        Ok(Ok(status)) => status.code(),
        Ok(Err(e)) => return Err(format!("waiting for `{command}` failed: {e}")),
        Err(_) => {
            let _ = Box::into_pin(child.kill()).await;
            return Ok(HookRun {
                exit: None,
                stdout,
                stderr,
                timed_out: true,
                interrupted: false,
                duration: started.elapsed(),
            });
        }
    };
    Ok(HookRun { exit, stdout, stderr, timed_out: false, interrupted: false, duration: started.elapsed() })
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(stream: Option<R>) -> String {
    let Some(mut stream) = stream else { return String::new() };
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
                // Keep reading to the end so the hook never blocks on a full pipe.
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
