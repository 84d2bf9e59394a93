//! The pump of a session: every event of its agent becomes the updates the client shows, in
//! order; approvals go out as permission requests and their answers back to the agent; a
//! turn's end (or the answer to `/context` or `/mode`) answers the prompt waiting for it.

use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    ToolCallUpdate,
};
use tokio::sync::{mpsc, oneshot};

use super::terminals::Opened;
use super::updates::Live;
use super::{approval, commands, replay};
use crate::agent::{AgentEvent, AgentHandle, ApprovalDecision, ApprovalRequest, CommandInfo, TurnOutcome, UserCommand};
use crate::conversation::Mode;

/// What answers a waiting prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    /// The end of the turn it started.
    Turn,
    /// The event that answers a command at once (`/context`, `/mode`).
    Answer,
}

pub(super) struct Waiter {
    pub expect: Expect,
    pub done: oneshot::Sender<Result<StopReason, String>>,
}

/// What the session and its pump share.
#[derive(Default)]
pub(super) struct Shared {
    waiting: Mutex<Option<Waiter>>,
    custom: Mutex<Vec<CommandInfo>>,
    mode: Mutex<Mode>,
    /// Why the agent stopped by itself, once it has.
    failed: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// A prompt waits; one at a time (a client sends the next once this one is answered).
    pub(super) fn wait(&self, waiter: Waiter) -> Result<(), String> {
        let mut waiting = lock(&self.waiting);
        if waiting.as_ref().is_some_and(|w| !w.done.is_closed()) {
            return Err("a prompt is still running in this session; cancel it or wait for its answer".into());
        }
        *waiting = Some(waiter);
        Ok(())
    }

    fn expects(&self, expected: Expect) -> bool {
        lock(&self.waiting).as_ref().is_some_and(|w| w.expect == expected)
    }

    pub(super) fn stop_waiting(&self) {
        lock(&self.waiting).take();
    }

    fn answer(&self, expected: Expect, result: Result<StopReason, String>) -> bool {
        let mut waiting = lock(&self.waiting);
        match waiting.take() {
            Some(waiter) if waiter.expect == expected => {
                let _ = waiter.done.send(result);
                true
            }
            other => {
                *waiting = other;
                false
            }
        }
    }

    pub(super) fn custom_commands(&self) -> Vec<CommandInfo> {
        lock(&self.custom).clone()
    }

    pub(super) fn mode(&self) -> Mode {
        *lock(&self.mode)
    }

    pub(super) fn set_mode(&self, mode: Mode) {
        *lock(&self.mode) = mode;
    }

    pub(super) fn failed(&self) -> Option<String> {
        lock(&self.failed).clone()
    }
}

pub(super) struct Pump {
    cx: ConnectionTo<Client>,
    session: SessionId,
    root: std::path::PathBuf,
    shared: Arc<Shared>,
    /// Tell the stored conversation again when the agent announces it (`session/load`).
    replay: bool,
    ready: Option<oneshot::Sender<()>>,
    /// The running turn streamed answer text (else its result is said at its end: `/compact`).
    streamed: bool,
    /// The client's terminals commands now run in, each to show in its call.
    opened: Option<mpsc::UnboundedReceiver<Opened>>,
}

impl Pump {
    pub(super) fn new(
        cx: ConnectionTo<Client>,
        session: SessionId,
        root: std::path::PathBuf,
        shared: Arc<Shared>,
        replay: bool,
        ready: oneshot::Sender<()>,
    ) -> Pump {
        Pump { cx, session, root, shared, replay, ready: Some(ready), streamed: false, opened: None }
    }

    /// Each terminal `opened` tells of is shown in its call.
    pub(super) fn showing(self, opened: mpsc::UnboundedReceiver<Opened>) -> Pump {
        Pump { opened: Some(opened), ..self }
    }

    /// Until the agent stops, or `stop` says to stop it.
    pub(super) async fn run(mut self, mut handle: AgentHandle, mut stop: oneshot::Receiver<()>) {
        *lock(&self.shared.custom) = handle.custom_commands.clone();
        let mut live = Live::new(self.root.clone(), handle.redactor.clone());
        loop {
            let event = tokio::select! {
                // The agent's events first: what it said of a call before its command started
                // in a terminal reaches the client before the terminal does.
                biased;
                event = handle.events.recv() => event,
                opened = async { self.opened.as_mut()?.recv().await }, if self.opened.is_some() => {
                    match opened {
                        Some(opened) => self.send(live.terminal(&opened)),
                        None => self.opened = None,
                    }
                    continue;
                }
                ended = handle.worker.ended() => {
                    self.fail(ended);
                    return;
                }
                _ = &mut stop => {
                    handle.shutdown().await;
                    return;
                }
            };
            let Some(event) = event else {
                self.fail("the agent stopped unexpectedly; the log in cairn's data folder says why".into());
                return;
            };
            self.handle(event, &mut live, &handle.commands);
        }
    }

    fn handle(&mut self, event: AgentEvent, live: &mut Live, commands: &mpsc::UnboundedSender<UserCommand>) {
        match &event {
            AgentEvent::SessionReady { history, tool_display, recap, mode, .. } => {
                self.shared.set_mode(*mode);
                if std::mem::take(&mut self.replay) {
                    for update in replay::updates(history, tool_display, recap, &self.root, live.redactor()) {
                        self.send(update);
                    }
                }
                // The rest of the announcement (mode, commands, context) follows as updates.
                if let Some(ready) = self.ready.take() {
                    let _ = ready.send(());
                }
                return;
            }
            AgentEvent::ApprovalRequested(request) => {
                let (announced, call) = live.asking(request);
                for update in announced {
                    self.send(update);
                }
                self.ask(request.clone(), call, commands.clone());
                return;
            }
            AgentEvent::Commands(custom) => *lock(&self.shared.custom) = custom.clone(),
            AgentEvent::ModeChanged(mode) => self.shared.set_mode(*mode),
            AgentEvent::TextDelta(_) => self.streamed = true,
            AgentEvent::TurnStarted { .. } => self.streamed = false,
            _ => {}
        }
        for update in live.updates(&event) {
            self.send(update);
        }
        match event {
            AgentEvent::TurnFinished(summary) => {
                let reason = match summary.outcome {
                    TurnOutcome::Completed { text } => {
                        if !std::mem::take(&mut self.streamed) && !text.trim().is_empty() {
                            self.say(text);
                        }
                        Ok(StopReason::EndTurn)
                    }
                    TurnOutcome::Interrupted { .. } => Ok(StopReason::Cancelled),
                    TurnOutcome::MaxTurns { .. } => Ok(StopReason::MaxTurnRequests),
                    TurnOutcome::Failed { error } => Err(error),
                };
                self.shared.answer(Expect::Turn, reason);
            }
            AgentEvent::ContextBreakdown(breakdown) if self.shared.expects(Expect::Answer) => {
                self.say(commands::context_text(&breakdown));
                self.shared.answer(Expect::Answer, Ok(StopReason::EndTurn));
            }
            AgentEvent::ModeChanged(mode) if self.shared.expects(Expect::Answer) => {
                self.say(format!("mode is now {mode}"));
                self.shared.answer(Expect::Answer, Ok(StopReason::EndTurn));
            }
            _ => {}
        }
    }

    /// A permission request for `request`, answered on its own task so the session goes on;
    /// the answer goes back to the agent (which ignores it if the turn was cancelled meanwhile).
    fn ask(&self, request: ApprovalRequest, call: ToolCallUpdate, commands: mpsc::UnboundedSender<UserCommand>) {
        let (cx, session) = (self.cx.clone(), self.session.clone());
        tokio::spawn(async move {
            let options = approval::options(&request);
            let asked = cx.send_request(RequestPermissionRequest::new(session, call, options)).block_task().await;
            let decision = match asked {
                Ok(response) => approval::decision(&response.outcome),
                Err(e) => ApprovalDecision::Unanswered { why: format!("the editor could not ask the user ({e})") },
            };
            let _ = commands.send(UserCommand::Approval { id: request.id, decision });
        });
    }

    fn say(&self, text: String) {
        self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text))));
    }

    fn fail(&self, why: String) {
        *lock(&self.shared.failed) = Some(why.clone());
        self.shared.answer(Expect::Turn, Err(why.clone()));
        self.shared.answer(Expect::Answer, Err(why));
    }

    fn send(&self, update: SessionUpdate) {
        if let Err(e) = self.cx.send_notification(SessionNotification::new(self.session.clone(), update)) {
            tracing::debug!(error = %e, "an update did not reach the client");
        }
    }
}
