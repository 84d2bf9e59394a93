//! Starting an agent, and the router that keeps it responsive: interrupts, approvals and mode
//! switches are handled the moment they arrive, everything else queues for the worker.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, UserCommand};
use super::worker::Worker;
use crate::config::{Config, ModelInfo, ProviderKind, Redactor};
use crate::conversation::Mode;
use crate::llm::Provider;
use crate::store::{NewSession, ProjectId, SessionInfo, Store, StoreError};
use crate::tools::{ApprovalPolicy, Registry};

/// Which session the agent opens.
#[derive(Clone, Debug)]
pub enum SessionChoice {
    New,
    /// An existing session of the project, already resolved (so an unknown id fails before
    /// anything starts).
    Resume(SessionInfo),
}

/// Everything an agent is made of.
pub struct AgentSetup {
    pub store: Arc<Store>,
    pub project: ProjectId,
    /// Canonical project root.
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub config: Config,
    pub provider: Arc<dyn Provider>,
    pub provider_kind: ProviderKind,
    pub model: ModelInfo,
    /// `--context-window`, kept across `/model` switches.
    pub window_override: Option<u64>,
    pub registry: Arc<Registry>,
    pub approval: ApprovalPolicy,
    /// Most model requests per prompt.
    pub max_turns: Option<u32>,
    pub mode: Mode,
    pub session: SessionChoice,
    /// Key values to keep out of everything stored.
    pub redactor: Redactor,
    /// Where full outputs of truncated results go.
    pub truncations_dir: PathBuf,
}

/// The front end's end of the agent.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<UserCommand>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The session the agent opened, for the front end's first frame and headless output.
    pub session: SessionInfo,
    worker: tokio::task::JoinHandle<()>,
}

impl AgentHandle {
    /// Ask the agent to stop and wait until everything it was writing is committed.
    pub async fn shutdown(self) {
        let _ = self.commands.send(UserCommand::Shutdown);
        let _ = self.worker.await;
    }
}

/// Open the session and start the agent's tasks. Emits `SessionReady` first.
pub fn spawn(setup: AgentSetup) -> Result<AgentHandle, StoreError> {
    let session = match setup.session.clone() {
        SessionChoice::New => setup.store.create_session(
            setup.project,
            NewSession { provider: setup.provider_kind.as_str(), model: &setup.model.name, mode: setup.mode.as_str() },
        )?,
        SessionChoice::Resume(info) => info,
    };
    let resumed = matches!(setup.session, SessionChoice::Resume(_));
    let removed = super::spill::clean_truncations(
        &setup.truncations_dir,
        &setup.store,
        setup.config.context.truncation_retention_days,
    );
    if removed > 0 {
        tracing::info!(removed, "removed old truncation files");
    }
    let (commands_tx, commands_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (work_tx, work_rx) = mpsc::unbounded_channel();
    let (approvals_tx, approvals_rx) = mpsc::unbounded_channel();
    let (mode_tx, mode_rx) = watch::channel(setup.mode);
    let cancel_slot = Arc::new(Mutex::new(CancellationToken::new()));
    let busy = Arc::new(AtomicBool::new(false));

    let mut worker = Worker::new(
        setup,
        session.clone(),
        mode_rx,
        approvals_rx,
        events_tx.clone(),
        cancel_slot.clone(),
        busy.clone(),
    )?;
    worker.announce_session(resumed);
    let worker = tokio::spawn(worker.run(work_rx));
    tokio::spawn(route(commands_rx, work_tx, approvals_tx, mode_tx, events_tx, cancel_slot, busy));
    Ok(AgentHandle { commands: commands_tx, events: events_rx, session, worker })
}

async fn route(
    mut commands: mpsc::UnboundedReceiver<UserCommand>,
    work: mpsc::UnboundedSender<UserCommand>,
    approvals: mpsc::UnboundedSender<(u64, super::ApprovalDecision)>,
    mode: watch::Sender<Mode>,
    events: mpsc::UnboundedSender<AgentEvent>,
    cancel_slot: Arc<Mutex<CancellationToken>>,
    busy: Arc<AtomicBool>,
) {
    let cancel_current = || cancel_slot.lock().unwrap_or_else(|p| p.into_inner()).cancel();
    while let Some(command) = commands.recv().await {
        match command {
            UserCommand::Interrupt => cancel_current(),
            UserCommand::Approval { id, decision } => {
                let _ = approvals.send((id, decision));
            }
            UserCommand::SetMode(new_mode) => {
                mode.send_replace(new_mode);
                let _ = events.send(AgentEvent::ModeChanged(new_mode));
                // The worker persists it with the session.
                let _ = work.send(UserCommand::SetMode(new_mode));
            }
            UserCommand::Shutdown => {
                cancel_current();
                let _ = work.send(UserCommand::Shutdown);
                break;
            }
            UserCommand::Submit(prompt) => {
                if busy.load(Ordering::SeqCst) {
                    let _ = events.send(AgentEvent::Queued { prompt: prompt.clone() });
                }
                let _ = work.send(UserCommand::Submit(prompt));
            }
            other @ (UserCommand::SetModel(_)
            | UserCommand::Compact
            | UserCommand::DescribeContext
            | UserCommand::NewSession
            | UserCommand::ResumeSession(_)) => {
                let _ = work.send(other);
            }
        }
    }
}
