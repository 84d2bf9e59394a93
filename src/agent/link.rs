//! The worker's line to the outside: events out to the front end, the mode the router sets,
//! and the control of the running turn, which the router fires on Interrupt.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, NoticeLevel};
use crate::conversation::Mode;

/// Sends events to the front end; cloned into background jobs.
#[derive(Clone)]
pub(super) struct Emitter(mpsc::UnboundedSender<AgentEvent>);

impl Emitter {
    pub(super) fn new(events: mpsc::UnboundedSender<AgentEvent>) -> Emitter {
        Emitter(events)
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        // A front end that went away is not an error for the agent.
        let _ = self.0.send(event);
    }

    pub(super) fn notice(&self, level: NoticeLevel, text: impl Into<String>) {
        self.emit(AgentEvent::Notice { level, text: text.into() });
    }
}

/// The running turn's cancellation and whether a turn runs: the worker starts and ends turns,
/// the router interrupts them and reports prompts sent meanwhile as queued.
#[derive(Clone, Default)]
pub(super) struct TurnControl {
    cancel: Arc<Mutex<CancellationToken>>,
    busy: Arc<AtomicBool>,
}

impl TurnControl {
    /// A fresh token that [`TurnControl::interrupt`] fires; the agent is busy until `end`.
    pub(super) fn begin(&self) -> CancellationToken {
        let cancel = CancellationToken::new();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = cancel.clone();
        self.busy.store(true, Ordering::SeqCst);
        cancel
    }

    pub(super) fn end(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }

    pub(super) fn interrupt(&self) {
        self.cancel.lock().unwrap_or_else(|p| p.into_inner()).cancel();
    }

    pub(super) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
}

/// What the worker holds of the link.
#[derive(Clone)]
pub(super) struct Link {
    events: Emitter,
    mode: watch::Receiver<Mode>,
    control: TurnControl,
    /// A read-only subagent: plan mode at most, whatever the session's mode.
    read_only: bool,
}

impl Link {
    pub(super) fn new(events: Emitter, mode: watch::Receiver<Mode>, control: TurnControl) -> Link {
        Link { events, mode, control, read_only: false }
    }

    /// A subagent's link: its own events, the session's mode as the user switches it (capped
    /// at plan for a read-only subagent), and a turn control of its own.
    pub(super) fn for_subagent(&self, events: Emitter, read_only: bool) -> Link {
        Link { events, mode: self.mode.clone(), control: TurnControl::default(), read_only }
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        self.events.emit(event);
    }

    pub(super) fn notice(&self, level: NoticeLevel, text: impl Into<String>) {
        self.events.notice(level, text);
    }

    /// For parts and background jobs that report on their own.
    pub(super) fn emitter(&self) -> Emitter {
        self.events.clone()
    }

    /// The mode now: the router switches it the moment the user does, even mid-turn.
    pub(super) fn mode(&self) -> Mode {
        match (*self.mode.borrow(), self.read_only) {
            (Mode::Edit, true) => Mode::Plan,
            (mode, _) => mode,
        }
    }

    pub(super) fn control(&self) -> &TurnControl {
        &self.control
    }
}
