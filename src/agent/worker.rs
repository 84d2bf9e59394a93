//! The worker: owns the session, its context pipeline and the model, and handles queued
//! commands one at a time.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::aux::{AuxModel, UsageRecorder, UsageTally};
use super::compaction::InFlight;
use super::events::{AgentEvent, ApprovalDecision, NoticeLevel, UserCommand};
use super::runner::AgentSetup;
use crate::config::{Config, ModelInfo, ProviderKind, Redactor, WindowSource, lookup_model};
use crate::context::{ContextState, Pipeline};
use crate::conversation::{Block, Message, Mode, Usage};
use crate::llm::ServedWindow;
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
    /// The stored history and everything that turns it into the sent view.
    pub(super) pipeline: Pipeline,
    /// The seq the next stored message gets if the store cannot give one.
    pub(super) last_seq: i64,
    pub(super) mode: watch::Receiver<Mode>,
    pub(super) approvals: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>,
    pub(super) events: mpsc::UnboundedSender<AgentEvent>,
    cancel_slot: Arc<Mutex<CancellationToken>>,
    busy: Arc<AtomicBool>,
    pub(super) files: Arc<FileTracker>,
    /// Tools the user approved for the rest of the session (`a` in the dialog).
    pub(super) session_approved: HashSet<String>,
    pub(super) next_approval_id: u64,
    /// Usage of the last agent request, for the cache figure.
    pub(super) last_usage: Option<Usage>,
    /// The provider has reported cache reads or writes in this session: until it does, there
    /// is no cache rate to show (local servers never will).
    pub(super) cache_seen: bool,
    /// A compaction running in the background.
    pub(super) compaction: Option<InFlight>,
    /// Cache-break analytics over this session's requests.
    pub(super) cache: crate::llm::CacheTracker,
    /// What cairn changed since the last request that will cost cache reads, named.
    pub(super) expected_breaks: Vec<String>,
    /// The instruction files as the last request carried them.
    pub(super) instructions_fingerprint: Option<u64>,
    /// Memory extraction after a compaction, running in the background.
    pub(super) extraction: Option<tokio::task::JoinHandle<()>>,
    /// Segment summaries and roll-ups, running in the background.
    pub(super) segmenting: Option<tokio::task::JoinHandle<()>>,
    /// Usage of auxiliary calls (compaction) not yet counted in a turn's stats.
    pub(super) aux_usage: Arc<Mutex<UsageTally>>,
    pub(super) truncations_dir: PathBuf,
    pub(super) redactor: Redactor,
    /// Set once a store write failed, so the warning is shown once, not per message.
    store_failed: bool,
    /// A store write failed during this turn: the turn fails with it (nothing is lost quietly).
    pub(super) store_failure: Option<String>,
    /// This process's claim on the session: a second cairn opening it is refused.
    session_lock: Option<crate::store::SessionLock>,
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
        let retry = RetryPolicy::from_config(&setup.config.retry);
        let mut worker = Worker {
            pipeline: Pipeline::new(setup.config.context.clone()),
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
            session: session.clone(),
            last_seq: 0,
            mode,
            approvals,
            events,
            cancel_slot,
            busy,
            files: Arc::new(FileTracker::default()),
            session_approved: HashSet::new(),
            next_approval_id: 1,
            last_usage: None,
            cache_seen: false,
            compaction: None,
            cache: Default::default(),
            expected_breaks: Vec::new(),
            instructions_fingerprint: None,
            extraction: None,
            segmenting: None,
            aux_usage: Arc::default(),
            // Canonical, so paths the tools resolve compare equal; created so it can be.
            truncations_dir: {
                let _ = std::fs::create_dir_all(&setup.truncations_dir);
                setup.truncations_dir.canonicalize().unwrap_or(setup.truncations_dir)
            },
            redactor: setup.redactor,
            store_failed: false,
            store_failure: None,
            session_lock: None,
        };
        worker.load_session(session)?;
        Ok(worker)
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

    /// Every stored message of the session, for front ends to render.
    pub(super) fn history(&self) -> Vec<Arc<Message>> {
        self.pipeline.ledger().entries().iter().map(|e| e.message.clone()).collect()
    }

    /// Read a session's messages and context state into a fresh pipeline.
    fn load_session(&mut self, session: SessionInfo) -> Result<(), StoreError> {
        if let Some(running) = self.compaction.take() {
            running.abort();
        }
        if self.session_lock.as_ref().is_none_or(|held| held.session() != session.id) {
            self.session_lock = Some(self.store.lock_session(&session.id)?);
        }
        let stored = self.store.messages(&session.id)?;
        self.last_seq = stored.last().map(|m| m.seq).unwrap_or(0);
        let state = match self.store.context_state(&session.id)? {
            Some(json) => serde_json::from_str::<ContextState>(&json).unwrap_or_else(|e| {
                tracing::error!(error = %e, session = %session.id, "unreadable context state; rebuilding from the history");
                ContextState::default()
            }),
            None => ContextState::default(),
        };
        self.pipeline =
            Pipeline::restore(self.config.context.clone(), state, stored.into_iter().map(|m| (m.seq, m.message)));
        self.session = session;
        self.cache = Default::default();
        self.expected_breaks.clear();
        self.instructions_fingerprint = None;
        self.files = Arc::new(FileTracker::default());
        self.session_approved.clear();
        self.last_usage = None;
        self.cache_seen = false;
        self.calibrate_from_store()?;
        self.dedup_if_cache_is_cold()?;
        Ok(())
    }

    /// Start the estimate from the last reported usage, as if that request had just been made.
    fn calibrate_from_store(&mut self) -> Result<(), StoreError> {
        let Some((usage, reply_seq)) = self.store.last_turn_usage(&self.session.id)? else { return Ok(()) };
        self.last_usage = Some(usage);
        self.cache_seen = usage.cache_read_input_tokens + usage.cache_creation_input_tokens > 0;
        let overhead = self.overhead_tokens(self.current_mode());
        let window = self.model.context_window;
        let now = self.pipeline.raw_tokens(overhead, window);
        let after: u64 = match reply_seq {
            Some(seq) => self
                .pipeline
                .ledger()
                .entries()
                .iter()
                .filter(|e| e.seq >= seq && self.pipeline.state().is_visible(e.seq))
                .map(|e| e.tokens)
                .sum(),
            None => 0,
        };
        self.pipeline.report_usage(usage.prompt_tokens(), now.saturating_sub(after));
        Ok(())
    }

    /// On load, all pending deduplication is applied — unless the provider may still hold the
    /// session's prefix in cache, which rewriting the history would throw away.
    fn dedup_if_cache_is_cold(&mut self) -> Result<(), StoreError> {
        let ttl_secs = match self.config.cache.ttl {
            crate::config::CacheTtl::FiveMinutes => 300,
            crate::config::CacheTtl::OneHour => 3_600,
        };
        let warm = self
            .store
            .last_request_at(&self.session.id)?
            .and_then(|at| chrono::DateTime::parse_from_rfc3339(&at).ok())
            .is_some_and(|at| (chrono::Utc::now() - at.with_timezone(&chrono::Utc)).num_seconds() < ttl_secs);
        if !warm && let Some(report) = self.pipeline.apply_all_dedup() {
            tracing::info!(session = %self.session.id, detail = %report.detail, "deduplicated on load");
            self.save_state();
        }
        Ok(())
    }

    pub(super) fn announce_session(&mut self, resumed: bool) {
        let mode = self.current_mode();
        if self.session.mode != mode.as_str() || self.session.model != self.model.name {
            self.persist_session_settings(mode);
        }
        self.emit(AgentEvent::SessionReady {
            session: self.session.clone(),
            resumed,
            history: self.history(),
            mode,
            model: self.model.name.clone(),
            window: self.model.context_window,
        });
        {
            let status = self.context_status();
            self.emit(AgentEvent::Context(status));
        }
        match self.model.window_source {
            WindowSource::Assumed => self.notice(
                NoticeLevel::Warning,
                format!(
                    "the context window of {} is unknown; assuming {} tokens. Set --context-window or [models.\"{}\"] context_window in config.toml.",
                    self.model.name, self.model.context_window, self.model.name
                ),
            ),
            WindowSource::AssumedUntilLoaded => self.notice(
                NoticeLevel::Info,
                format!(
                    "Ollama has not loaded {} yet; assuming a {}-token window until it reports its own after the first request.",
                    self.model.name, self.model.context_window
                ),
            ),
            WindowSource::Flag | WindowSource::Config | WindowSource::Catalog | WindowSource::Server => {}
        }
    }

    /// Ollama decides a model's window when it loads the model, at the first request: ask then,
    /// once, and budget for what it says. A window smaller than assumed is worth a warning,
    /// because Ollama silently drops the start of a prompt that does not fit.
    pub(super) async fn learn_served_window(&mut self) {
        if self.model.window_source != WindowSource::AssumedUntilLoaded {
            return;
        }
        let assumed = self.model.context_window;
        let ServedWindow::Reported(window) = self.provider.served_window(&self.model.name).await else {
            self.model.window_source = WindowSource::Assumed;
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "Ollama did not report the window of {}; still assuming {assumed} tokens. Set --context-window to what the server runs (`ollama ps` shows it).",
                    self.model.name
                ),
            );
            return;
        };
        self.model.context_window = window;
        self.model.window_source = WindowSource::Server;
        tracing::info!(model = %self.model.name, window, assumed, "the server reported the model's window");
        if window < assumed {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "Ollama runs {} with a {window}-token window, not the {assumed} assumed; cairn now budgets for {window}. For more room, restart Ollama with OLLAMA_CONTEXT_LENGTH set higher.",
                    self.model.name
                ),
            );
        } else {
            self.notice(
                NoticeLevel::Info,
                format!("Ollama runs {} with a {window}-token window; cairn now budgets for it.", self.model.name),
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
                    self.update_segments();
                    self.summarize_hidden_segments();
                }
                UserCommand::Compact => {
                    let cancel = self.begin_work();
                    let summary = self.compact_by_hand(cancel).await;
                    self.end_work();
                    self.emit(AgentEvent::TurnFinished(summary));
                }
                UserCommand::SetMode(mode) => {
                    self.expect_cache_break(format!("the mode changed to {mode}"));
                    self.persist_session_settings(mode);
                    {
                        let status = self.context_status();
                        self.emit(AgentEvent::Context(status));
                    }
                }
                UserCommand::DescribeContext => {
                    let breakdown = self.describe_context();
                    self.emit(AgentEvent::ContextBreakdown(breakdown));
                }
                UserCommand::SetModel(name) => self.switch_model(&name),
                UserCommand::NewSession => self.open_new_session(),
                UserCommand::ResumeSession(id) => self.open_existing_session(&id),
                UserCommand::Shutdown => break,
                // The router answers these itself; they never reach the worker.
                UserCommand::Interrupt | UserCommand::Approval { .. } => {}
            }
        }
        // Let a background compaction finish and commit, so its work is not lost; the same
        // for memories being extracted.
        self.finish_compaction_on_exit().await;
        if let Some(extraction) = self.extraction.take() {
            let _ = extraction.await;
        }
        if let Some(segmenting) = self.segmenting.take() {
            let _ = segmenting.await;
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
        if info.window_source == WindowSource::Assumed {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "{name} is not a model cairn knows; assuming a {}-token window. Check the name, or set [models.\"{name}\"] context_window in config.toml.",
                    info.context_window
                ),
            );
        }
        self.model = info;
        self.expect_cache_break(format!("the model changed to {name}"));
        self.persist_session_settings(self.current_mode());
        self.emit(AgentEvent::ModelChanged { model: self.model.name.clone(), window: self.model.context_window });
        {
            let status = self.context_status();
            self.emit(AgentEvent::Context(status));
        }
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
        match created.and_then(|session| self.load_session(session)) {
            Ok(()) => self.announce_session(false),
            Err(e) => self.notice(NoticeLevel::Error, format!("could not start a new session: {e}")),
        }
    }

    fn open_existing_session(&mut self, id: &str) {
        match self.store.resolve_session(self.project, id).and_then(|s| self.load_session(s)) {
            Ok(()) => self.announce_session(true),
            Err(e) => self.notice(NoticeLevel::Error, e.to_string()),
        }
    }

    /// The model for auxiliary calls (`[compaction] model`, else the main one), recording
    /// usage for this session.
    pub(super) fn aux_model(&self, cancel: CancellationToken) -> AuxModel {
        let model = self.config.compaction.model.clone().unwrap_or_else(|| self.model.name.clone());
        let window = match (&self.config.compaction.model, self.config.compaction.context_window) {
            (_, Some(w)) => w,
            (None, None) => self.model.context_window,
            (Some(m), None) => lookup_model(m, &self.config.models).context_window,
        };
        AuxModel {
            provider: self.provider.clone(),
            model,
            window,
            retry: self.retry.clone(),
            cancel,
            recorder: Some(UsageRecorder {
                store: self.store.clone(),
                session: self.session.id.clone(),
                tally: self.aux_usage.clone(),
            }),
        }
    }

    /// Commit a message with key values redacted, then hand it to the pipeline (so what is
    /// stored and what is sent stay the same). A failed commit is reported once and the session
    /// goes on in memory: losing the ability to save is bad, losing the user's turn is worse.
    /// Returns the stored row id.
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
        let (seq, id) = match stored {
            Ok(s) => (s.seq, Some(s.id)),
            Err(e) => {
                self.store_error(&e);
                (self.last_seq + 1, None)
            }
        };
        self.last_seq = seq;
        self.pipeline.append(seq, message);
        id
    }

    /// Persist the context state after a stage changed it.
    pub(super) fn save_state(&mut self) {
        let json = match serde_json::to_string(self.pipeline.state()) {
            Ok(json) => json,
            Err(e) => {
                tracing::error!(error = %e, "cannot encode the context state");
                return;
            }
        };
        if let Err(e) = self.store.save_context_state(&self.session.id, &json) {
            self.store_error(&e);
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

    /// Note a change cairn made that will cost cache reads on the next request.
    pub(super) fn expect_cache_break(&mut self, reason: String) {
        if !self.expected_breaks.contains(&reason) {
            self.expected_breaks.push(reason);
        }
    }

    pub(super) fn store_error(&mut self, e: &StoreError) {
        tracing::error!(error = %e, "store write failed");
        self.store_failure.get_or_insert_with(|| e.to_string());
        if !self.store_failed {
            self.store_failed = true;
            self.notice(
                NoticeLevel::Error,
                format!("could not save to the database ({e}); the session continues but may not be resumable"),
            );
        }
    }
}
