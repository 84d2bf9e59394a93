//! Starting an agent, and the router that keeps it responsive: interrupts, approvals, mode
//! switches and the library's lists are handled the moment they arrive, everything else queues
//! for the worker.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::approvals::ApprovalDesk;
use super::events::{AgentEvent, BackgroundAnswer, BackgroundRequest, UserCommand};
use super::library::Library;
use super::link::{Emitter, Link, TurnControl};
use super::models::ModelDirectory;
use super::setup::{AgentSetup, SessionChoice};
use super::worker::Worker;
use crate::conversation::Mode;
use crate::store::{NewSession, SessionInfo, StoreError};

/// The front end's end of the agent.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<UserCommand>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// The session the agent opened, for the front end's first frame and headless output.
    pub session: SessionInfo,
    /// The custom commands and skills `/NAME` runs, as found at start.
    pub custom_commands: Vec<super::events::CommandInfo>,
    /// The worker's task, watched so a front end notices when it ends unasked (a panic).
    pub worker: WorkerWatch,
    /// The key values the agent keeps out of what it stores, for a front end to keep them out of
    /// what it prints (stream-json shows tool output as it comes).
    pub redactor: crate::config::Redactor,
}

/// The worker task of an agent; `None` once it has ended and been waited for.
pub struct WorkerWatch(Option<tokio::task::JoinHandle<()>>);

impl WorkerWatch {
    /// Resolves when the worker ends without being asked to (it only ends on `Shutdown`): a
    /// panic, whose message it returns. Pending forever once it has resolved.
    pub async fn ended(&mut self) -> String {
        let Some(worker) = self.0.as_mut() else { return std::future::pending().await };
        let ended = worker.await;
        self.0 = None;
        match ended {
            Ok(()) => "the agent stopped without being asked to".to_string(),
            Err(e) if e.is_panic() => {
                let panic = e.into_panic();
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".to_string());
                tracing::error!(panic = %message, "the agent's worker panicked");
                format!("the agent failed with an internal error (panic: {message})")
            }
            Err(e) => format!("the agent was stopped ({e})"),
        }
    }
}

impl AgentHandle {
    /// Ask the agent to stop and wait until everything it was writing is committed.
    pub async fn shutdown(self) {
        let _ = self.commands.send(UserCommand::Shutdown);
        if let Some(worker) = self.worker.0 {
            let _ = worker.await;
        }
    }

    /// A handle over channels and a worker task made by the caller: for tests of a front end
    /// against a worker that misbehaves.
    #[cfg(test)]
    pub fn from_parts(
        commands: mpsc::UnboundedSender<UserCommand>,
        events: mpsc::UnboundedReceiver<AgentEvent>,
        session: SessionInfo,
        worker: tokio::task::JoinHandle<()>,
    ) -> AgentHandle {
        AgentHandle {
            commands,
            events,
            session,
            worker: WorkerWatch(Some(worker)),
            custom_commands: Vec::new(),
            redactor: Default::default(),
        }
    }
}

/// Sessions left without a message this long ago are gone for good (older versions stored
/// one per launch); younger ones may belong to a cairn still starting up elsewhere.
const EMPTY_SESSION_GRACE: chrono::TimeDelta = chrono::TimeDelta::days(1);

/// Open the session and start the agent's tasks. Emits `SessionReady` first. A new session
/// is only drafted: it is written with its first message.
pub fn spawn(setup: AgentSetup) -> Result<AgentHandle, StoreError> {
    let session = match setup.session.clone() {
        SessionChoice::New => setup.store.draft_session(
            setup.project,
            NewSession { provider: setup.provider_kind, model: &setup.model.name, mode: setup.mode },
        )?,
        SessionChoice::Resume(info) | SessionChoice::Drafted(info) => info,
    };
    let before = (chrono::Utc::now() - EMPTY_SESSION_GRACE).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    match setup.store.purge_empty_sessions(setup.project, &before) {
        Ok(0) => {}
        Ok(n) => tracing::info!(removed = n, "removed empty sessions"),
        Err(e) => tracing::warn!(error = %e, "could not remove empty sessions"),
    }
    let resumed = matches!(setup.session, SessionChoice::Resume(_));
    let removed = super::saved_outputs::clean_truncations(
        &setup.truncations_dir,
        &setup.store,
        setup.config.context.truncation_retention_days,
    );
    if removed > 0 {
        tracing::info!(removed, "removed old truncation files");
    }
    if let Some(data) = setup.truncations_dir.parent() {
        let removed = crate::tools::background::clean_logs(
            &data.join("background"),
            setup.config.context.truncation_retention_days,
        );
        if removed > 0 {
            tracing::info!(removed, "removed old background command logs");
        }
    }
    let (commands_tx, commands_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (work_tx, work_rx) = mpsc::unbounded_channel();
    let desk = Arc::new(ApprovalDesk::default());
    let (mode_tx, mode_rx) = watch::channel(setup.mode);
    let control = TurnControl::default();
    let events = Emitter::new(events_tx);
    let models = ModelDirectory::new(
        setup.provider_kind,
        setup.model_lister.clone(),
        setup.config.models.clone(),
        &setup.model.name,
    )
    .with_local_server(setup.local_server.clone());
    let library = Library::new(setup.store.clone(), setup.project)
        .with_pricing(crate::config::Pricing::from_config(&setup.config));
    let mut worker =
        Worker::new(setup, session, Link::new(events.clone(), mode_rx, control.clone()), desk.clone(), models.clone())?;
    let router = Router {
        work: work_tx,
        approvals: desk.clone(),
        mode: mode_tx,
        events,
        control,
        library,
        models,
        mcp: worker.mcp_desk(),
        jobs: worker.jobs(),
    };
    worker.announce_session(resumed);
    // As announced: a resume may have changed its mode or model.
    let session = worker.session_info().clone();
    let custom_commands = worker.command_list();
    let redactor = worker.redactor().clone();
    let worker = tokio::spawn(worker.run(work_rx));
    tokio::spawn(router.run(commands_rx));
    Ok(AgentHandle {
        commands: commands_tx,
        events: events_rx,
        session,
        worker: WorkerWatch(Some(worker)),
        custom_commands,
        redactor,
    })
}

/// Takes every command first: answers what must not wait for a turn, queues the rest.
struct Router {
    work: mpsc::UnboundedSender<UserCommand>,
    /// Answers reach the dialog that asked, the main agent's or a subagent's.
    approvals: Arc<ApprovalDesk>,
    mode: watch::Sender<Mode>,
    events: Emitter,
    control: TurnControl,
    library: Library,
    models: ModelDirectory,
    mcp: super::mcp_desk::McpDesk,
    /// The background commands: `/ps` and `/stop` are answered here, even mid-turn.
    jobs: Option<Arc<crate::tools::background::Jobs>>,
}

impl Router {
    fn background(&self, request: BackgroundRequest) {
        let jobs = self.jobs.clone();
        let list = || jobs.as_ref().map(|j| j.list()).unwrap_or_default();
        match request {
            BackgroundRequest::List => self.events.emit(AgentEvent::Background(BackgroundAnswer::List(list()))),
            // Stopping waits for the group to end (seconds at most): beside everything else.
            BackgroundRequest::Stop(id) => {
                let events = self.events.clone();
                tokio::spawn(async move {
                    let stopped = match &jobs {
                        Some(jobs) => jobs.stop(id).await,
                        None => Err(format!("there is no background command {id}")),
                    };
                    events.emit(AgentEvent::Background(BackgroundAnswer::Stopped(stopped)));
                });
            }
        }
    }

    async fn run(self, mut commands: mpsc::UnboundedReceiver<UserCommand>) {
        while let Some(command) = commands.recv().await {
            match command {
                UserCommand::Interrupt => self.control.interrupt(),
                UserCommand::Approval { id, decision } => self.approvals.answer(id, decision),
                UserCommand::SetMode(new_mode) => {
                    self.mode.send_replace(new_mode);
                    self.events.emit(AgentEvent::ModeChanged(new_mode));
                    // The worker persists it with the session.
                    let _ = self.work.send(UserCommand::SetMode(new_mode));
                }
                // Quick reads and single-row writes: answered here, so a view opens even mid-turn.
                UserCommand::Library(request) => self.events.emit(AgentEvent::Library(self.library.answer(request))),
                // The hub is shared: a server switched on or off counts from the next request.
                // A server still starting: a second answer follows once it is up or has failed.
                UserCommand::Mcp(request) => {
                    let panel = self.mcp.answer(request);
                    if panel.pending {
                        let (desk, events, message) = (self.mcp.clone(), self.events.clone(), panel.message.clone());
                        tokio::spawn(async move { events.emit(AgentEvent::Mcp(desk.follow_up(message).await)) });
                    }
                    self.events.emit(AgentEvent::Mcp(panel));
                }
                UserCommand::Background(request) => self.background(request),
                // Asking the provider takes a moment: answered beside everything else.
                UserCommand::ListModels => {
                    let (models, events) = (self.models.clone(), self.events.clone());
                    tokio::spawn(async move { events.emit(AgentEvent::Models(models.list().await)) });
                }
                UserCommand::CarryOutPlan { edited } => {
                    self.mode.send_replace(Mode::Edit);
                    self.events.emit(AgentEvent::ModeChanged(Mode::Edit));
                    let _ = self.work.send(UserCommand::CarryOutPlan { edited });
                }
                UserCommand::Shutdown => {
                    self.control.interrupt();
                    let _ = self.work.send(UserCommand::Shutdown);
                    break;
                }
                UserCommand::Submit(prompt) => {
                    if self.control.is_busy() {
                        self.events.emit(AgentEvent::Queued { prompt: prompt.clone() });
                    }
                    let _ = self.work.send(UserCommand::Submit(prompt));
                }
                UserCommand::RunCommand { name, args } => {
                    if self.control.is_busy() {
                        self.events
                            .emit(AgentEvent::Queued { prompt: format!("/{name} {args}").trim_end().to_string() });
                    }
                    let _ = self.work.send(UserCommand::RunCommand { name, args });
                }
                UserCommand::Init => {
                    if self.control.is_busy() {
                        self.events.emit(AgentEvent::Queued { prompt: "/init".to_string() });
                    }
                    let _ = self.work.send(UserCommand::Init);
                }
                UserCommand::Shell { typed, command, into_context } => {
                    if self.control.is_busy() {
                        self.events.emit(AgentEvent::Queued { prompt: typed.clone() });
                    }
                    let _ = self.work.send(UserCommand::Shell { typed, command, into_context });
                }
                other @ (UserCommand::SetModel(_)
                | UserCommand::Compact
                | UserCommand::Settle
                | UserCommand::DescribeContext
                | UserCommand::NewSession
                | UserCommand::ResumeSession(_)
                | UserCommand::PlanRewind { .. }
                | UserCommand::Rewind { .. }
                | UserCommand::Undo
                | UserCommand::WriteReport
                | UserCommand::Export { .. }) => {
                    let _ = self.work.send(other);
                }
            }
        }
    }
}
