//! Delegation: the `task` tool's subagents. A subagent is a [`Worker`] of its own — its own
//! session (stored under the parent's), pipeline, cache watch, background work and files read —
//! sharing the parent's workplace and model slot (or a cheaper model its type names). It runs
//! the same turn loop on its brief, with the tools its type allows and never more than the
//! parent may use: the session's mode (plan at most for a read-only type), the parent's rules
//! and sandbox, and approvals asked in the parent's dialog, labelled with the subagent. The
//! parent gets only its report, capped; its usage is added to the parent's.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::auxiliary::UsageTally;
use crate::agent::background::Background;
use crate::agent::cache_watch::CacheWatch;
use crate::agent::checkpoints::Checkpoints;
use crate::agent::events::{
    AgentEvent, ApprovalRequest, NoticeLevel, SubagentEvent, SubagentOutcome, TurnOutcome, TurnSummary,
};
use crate::agent::extensions::Extensions;
use crate::agent::link::{Emitter, Link};
use crate::agent::model_slot::ModelSlot;
use crate::agent::models::ModelDirectory;
use crate::agent::session_state::SessionState;
use crate::agent::spend::{Spend, add_cost};
use crate::agent::task_list::SessionTaskList;
use crate::agent::toolbox::Toolbox;
use crate::agent::workplace::Workplace;
use crate::config::{Pricing, Redactor};
use crate::conversation::tool_names::TASK;
use crate::conversation::{Role, ToolCall, clip};
use crate::prompt::{AgentType, AgentTypes, ModelChoice};
use crate::store::NewSession;
use crate::tools::{Subagents, TaskRequest, ToolContext, ToolError};

/// The user's request as the parent brief quotes it, at most.
const BRIEF_REQUEST_CHARS: usize = 2_000;

/// A worker's place in delegation.
pub(super) struct Delegation {
    /// 0 for the main agent, 1 for its subagents, …
    depth: u32,
    types: Arc<AgentTypes>,
    /// Subagents running at once, shared by every subagent of the session at every depth.
    slots: Arc<Semaphore>,
    /// A subagent's type and its role text (part of its system prompt); `None` for the main
    /// agent.
    role: Option<(String, String)>,
}

impl Delegation {
    pub(super) fn main(types: Arc<AgentTypes>, max_parallel: usize) -> Delegation {
        Delegation { depth: 0, types, slots: Arc::new(Semaphore::new(max_parallel.max(1))), role: None }
    }

    pub(super) fn types(&self) -> &AgentTypes {
        &self.types
    }
}

impl Worker {
    /// The role and parent brief of a subagent's system prompt.
    pub(super) fn subagent_role(&self) -> Option<&str> {
        self.delegation.role.as_ref().map(|(_, text)| text.as_str())
    }

    /// The protected context's line about who is working.
    pub(super) fn agent_line(&self) -> String {
        match &self.delegation.role {
            None => format!("main agent (depth {})", self.delegation.depth),
            Some((agent_type, _)) => format!(
                "subagent `{agent_type}` (depth {}), working on one job for a parent agent; your last message is your report",
                self.delegation.depth
            ),
        }
    }
}

/// What a `task` call's launcher is made from, lent by the worker while a reply's calls run
/// (the toolbox and the session are lent to the call path, which hands them in).
pub(super) struct Delegator<'w> {
    pub place: &'w Workplace,
    pub model: &'w ModelSlot,
    pub models: &'w ModelDirectory,
    pub spend: &'w Spend,
    pub ext: &'w Extensions,
    pub link: &'w Link,
    pub task_list: &'w SessionTaskList,
    pub delegation: &'w Delegation,
    pub background: &'w Background,
    pub checkpoints: &'w Checkpoints,
}

impl Delegator<'_> {
    /// The context a `task` call runs with: a launcher for one subagent, bound to this call,
    /// with the parent's `tools` as they stand now. `None` for other tools, and past the depth
    /// limit the call says it cannot start one.
    pub(super) fn context(
        &self,
        call: &ToolCall,
        tools: &Toolbox,
        session: &SessionState,
        ctx: &ToolContext,
    ) -> Option<ToolContext> {
        if call.name != TASK {
            return None;
        }
        let config = self.place.config();
        if self.delegation.depth >= config.subagents.max_depth {
            return Some(ToolContext { subagents: None, ..ctx.clone() });
        }
        let launcher = Launcher {
            call_id: call.id.clone(),
            place: self.place.clone(),
            model: self.model.clone(),
            models: self.models.clone(),
            pricing: self.spend.pricing().clone(),
            tools: tools.clone(),
            ext: self.ext.for_subagent(),
            link: self.link.clone(),
            redactor: session.redactor().clone(),
            parent_session: session.id().to_string(),
            request: parent_request(session),
            parent_tasks: self.task_list.clone(),
            depth: self.delegation.depth + 1,
            types: self.delegation.types.clone(),
            slots: self.delegation.slots.clone(),
            tally: self.background.tally(),
            cancel: ctx.cancel.clone(),
            checkpoints: self.checkpoints.for_subagent(),
        };
        Some(ToolContext { subagents: Some(Arc::new(launcher)), ..ctx.clone() })
    }
}

/// The user's request the parent works on, quoted for a subagent's brief.
fn parent_request(session: &SessionState) -> String {
    let request = session
        .pipeline()
        .ledger()
        .entries()
        .iter()
        .rev()
        .find(|e| e.role() == Role::User)
        .map(|e| e.message.text())
        .unwrap_or_default();
    let quoted: String =
        clip(request.trim(), BRIEF_REQUEST_CHARS).lines().map(|l| format!("> {l}\n")).collect::<String>();
    format!("The user's request the parent is working on:\n\n{quoted}\n")
}

/// Everything one subagent is made from, taken from its parent when the `task` call was
/// cleared.
struct Launcher {
    call_id: String,
    place: Workplace,
    model: ModelSlot,
    models: ModelDirectory,
    pricing: Pricing,
    tools: Toolbox,
    ext: Extensions,
    link: Link,
    redactor: Redactor,
    parent_session: String,
    /// The user's request the parent works on, quoted.
    request: String,
    /// The parent's task list, read when the subagent starts: a `todo` call of the same reply
    /// has run by then.
    parent_tasks: SessionTaskList,
    depth: u32,
    types: Arc<AgentTypes>,
    slots: Arc<Semaphore>,
    /// The parent's tally of usage beyond its own requests: a subagent's goes there.
    tally: Arc<Mutex<UsageTally>>,
    /// The parent's turn: Esc stops every subagent with it.
    cancel: CancellationToken,
    /// The parent's checkpoints: what a subagent changes is taken back with the parent's turn.
    checkpoints: Checkpoints,
}

impl Subagents for Launcher {
    fn run(&self, request: TaskRequest) -> BoxFuture<'_, Result<String, ToolError>> {
        Box::pin(self.run_to_report(request))
    }
}

impl Launcher {
    async fn run_to_report(&self, request: TaskRequest) -> Result<String, ToolError> {
        let agent = self
            .types
            .get(&request.agent_type)
            .cloned()
            .ok_or_else(|| ToolError::new(format!("task: there is no agent type {:?}", request.agent_type)))?;
        // Wait for a free slot; an interrupt while waiting starts nothing.
        let _slot = tokio::select! {
            permit = self.slots.acquire() => permit.map_err(|_| ToolError::new("task: subagents are shutting down"))?,
            _ = self.cancel.cancelled() => return Err(ToolError::new("[not run: the user interrupted the turn before this subagent started]")),
        };
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let mut child = self.child(&agent, &request, Emitter::new(events_tx)).map_err(ToolError::new)?;
        let forwarder = tokio::spawn(forward(events_rx, self.link.emitter(), self.call_id.clone(), agent.name.clone()));
        self.link.emit(AgentEvent::Subagent {
            call_id: self.call_id.clone(),
            event: SubagentEvent::Started {
                agent_type: agent.name.clone(),
                description: request.description.clone(),
                session_id: child.session.id().to_string(),
                model: child.model.name().to_string(),
                mode: child.link.mode(),
            },
        });
        let session_id = child.session.id().to_string();
        let summary = child.run_turn(request.prompt.clone(), self.cancel.child_token()).await;
        // Its job is done: a compaction of its context still running would serve nothing.
        child.background.abort_compaction();
        drop(child);
        let _ = forwarder.await;
        {
            let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
            tally.usage.add(&summary.stats.usage);
            tally.requests += summary.stats.all_requests;
            tally.cost_usd = add_cost(tally.cost_usd, summary.stats.cost_usd);
        }
        let limit = self.place.config().subagents.report_max_chars;
        let (outcome, report) = report_of(&summary, limit, &session_id);
        self.link.emit(AgentEvent::Subagent {
            call_id: self.call_id.clone(),
            event: SubagentEvent::Finished {
                outcome,
                report: report.clone(),
                usage: summary.stats.usage,
                requests: summary.stats.all_requests,
            },
        });
        match outcome {
            SubagentOutcome::Reported => Ok(report),
            SubagentOutcome::Failed | SubagentOutcome::Interrupted => Err(ToolError::new(report)),
        }
    }

    /// The subagent's worker: a new session under the parent's, the model its type asks for,
    /// its type's tools within what the parent has, and the parent's rules, sandbox and
    /// dialog.
    fn child(&self, agent: &AgentType, request: &TaskRequest, events: Emitter) -> Result<Worker, String> {
        let config = self.place.config();
        let mut model = self.model.clone();
        let wanted = match &agent.model {
            ModelChoice::Inherit => None,
            ModelChoice::Fast => config.subagents.fast_model.clone(),
            ModelChoice::Named(name) => Some(name.clone()),
        };
        if let Some(name) = wanted.filter(|n| n != model.name())
            && let Some(warning) = model.switch(&name)
        {
            events.notice(NoticeLevel::Warning, warning);
        }
        let registry = self.tools.registry();
        let only: Vec<String> = agent
            .tools
            .iter()
            .filter(|t| registry.get(t).is_some())
            // No grandchildren past the depth limit.
            .filter(|t| *t != TASK || self.depth < config.subagents.max_depth)
            .cloned()
            .collect();
        let label = format!("subagent {} · {}", agent.name, request.description);
        let link = self.link.for_subagent(events.clone(), !agent.may_edit);
        let store = self.place.store().clone();
        let info = store
            .create_child_session(
                self.place.project(),
                NewSession { provider: model.kind(), model: model.name(), mode: link.mode() },
                &self.parent_session,
                &self.call_id,
                &agent.name,
                &request.description,
            )
            .map_err(|e| format!("task: could not store the subagent's session: {e}"))?;
        let session =
            SessionState::load(store.clone(), info, &config.context, self.redactor.clone(), events.clone(), None)
                .map_err(|e| format!("task: could not open the subagent's session: {e}"))?;
        let task_list = SessionTaskList::load(store, session.id(), self.redactor.clone(), events);
        // Built in the order the fields were always built.
        let cache = CacheWatch::new(config.cache.ttl);
        let checkpoints = self.checkpoints.for_subagent();
        let spend = Spend::new(self.pricing.clone());
        let models = self.models.clone();
        let tools = self.tools.for_subagent(only, self.tools.gate().for_subagent(label));
        let ext = self.ext.for_subagent();
        let delegation = Delegation {
            depth: self.depth,
            types: self.types.clone(),
            slots: self.slots.clone(),
            role: Some((agent.name.clone(), String::new())),
        };
        let mut worker = Worker {
            cache,
            place: self.place.clone(),
            session,
            model,
            background: Background::default(),
            tools,
            link,
            checkpoints,
            ext,
            delegation,
            spend,
            task_list,
            models,
            max_turns: Some(config.subagents.max_turns),
            // A subagent counts with the estimate; the server's news reaches the parent.
            local: Default::default(),
            requests: Default::default(),
            keep_warm: Default::default(),
            // Its commands run to their end: a background one would outlive the job it was for.
            jobs: None,
        };
        // What the subagent is told: its job, what the parent works on, and the session's facts
        // as they are for the subagent (its mode, its depth), never the parent's.
        let mut brief =
            format!("The job the parent handed you, in a few words: {}\n\n{}", request.description, self.request);
        let tasks = self.parent_tasks.get();
        if !tasks.is_empty() {
            brief.push_str(&format!("The parent's task list:\n\n{}\n", tasks.render()));
        }
        brief.push_str(&worker.protected_context());
        let role = crate::prompt::subagent_section(agent, &brief, config.subagents.report_max_chars);
        worker.delegation.role = Some((agent.name.clone(), role));
        Ok(worker)
    }
}

/// What the parent gets: the report (capped), or why there is none.
fn report_of(summary: &TurnSummary, limit: usize, session: &str) -> (SubagentOutcome, String) {
    match &summary.outcome {
        TurnOutcome::Completed { text } => {
            let text = text.trim();
            if text.is_empty() {
                return (
                    SubagentOutcome::Reported,
                    format!("(the subagent finished without a report; its session is {session})"),
                );
            }
            if text.chars().count() <= limit {
                return (SubagentOutcome::Reported, text.to_string());
            }
            let cut = clip(text, limit);
            (
                SubagentOutcome::Reported,
                format!("{cut}\n[report cut to {limit} characters; the whole report is in session {session}]"),
            )
        }
        TurnOutcome::Interrupted { .. } => {
            (SubagentOutcome::Interrupted, "[the user interrupted the subagent before it reported]".to_string())
        }
        TurnOutcome::MaxTurns { limit: turns } => (
            SubagentOutcome::Failed,
            format!(
                "the subagent stopped after {turns} model requests without a report ([subagents] max_turns); its work so far is in session {session}"
            ),
        ),
        TurnOutcome::Failed { error } => (SubagentOutcome::Failed, format!("the subagent failed: {error}")),
    }
}

/// A subagent's events, as its parent's front end sees them: its approvals as dialogs of their
/// own (labelled with it), the rest as progress of its `task` call.
async fn forward(mut events: mpsc::UnboundedReceiver<AgentEvent>, parent: Emitter, call_id: String, agent: String) {
    let progress = |event: SubagentEvent| AgentEvent::Subagent { call_id: call_id.clone(), event };
    while let Some(event) = events.recv().await {
        let out = match event {
            // The outermost `task` call is the one the front end shows.
            AgentEvent::ApprovalRequested(request) => {
                AgentEvent::ApprovalRequested(ApprovalRequest { task: Some(call_id.clone()), ..request })
            }
            AgentEvent::ToolStarted { call_id, tool, summary, .. } => {
                progress(SubagentEvent::ToolStarted { call_id, tool, summary })
            }
            AgentEvent::ToolFinished(f) => progress(SubagentEvent::ToolFinished {
                call_id: f.call_id,
                tool: f.tool,
                summary: f.summary,
                is_error: f.is_error,
                not_run: f.not_run,
            }),
            AgentEvent::AssistantMessage(m) if !m.text().trim().is_empty() => {
                progress(SubagentEvent::Text { text: m.text() })
            }
            AgentEvent::Usage { usage, .. } => progress(SubagentEvent::Usage { usage }),
            AgentEvent::Notice { level: level @ (NoticeLevel::Warning | NoticeLevel::Error), text } => {
                AgentEvent::Notice { level, text: format!("subagent {agent}: {text}") }
            }
            // What only its own transcript would show.
            AgentEvent::Notice { .. }
            | AgentEvent::Commands(_)
            | AgentEvent::Mcp(_)
            | AgentEvent::AssistantMessage(_)
            | AgentEvent::SessionReady { .. }
            | AgentEvent::SessionStored(_)
            | AgentEvent::Attached(_)
            | AgentEvent::ModelRefused { .. }
            | AgentEvent::Models(_)
            | AgentEvent::Queued { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::TextDelta(_)
            | AgentEvent::ThinkingDelta(_)
            | AgentEvent::ToolCallStreaming { .. }
            | AgentEvent::Retrying { .. }
            | AgentEvent::Context(_)
            | AgentEvent::ContextStage(_)
            | AgentEvent::Compaction(_)
            | AgentEvent::ContextBreakdown(_)
            | AgentEvent::ReportWritten(_)
            | AgentEvent::Exported(_)
            | AgentEvent::BackgroundRunning(_)
            | AgentEvent::Background(_)
            | AgentEvent::ModeChanged(_)
            | AgentEvent::ModelChanged { .. }
            | AgentEvent::TurnFinished(_)
            | AgentEvent::Settled(_)
            | AgentEvent::Library(_)
            | AgentEvent::RewindPlanned(_)
            | AgentEvent::Rewound(_)
            | AgentEvent::TaskList(_) => continue,
            // A grandchild's progress reaches the front end as it is.
            nested @ AgentEvent::Subagent { .. } => nested,
        };
        parent.emit(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::events::TurnStats;

    fn summary(outcome: TurnOutcome) -> TurnSummary {
        TurnSummary { outcome, stats: TurnStats::default() }
    }

    #[test]
    fn a_long_report_is_cut_and_says_where_the_rest_is() {
        let (outcome, report) = report_of(&summary(TurnOutcome::Completed { text: "word ".repeat(100) }), 50, "abc123");
        assert_eq!(outcome, SubagentOutcome::Reported);
        assert!(report.contains("[report cut to 50 characters; the whole report is in session abc123]"), "{report}");
        assert!(report.chars().count() < 130);
        let (outcome, report) = report_of(&summary(TurnOutcome::MaxTurns { limit: 3 }), 50, "abc123");
        assert_eq!(outcome, SubagentOutcome::Failed);
        assert!(report.contains("after 3 model requests") && report.contains("abc123"));
        let (outcome, _) = report_of(&summary(TurnOutcome::Interrupted { partial: String::new() }), 50, "s");
        assert_eq!(outcome, SubagentOutcome::Interrupted);
    }
}
