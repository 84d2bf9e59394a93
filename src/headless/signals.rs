//! The signals that stop a headless run.

use super::error::HeadlessError;

/// The signals that stop a headless run: Ctrl+C, and the terminal closing (SIGHUP) or a
/// supervisor stopping it (SIGTERM). Each is handled the same way: the running tool's process
/// group is killed, what finished is stored, and the result is printed marked interrupted.
#[cfg(unix)]
pub(super) struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignals {
    pub(super) fn listen() -> Result<StopSignals, HeadlessError> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| {
                HeadlessError::Failed(format!(
                    "cannot listen for {name} ({e}); without it a stop would lose the answer so far"
                ))
            })
        };
        Ok(StopSignals {
            interrupt: listen(SignalKind::interrupt(), "Ctrl+C")?,
            terminate: listen(SignalKind::terminate(), "SIGTERM")?,
            hangup: listen(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next stop signal's name.
    pub(super) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "Ctrl+C",
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
        }
    }
}

#[cfg(windows)]
pub(super) struct StopSignals(tokio::signal::windows::CtrlC);

#[cfg(windows)]
impl StopSignals {
    pub(super) fn listen() -> Result<StopSignals, HeadlessError> {
        tokio::signal::windows::ctrl_c().map(StopSignals).map_err(|e| {
            HeadlessError::Failed(format!(
                "cannot listen for Ctrl+C ({e}); without it an interrupt would lose the answer so far"
            ))
        })
    }

    pub(super) async fn recv(&mut self) -> &'static str {
        let _ = self.0.recv().await;
        "Ctrl+C"
    }
}
