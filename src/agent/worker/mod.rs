//! The worker: one agent's parts — where it works, its session, its model, the cache watch,
//! background work, its tools — and the loop that handles queued commands one at a time.

mod attach;
mod commands;
mod compaction;
mod context_view;
mod dispatch;
mod hooks;
mod keep_alive;
mod local;
mod memory;
mod report;
mod rewind;
mod segments;
mod shell;
mod subagent;
mod switch;
mod turn;

pub use turn::INTERRUPTED_MARK;

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use subagent::Delegation;

use super::approvals::{ApprovalDesk, ApprovalGate};
use super::background::Background;
use super::cache_watch::CacheWatch;
use super::checkpoints::{CheckpointSite, Checkpoints};
use super::events::{AgentEvent, NoticeLevel, UserCommand};
use super::extensions::Extensions;
use super::keep_warm::KeepWarm;
use super::library::Library;
use super::link::Link;
use super::model_slot::ModelSlot;
use super::models::ModelDirectory;
use super::request::RequestHead;
use super::request_log::RequestLog;
use super::session_state::SessionState;
use super::setup::AgentSetup;
use super::spend::Spend;
use super::task_list::SessionTaskList;
use super::tool_section::ToolSection;
use super::toolbox::Toolbox;
use super::workplace::Workplace;
use crate::store::{SessionInfo, StoreError};

/// What carries a plan into edit mode: the model is asked to do what it planned — or what the
/// user made of the plan in their editor.
const PLAN_HANDOFF: &str = include_str!("../../../assets/prompts/plan_handoff.md");
const PLAN_HANDOFF_EDITED: &str = include_str!("../../../assets/prompts/plan_handoff_edited.md");

/// A prompt asset as one paragraph per blank-line-separated block (the files wrap for reading).
fn prose(text: &str) -> String {
    text.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n\n")
}

pub(super) struct Worker {
    place: Workplace,
    session: SessionState,
    model: ModelSlot,
    cache: CacheWatch,
    background: Background,
    tools: Toolbox,
    link: Link,
    /// The session's file checkpoints; replaced with the session.
    checkpoints: Checkpoints,
    /// MCP servers, hooks, skills and custom commands.
    ext: Extensions,
    /// Subagents: this worker's depth, the agent types, the running ones' slots, and (for a
    /// subagent) its role.
    delegation: Delegation,
    /// What the session has cost.
    spend: Spend,
    /// The session's task list.
    task_list: SessionTaskList,
    /// The models `/model` may switch to.
    models: ModelDirectory,
    /// Most model requests per prompt.
    max_turns: Option<u32>,
    /// The local server: its news, its tokenizer, its timings.
    local: crate::agent::local_site::LocalSite,
    /// What each request carried, for the session report.
    requests: RequestLog,
    /// The prompt cache kept warm while the user is idle.
    keep_warm: KeepWarm,
    /// The background commands `bash` started: the main agent's (a subagent has none).
    jobs: Option<Arc<crate::tools::background::Jobs>>,
}

impl Worker {
    pub(super) fn new(
        setup: AgentSetup,
        session: SessionInfo,
        link: Link,
        approvals: Arc<ApprovalDesk>,
        models: ModelDirectory,
    ) -> Result<Worker, StoreError> {
        let spend = Spend::new(crate::config::Pricing::from_config(&setup.config));
        let model =
            ModelSlot::new(setup.provider, setup.provider_kind, setup.model, setup.window_override, &setup.config);
        let mut redactor = setup.redactor;
        super::extensions::redact_server_variables(&setup.config, &setup.root, &setup.trust, &mut redactor);
        let session =
            SessionState::load(setup.store.clone(), session, &setup.config.context, redactor, link.emitter(), None)?;
        let task_list =
            SessionTaskList::load(setup.store.clone(), session.id(), session.redactor().clone(), link.emitter());
        let delegation = Delegation::main(setup.agent_types, setup.config.subagents.max_parallel);
        let ext = Extensions::load(&setup.config, &setup.root, &setup.user_dirs, &setup.trust, link.emitter());
        ext.hub.start();
        let section = ToolSection::new(
            setup.registry,
            ext.hub.clone(),
            ext.skills.clone(),
            setup.config.mcp.tool_budget_tokens,
            setup.config.context.chars_per_token,
        );
        let place = Workplace::new(
            setup.store,
            setup.project,
            setup.root,
            setup.cwd,
            setup.config,
            setup.truncations_dir,
            setup.trust.clone(),
        )
        .with_user_dirs(setup.user_dirs);
        let checkpoints = start_checkpoints(&place, session.id(), session.redactor(), &link);
        let running = link.emitter();
        let jobs = crate::tools::background::Jobs::new(
            place.config().tools.bash_background_max_bytes,
            Some(Arc::new(move |n| running.emit(AgentEvent::BackgroundRunning(n)))),
        );
        let mut worker = Worker {
            cache: CacheWatch::new(place.config().cache.ttl),
            place,
            session,
            model,
            background: Background::default(),
            tools: Toolbox::new(
                section,
                ApprovalGate::new(setup.approval, approvals),
                setup.permissions,
                setup.sandbox,
            )
            .with_editor(setup.editor),
            link,
            checkpoints,
            ext,
            delegation,
            spend,
            task_list,
            models,
            max_turns: setup.max_turns,
            local: crate::agent::local_site::LocalSite::new(setup.local_server, setup.tokenizer),
            requests: RequestLog::default(),
            keep_warm: KeepWarm::default(),
            jobs: Some(jobs),
        };
        worker.settle_loaded_session()?;
        Ok(worker)
    }

    pub(super) fn redactor(&self) -> &crate::config::Redactor {
        self.session.redactor()
    }

    pub(super) fn session_info(&self) -> &SessionInfo {
        self.session.info()
    }

    /// Load `info` from the store in place of the session held: what a resume does, and what
    /// a conversation rewind does to the session it rewound.
    fn replace_session(&mut self, info: SessionInfo) -> Result<(), StoreError> {
        let config = self.place.config();
        let session = SessionState::load(
            self.place.store().clone(),
            info,
            &config.context,
            self.session.redactor().clone(),
            self.link.emitter(),
            Some(&self.session),
        )?;
        self.background.abort_compaction();
        self.task_list = SessionTaskList::load(
            self.place.store().clone(),
            session.id(),
            session.redactor().clone(),
            self.link.emitter(),
        );
        self.session = session;
        self.cache = CacheWatch::new(config.cache.ttl);
        self.settle_loaded_session()
    }

    /// A loaded session starts from its last reported usage and, when the cache is cold, with
    /// its pending deduplication applied.
    fn settle_loaded_session(&mut self) -> Result<(), StoreError> {
        self.requests.clear();
        self.keep_warm = KeepWarm::load(&self.place.store().idle_gaps(self.session.id())?);
        self.price_context();
        let per_model = self.place.store().usage_by_model(self.session.id())?;
        self.spend.load(&per_model);
        self.calibrate_from_store(None)?;
        self.dedup_if_cache_is_cold()?;
        self.release_summarised();
        Ok(())
    }

    /// Give the pipeline the prices of the model in use, so every rewrite of what was sent is
    /// weighed against what it saves on this provider (after a load and a `/model` switch).
    pub(super) fn price_context(&mut self) {
        // A local server's own timings, once it has answered, else the catalog's prices.
        let model = self.local.cost_model().unwrap_or_else(|| self.model.cost_model(&self.place.config().cache));
        let in_place = self.model.summarizes_in_place();
        let pipeline = self.session.pipeline_mut();
        pipeline.set_cost_model(model);
        pipeline.set_summary_in_place(in_place);
    }

    /// Start the estimate from the last reported usage, as if that request had just been made.
    /// `head`: the one of the request being prepared, when one is (its counts just made); else
    /// one is assembled for the current mode.
    pub(super) fn calibrate_from_store(&mut self, head: Option<&RequestHead>) -> Result<(), StoreError> {
        let Some(last) = self.place.store().last_request(self.session.id())? else { return Ok(()) };
        let (usage, reply_seq) = (last.usage, last.reply_seq);
        self.cache.record(usage);
        if self.session.pipeline().state().awaiting_usage {
            // A compaction landed after that request (`/compact`, or one finishing while idle):
            // its count is of the history before, and taking it for the one now would show the
            // old size and could start another compaction at once. The estimate stands until
            // the next request is counted.
            return Ok(());
        }
        let overhead = head.map_or_else(|| self.overhead_now(), |head| head.overhead().total());
        let window = self.model.window();
        let pipeline = self.session.pipeline_mut();
        let now = pipeline.raw_tokens(overhead, window);
        let after: u64 = match reply_seq {
            Some(seq) => pipeline
                .ledger()
                .entries()
                .iter()
                .filter(|e| e.seq >= seq && pipeline.state().is_visible(e.seq))
                .map(|e| pipeline.exact_counts().tokens(&e.message).unwrap_or(e.tokens))
                .sum(),
            None => 0,
        };
        // The request carried the system prompt and tools it had then: an MCP server's tools
        // not listed yet now, say. Its count is of those, as the live session's calibration was.
        let then = (now.saturating_sub(after) + last.overhead_tokens.unwrap_or(overhead)).saturating_sub(overhead);
        pipeline.report_usage(usage.prompt_tokens(), then);
        Ok(())
    }

    /// On load, all pending deduplication is applied — unless the provider may still hold the
    /// session's prefix in cache, which rewriting the history would throw away.
    fn dedup_if_cache_is_cold(&mut self) -> Result<(), StoreError> {
        let ttl_secs = self.cache.ttl_secs();
        let warm = self
            .place
            .store()
            .last_request_at(self.session.id())?
            .and_then(|at| chrono::DateTime::parse_from_rfc3339(&at).ok())
            .is_some_and(|at| (chrono::Utc::now() - at.with_timezone(&chrono::Utc)).num_seconds() < ttl_secs);
        if !warm && let Some(report) = self.session.pipeline_mut().apply_all_dedup() {
            tracing::info!(session = %self.session.id(), detail = %report.detail, "deduplicated on load");
            self.session.save_state();
        }
        Ok(())
    }

    pub(super) fn announce_session(&mut self, resumed: bool) {
        let mode = self.link.mode();
        let info = self.session.info();
        if info.mode != mode || info.provider != self.model.kind() || info.model != self.model.name() {
            self.save_session_settings();
        }
        let library = Library::new(self.place.store().clone(), self.place.project());
        let history = self.session.take_history();
        let tool_display = library.tool_display(self.session.id());
        let recap = self.recap(&history, &tool_display);
        self.link.emit(AgentEvent::SessionReady {
            session: self.session.info().clone(),
            resumed,
            history,
            tool_display,
            mode,
            model: self.model.name().to_string(),
            window: self.model.window(),
            recap,
        });
        // Also when empty: a session switched to has its own list, or none.
        self.link.emit(AgentEvent::TaskList(self.task_list.get()));
        let status = self.context_status(self.overhead_now());
        self.link.emit(AgentEvent::Context(status));
        if let Some((level, text)) = self.model.window_notice() {
            self.link.notice(level, text);
        }
        self.link.emit(AgentEvent::Commands(self.ext.command_list()));
        for problem in std::mem::take(&mut self.ext.problems) {
            self.link.notice(NoticeLevel::Warning, problem);
        }
        for note in self.place.trust().notes() {
            self.link.notice(NoticeLevel::Warning, note.clone());
        }
        for warning in &self.delegation.types().warnings {
            self.link.notice(NoticeLevel::Warning, warning.clone());
        }
    }

    /// What the transcript needs besides the messages to show a stored session as it was.
    fn recap(
        &mut self,
        history: &[std::sync::Arc<crate::conversation::Message>],
        displays: &std::collections::HashMap<String, crate::conversation::ToolDisplay>,
    ) -> super::events::HistoryRecap {
        let times = self.session.take_loaded_times();
        let store = self.place.store();
        let id = self.session.id();
        let (usage, compactions) = if times.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            (store.usage_rows(id).unwrap_or_default(), store.compaction_log(id).unwrap_or_default())
        };
        let mut recap = super::recap::recap(
            history,
            &times,
            displays,
            &usage,
            &compactions,
            self.spend.pricing(),
            self.place.config().context.chars_per_token,
            self.place.root(),
        );
        recap.subagents = super::recap::subagents(store, id, history, self.place.root()).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the subagents' sessions could not be read back");
            Default::default()
        });
        recap
    }

    pub(super) async fn run(mut self, mut work: mpsc::UnboundedReceiver<UserCommand>) {
        let source = if self.session.last_seq() > 0 { "resume" } else { "startup" };
        self.session_start_hooks(source).await;
        loop {
            // While the user is idle, a background compaction that finishes lands at once (the
            // status line and `/context` show it); the next request is the first to send it, so
            // landing now breaks no cache that waiting would keep.
            let never = CancellationToken::new();
            // An MCP server whose tools arrive while the user is idle changes what the next
            // request carries: the status line says so at once, as it would after a request.
            let hub = self.ext.hub.clone();
            let tools = hub.generation();
            // While the user is idle with a warm cache, a keep-alive ping may be due.
            let wake = self.keep_alive_wake();
            let due = async move {
                match wake {
                    Some(after) => tokio::time::sleep(after).await,
                    None => std::future::pending().await,
                }
            };
            let command = if self.background.compacting() {
                tokio::select! {
                    command = work.recv() => command,
                    landed = self.background.wait_compaction(&never) => {
                        if let Some((job, result)) = landed {
                            let mode = self.link.mode();
                            let input = self.preflight_input(self.overhead_now(), false);
                            // A failure is logged and shown by `finish_compaction` itself.
                            let _ = self.finish_compaction(job, result, &input, mode);
                        }
                        continue;
                    }
                    () = due => {
                        self.keep_alive_due().await;
                        continue;
                    }
                    () = hub.tools_changed_since(tools) => {
                        let status = self.context_status(self.overhead_now());
                        self.link.emit(AgentEvent::Context(status));
                        continue;
                    }
                }
            } else {
                tokio::select! {
                    command = work.recv() => command,
                    () = due => {
                        self.keep_alive_due().await;
                        continue;
                    }
                    () = hub.tools_changed_since(tools) => {
                        let status = self.context_status(self.overhead_now());
                        self.link.emit(AgentEvent::Context(status));
                        continue;
                    }
                }
            };
            let Some(command) = command else { break };
            if command.is_the_users_turn() {
                self.keep_warm.back(chrono::Utc::now().timestamp());
            }
            match command {
                UserCommand::Submit(prompt) => self.turn(prompt).await,
                UserCommand::CarryOutPlan { edited } => {
                    // The mode travels in the request's tail: switching keeps the cache.
                    self.save_session_settings();
                    let prompt = match edited {
                        Some(plan) => format!("{}\n\n<plan>\n{}\n</plan>", prose(PLAN_HANDOFF_EDITED), plan.trim()),
                        None => prose(PLAN_HANDOFF),
                    };
                    self.turn(prompt).await;
                }
                UserCommand::Shell { typed, command, into_context } => {
                    let cancel = self.link.control().begin();
                    let summary = self.run_shell(typed, command, into_context, cancel).await;
                    self.link.control().end();
                    self.link.emit(AgentEvent::TurnFinished(summary));
                    if into_context {
                        self.update_segments();
                    }
                }
                UserCommand::RunCommand { name, args } => {
                    let cancel = self.link.control().begin();
                    let summary = self.run_custom_command(&name, &args, cancel).await;
                    self.end_turn(summary);
                }
                UserCommand::Compact => {
                    let cancel = self.link.control().begin();
                    let summary = self.compact_by_hand(cancel).await;
                    self.link.control().end();
                    self.link.emit(AgentEvent::TurnFinished(summary));
                }
                UserCommand::Settle => {
                    let cancel = self.link.control().begin();
                    let stats = self.settle(cancel).await;
                    self.link.control().end();
                    self.link.emit(AgentEvent::Settled(stats));
                }
                UserCommand::SetMode(_) => {
                    self.save_session_settings();
                    let status = self.context_status(self.overhead_now());
                    self.link.emit(AgentEvent::Context(status));
                }
                UserCommand::DescribeContext => {
                    let mut head = self.head(self.link.mode());
                    self.count_exactly(&mut head).await;
                    let breakdown = self.describe_context(&head);
                    self.link.emit(AgentEvent::ContextBreakdown(breakdown));
                }
                UserCommand::SetModel(name) => match self.models.check(&name).await {
                    Ok(()) => self.switch_model(&name),
                    Err(refusal) => self.link.emit(AgentEvent::ModelRefused { name, known: refusal.known }),
                },
                UserCommand::NewSession => {
                    self.open_new_session();
                    self.session_start_hooks("clear").await;
                }
                UserCommand::ResumeSession(id) => {
                    self.open_existing_session(&id);
                    self.session_start_hooks("resume").await;
                }
                UserCommand::PlanRewind { user_seq, scope } => {
                    let preview = self.plan_rewind(user_seq, scope);
                    self.link.emit(AgentEvent::RewindPlanned(preview));
                }
                UserCommand::Rewind { user_seq, scope, overwrite } => self.rewind(user_seq, scope, &overwrite).await,
                UserCommand::Undo => self.undo(),
                UserCommand::WriteReport => {
                    let written = self.write_report();
                    self.link.emit(AgentEvent::ReportWritten(written));
                }
                UserCommand::Export { format, path } => {
                    let written = self.write_export(format, path.as_deref());
                    self.link.emit(AgentEvent::Exported(written));
                }
                UserCommand::Init => {
                    let cancel = self.link.control().begin();
                    let summary = self.run_init(cancel).await;
                    self.end_turn(summary);
                }
                UserCommand::Shutdown => break,
                // The router answers these itself; they never reach the worker.
                UserCommand::Interrupt
                | UserCommand::Approval { .. }
                | UserCommand::Library(_)
                | UserCommand::Mcp(_)
                | UserCommand::Background(_)
                | UserCommand::ListModels => {}
            }
        }
        // Let a background compaction finish and commit, so its work is not lost.
        self.finish_compaction_on_exit().await;
    }

    /// One prompt to its answer, then the background work a finished turn starts.
    async fn turn(&mut self, prompt: String) {
        let cancel = self.link.control().begin();
        let summary = self.run_turn(prompt, cancel).await;
        self.end_turn(summary);
    }

    /// A turn (a prompt or a custom command) is over: say so, then start the background work
    /// a finished turn starts.
    fn end_turn(&mut self, summary: super::events::TurnSummary) {
        self.link.control().end();
        if self.tools.gate().is_interactive() {
            self.notify_hooks("cairn finished the turn and is waiting for you".into());
        }
        self.link.emit(AgentEvent::TurnFinished(summary));
        self.update_segments();
        self.roll_up_segments();
        self.keep_warm.idle(chrono::Utc::now().timestamp());
    }

    /// What the router needs to answer `/mcp` by itself.
    pub(super) fn mcp_desk(&self) -> super::mcp_desk::McpDesk {
        super::mcp_desk::McpDesk {
            hub: self.ext.hub.clone(),
            chars_per_token: self.place.config().context.chars_per_token,
            budget_tokens: self.place.config().mcp.tool_budget_tokens,
            startup_timeout_ms: self.place.config().mcp.startup_timeout_ms,
            root: self.place.root().to_path_buf(),
            mcp: self.place.config().mcp.clone(),
            trust: self.place.trust().clone(),
        }
    }

    /// The background commands, for the router to answer `/ps` and `/stop` at once.
    pub(super) fn jobs(&self) -> Option<Arc<crate::tools::background::Jobs>> {
        self.jobs.clone()
    }

    pub(super) fn command_list(&self) -> Vec<super::events::CommandInfo> {
        self.ext.command_list()
    }

    /// Keep the mode and model with the session.
    fn save_session_settings(&mut self) {
        let mode = self.link.mode();
        self.session.save_settings(mode, self.model.kind(), self.model.name());
    }

    fn switch_model(&mut self, name: &str) {
        if let Some(warning) = self.model.switch(name) {
            self.link.notice(NoticeLevel::Warning, warning);
        }
        self.price_context();
        self.cache.expect_break(format!("the model changed to {name}"));
        self.models.set_current(name);
        self.save_session_settings();
        self.link.emit(AgentEvent::ModelChanged { model: self.model.name().to_string(), window: self.model.window() });
        let status = self.context_status(self.overhead_now());
        self.link.emit(AgentEvent::Context(status));
    }

    /// The model for auxiliary calls, recording usage for this session and the next turn's
    /// stats.
    pub(super) fn aux_model(&self, cancel: tokio_util::sync::CancellationToken) -> crate::agent::auxiliary::AuxModel {
        let recorder = crate::agent::auxiliary::UsageRecorder {
            store: self.place.store().clone(),
            session: self.session.id().to_string(),
            tally: self.background.tally(),
            pricing: self.spend.pricing().clone(),
        };
        self.model.auxiliary(cancel, recorder)
    }
}

/// The checkpoints of the session `id` opened in `place`.
fn start_checkpoints(place: &Workplace, id: &str, secrets: &crate::config::Redactor, link: &Link) -> Checkpoints {
    let site = CheckpointSite {
        store: place.store().clone(),
        session: id,
        project: place.project(),
        root: place.root(),
        config: &place.config().checkpoints,
        exclude: place.checkpoint_exclusions(),
        secrets,
    };
    Checkpoints::start(site, link.emitter())
}
