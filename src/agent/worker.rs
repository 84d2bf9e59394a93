//! The worker: owns the session, its history and the model, and handles queued commands one at
//! a time.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ApprovalDecision, NoticeLevel, TurnOutcome, TurnStats, TurnSummary, UserCommand};
use super::runner::AgentSetup;
use crate::config::{Config, ModelInfo, ProviderKind, Redactor, WindowSource, lookup_model};
use crate::conversation::{Block, Message, Mode, Usage};
use crate::llm::{Provider, RetryPolicy};
use crate::store::{ProjectId, SessionInfo, Store, StoreError};
use crate::tools::{ApprovalPolicy, FileTracker, Registry};

pub(super) struct Worker {
    pub(super) store: Arc<Store>,
    pub(super) project: ProjectId,
    pub(super) root: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) config: Config,
    pub(super) provider: Arc<dyn Provider>,
    pub(super) provider_kind: ProviderKind,
    pub(super) model: ModelInfo,
    pub(super) window_override: Option<u64>,
    pub(super) registry: Arc<Registry>,
    pub(super) approval: ApprovalPolicy,
    pub(super) max_turns: Option<u32>,
    pub(super) retry: RetryPolicy,
    pub(super) session: SessionInfo,
    pub(super) history: Vec<Message>,
    pub(super) mode: watch::Receiver<Mode>,
    pub(super) approvals: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>,
    pub(super) events: mpsc::UnboundedSender<AgentEvent>,
    cancel_slot: Arc<Mutex<CancellationToken>>,
    busy: Arc<AtomicBool>,
    pub(super) files: Arc<FileTracker>,
    /// Tools the user approved for the rest of the session (`a` in the dialog).
    pub(super) session_approved: HashSet<String>,
    pub(super) next_approval_id: u64,
    pub(super) last_usage: Option<Usage>,
    /// How many history messages the request behind `last_usage` carried.
    pub(super) usage_covers: usize,
    redactor: Redactor,
    /// Set once a store write failed, so the warning is shown once, not per message.
    store_failed: bool,
}

impl Worker {
    pub(super) fn new(
        setup: AgentSetup,
        session: SessionInfo,
        mode: watch::Receiver<Mode>,
        approvals: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>,
        events: mpsc::UnboundedSender<AgentEvent>,
        cancel_slot: Arc<Mutex<CancellationToken>>,
        busy: Arc<AtomicBool>,
    ) -> Result<Worker, StoreError> {
        let history: Vec<Message> = setup.store.messages(&session.id)?.into_iter().map(|m| m.message).collect();
        // A resumed session's last usage covered everything but the final answer.
        let history_len = history.len().saturating_sub(1);
        let last_usage = setup.store.last_turn_usage(&session.id)?;
        let retry = RetryPolicy::from_config(&setup.config.retry);
        Ok(Worker {
            store: setup.store,
            project: setup.project,
            root: setup.root,
            cwd: setup.cwd,
            config: setup.config,
            provider: setup.provider,
            provider_kind: setup.provider_kind,
            model: setup.model,
            window_override: setup.window_override,
            registry: setup.registry,
            approval: setup.approval,
            max_turns: setup.max_turns,
            retry,
            session,
            history,
            mode,
            approvals,
            events,
            cancel_slot,
            busy,
            files: Arc::new(FileTracker::default()),
            session_approved: HashSet::new(),
            next_approval_id: 1,
            usage_covers: if last_usage.is_some() { history_len } else { 0 },
            last_usage,
            redactor: setup.redactor,
            store_failed: false,
        })
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        // A front end that went away is not an error for the agent.
        let _ = self.events.send(event);
    }

    pub(super) fn notice(&self, level: NoticeLevel, text: impl Into<String>) {
        self.emit(AgentEvent::Notice { level, text: text.into() });
    }

    pub(super) fn current_mode(&self) -> Mode {
        *self.mode.borrow()
    }

    pub(super) fn announce_session(&mut self, resumed: bool) {
        let mode = self.current_mode();
        if self.session.mode != mode.as_str() || self.session.model != self.model.name {
            self.persist_session_settings(mode);
        }
        self.emit(AgentEvent::SessionReady {
            session: self.session.clone(),
            resumed,
            history: self.history.clone(),
            mode,
            model: self.model.name.clone(),
            window: self.model.context_window,
        });
        self.emit(AgentEvent::Context(self.context_status()));
        if self.model.window_source == WindowSource::Assumed {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "the context window of {} is unknown; assuming {} tokens. Set --context-window or [models.\"{}\"] context_window in config.toml.",
                    self.model.name, self.model.context_window, self.model.name
                ),
            );
        }
    }

    pub(super) async fn run(mut self, mut work: mpsc::UnboundedReceiver<UserCommand>) {
        while let Some(command) = work.recv().await {
            match command {
                UserCommand::Submit(prompt) => {
                    let cancel = self.begin_work();
                    let summary = self.run_turn(prompt, cancel).await;
                    self.end_work();
                    self.emit(AgentEvent::TurnFinished(summary));
                }
                UserCommand::SetMode(mode) => {
                    self.persist_session_settings(mode);
                    self.emit(AgentEvent::Context(self.context_status()));
                }
                UserCommand::DescribeContext => self.emit(AgentEvent::ContextBreakdown(self.describe_context())),
                UserCommand::SetModel(name) => self.switch_model(&name),
                UserCommand::Compact => {
                    let summary = TurnSummary {
                        outcome: TurnOutcome::Failed {
                            error: "/compact: compaction is not available in this build".into(),
                        },
                        stats: TurnStats::default(),
                    };
                    self.emit(AgentEvent::TurnFinished(summary));
                }
                UserCommand::NewSession => self.open_new_session(),
                UserCommand::ResumeSession(id) => self.open_existing_session(&id),
                UserCommand::Shutdown => break,
                // The router answers these itself; they never reach the worker.
                UserCommand::Interrupt | UserCommand::Approval { .. } => {}
            }
        }
    }

    /// A fresh cancellation token that Interrupt fires, and the busy flag that makes new
    /// prompts report as queued.
    fn begin_work(&mut self) -> CancellationToken {
        let cancel = CancellationToken::new();
        *self.cancel_slot.lock().unwrap_or_else(|p| p.into_inner()) = cancel.clone();
        self.busy.store(true, Ordering::SeqCst);
        cancel
    }

    fn end_work(&mut self) {
        self.busy.store(false, Ordering::SeqCst);
    }

    fn persist_session_settings(&mut self, mode: Mode) {
        let result = self.store.set_session_mode(&self.session.id, mode.as_str()).and_then(|()| {
            self.store.set_session_model(&self.session.id, self.provider_kind.as_str(), &self.model.name)
        });
        match result {
            Ok(()) => {
                self.session.mode = mode.as_str().to_string();
                self.session.model = self.model.name.clone();
            }
            Err(e) => self.store_error(&e),
        }
    }

    fn switch_model(&mut self, name: &str) {
        let mut info = lookup_model(name, &self.config.models);
        if let Some(w) = self.window_override {
            info.context_window = w;
            info.window_source = WindowSource::Flag;
        }
        self.model = info;
        self.persist_session_settings(self.current_mode());
        self.emit(AgentEvent::ModelChanged { model: self.model.name.clone(), window: self.model.context_window });
        self.emit(AgentEvent::Context(self.context_status()));
    }

    fn open_new_session(&mut self) {
        let mode = self.current_mode();
        let created = self.store.create_session(
            self.project,
            crate::store::NewSession {
                provider: self.provider_kind.as_str(),
                model: &self.model.name,
                mode: mode.as_str(),
            },
        );
        match created {
            Ok(session) => self.switch_to(session, Vec::new(), false),
            Err(e) => self.notice(NoticeLevel::Error, format!("could not start a new session: {e}")),
        }
    }

    fn open_existing_session(&mut self, id: &str) {
        let loaded = self
            .store
            .resolve_session(self.project, id)
            .and_then(|s| Ok((self.store.messages(&s.id)?, self.store.last_turn_usage(&s.id)?, s)));
        match loaded {
            Ok((messages, usage, session)) => {
                self.usage_covers = messages.len().saturating_sub(1);
                self.last_usage = usage;
                self.switch_to(session, messages.into_iter().map(|m| m.message).collect(), true)
            }
            Err(e) => self.notice(NoticeLevel::Error, e.to_string()),
        }
    }

    fn switch_to(&mut self, session: SessionInfo, history: Vec<Message>, resumed: bool) {
        self.session = session;
        self.history = history;
        self.files = Arc::new(FileTracker::default());
        self.session_approved.clear();
        if !resumed {
            self.last_usage = None;
            self.usage_covers = 0;
        }
        self.announce_session(resumed);
    }

    /// Append to history and commit, with key values redacted (the sent view is built from
    /// this history, so what is stored and what is sent stay the same). A failed commit is
    /// reported once and the session goes on in memory: losing the ability to save is bad,
    /// losing the user's turn is worse.
    pub(super) fn persist(&mut self, mut message: Message, record: Option<crate::store::ToolRecord>) -> Option<i64> {
        self.redact_message(&mut message);
        let record = record.map(|mut r| {
            self.redactor.redact_in_place(&mut r.arguments);
            self.redactor.redact_in_place(&mut r.output);
            if let Some(diff) = &mut r.diff {
                self.redactor.redact_in_place(diff);
            }
            r
        });
        let stored = match &record {
            Some(r) => self.store.append_tool_message(&self.session.id, &message, r),
            None => self.store.append_message(&self.session.id, &message),
        };
        self.history.push(message);
        match stored {
            Ok(s) => Some(s.id),
            Err(e) => {
                self.store_error(&e);
                None
            }
        }
    }

    fn redact_message(&self, message: &mut Message) {
        for block in &mut message.content {
            match block {
                Block::Text { text } => self.redactor.redact_in_place(text),
                Block::ToolCall(call) => self.redactor.redact_in_place(&mut call.arguments),
                Block::ToolResult(result) => self.redactor.redact_in_place(&mut result.content),
            }
        }
    }

    pub(super) fn store_error(&mut self, e: &StoreError) {
        tracing::error!(error = %e, "store write failed");
        if !self.store_failed {
            self.store_failed = true;
            self.notice(
                NoticeLevel::Error,
                format!("could not save to the database ({e}); the session continues but may not be resumable"),
            );
        }
    }
}
