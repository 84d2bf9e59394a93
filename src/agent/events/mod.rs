//! What goes into the agent (`UserCommand`) and what comes out (`AgentEvent`). Front ends only
//! send the one and render the other.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use super::library::{LibraryAnswer, LibraryError, LibraryRequest};
use super::mcp_desk::{McpPanel, McpRequest};
use super::rewind::{RewindOutcome, RewindPreview, RewindScope};
use crate::checkpoint::Overwrite;
use crate::context::{BudgetLevel, ContextBudget};
use crate::conversation::{Message, Mode, Usage};
use crate::store::{SessionInfo, ToolDisplay};

/// A request from the user.
#[derive(Clone, Debug, PartialEq)]
pub enum UserCommand {
    /// A prompt. Queued when a turn is running.
    Submit(String),
    /// `!cmd` (kept out of the context) or `!!cmd` (added to it): the user runs a shell command
    /// in the project. Queued like a prompt; `typed` is the line as entered.
    Shell {
        typed: String,
        command: String,
        into_context: bool,
    },
    /// The answer to an [`AgentEvent::ApprovalRequested`].
    Approval {
        id: u64,
        decision: ApprovalDecision,
    },
    /// Stop the running turn; the partial answer is kept and marked.
    Interrupt,
    /// Takes effect at once, even mid-turn: the next tool call is judged by the new mode.
    SetMode(Mode),
    /// Switch to a model the catalog or the provider knows; any other name is refused with
    /// the list ([`AgentEvent::ModelRefused`]).
    SetModel(String),
    /// The models to choose from (`/model` alone): answered with [`AgentEvent::Models`].
    ListModels,
    /// After a plan-mode turn: switch to edit mode and carry the plan out — the one above, or
    /// this text when the user edited it first.
    CarryOutPlan {
        edited: Option<String>,
    },
    /// Compact the conversation now (`/compact`).
    Compact,
    /// Let the background work of the turns so far land — a running compaction applied, memory
    /// extraction and segment summaries finished — and report what it added: answered with
    /// [`AgentEvent::Settled`]. Headless sends it before printing its result, so the result
    /// counts every call the run made.
    Settle,
    /// Report what the model sees, part by part (`/context`): answered with
    /// [`AgentEvent::ContextBreakdown`].
    DescribeContext,
    /// Start a fresh session in the same project (`/new`).
    NewSession,
    /// Switch to another session of the project (`/resume ID`).
    ResumeSession(String),
    /// List or change the project's sessions and memories; answered at once, even mid-turn,
    /// with [`AgentEvent::Library`].
    Library(LibraryRequest),
    /// A custom command or skill, `/NAME ARGS`: expanded and run as a prompt (queued like one).
    RunCommand {
        name: String,
        args: String,
    },
    /// `/mcp`: show or change the MCP servers; answered at once with [`AgentEvent::Mcp`].
    Mcp(McpRequest),
    /// What rewinding to before the turn opened by the prompt at `user_seq` would do (its
    /// conflicts), answered with [`AgentEvent::RewindPlanned`].
    PlanRewind {
        user_seq: i64,
        scope: RewindScope,
    },
    /// `/rewind`: take back that turn and every later one; answered with
    /// [`AgentEvent::Rewound`] (after [`AgentEvent::SessionReady`] when the conversation was
    /// rewound).
    Rewind {
        user_seq: i64,
        scope: RewindScope,
        overwrite: Overwrite,
    },
    /// `/undo`: take back the file changes of the latest turn that made some.
    Undo,
    Shutdown,
}

/// The user's answer in the approval dialog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// This call only (`y`).
    Approve,
    /// This call, and for the rest of the session the rule the dialog showed (`a`): the exact
    /// one, or its prefix when the user switched the dialog to it (`prefix`). Never every call
    /// of the tool.
    ApproveForSession {
        prefix: bool,
    },
    /// The same rule, written to `.cairn/settings.local.toml` for every later session (`p`).
    ApproveForProject {
        prefix: bool,
    },
    Deny {
        reason: Option<String>,
    },
}

/// What a dialog asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalKind {
    /// May this call run?
    Call,
    /// The command ran in the OS sandbox and most likely failed because of it (`why`): may it
    /// run again outside the sandbox?
    OutsideSandbox { why: String },
}

/// A tool call waiting for the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApprovalRequest {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    /// One line: the path or the command.
    pub summary: String,
    /// The call's arguments as the model wrote them (a multi-line command, the new content).
    pub arguments: String,
    /// Why approval is needed: "creates notes.txt", "runs a command", "reads outside the
    /// project: …", "`git push`: the rule `ask bash(git push *)` asks for it".
    pub reason: String,
    /// Unified diff of a write or edit.
    pub diff: Option<String>,
    /// What left the call to the user, as the approval line names it: `mode: edit`,
    /// `rule: ask bash(git push *) (project, …)`, `unparsable command`.
    pub asked_by: String,
    /// The rules `a` (session) and `p` (project) would add for exactly this call. Empty when
    /// nothing can be remembered: then only once (`y`) or no (`n`) is offered.
    pub exact: Vec<String>,
    /// The broader rules the dialog can switch to before `a` or `p` (`git push *`, `src/`);
    /// empty when none is offered.
    pub prefix: Vec<String>,
    pub kind: ApprovalKind,
    /// The subagent whose call this is (`subagent explore · find the parser`); `None` for the
    /// main agent.
    pub agent: Option<String>,
    /// The main agent's `task` call that started the subagent asking, so the front end can show
    /// which of its subagents waits.
    pub task: Option<String>,
}

/// The context pipeline's counters and the budget figures, as headless JSON prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContextReport {
    pub window: u64,
    pub last_request_tokens: u64,
    pub truncations: u64,
    pub dedup_replacements: u64,
    pub pruned_results: u64,
    pub compactions: u64,
    pub trimmed_messages: u64,
    pub compaction_failures: u64,
}

/// The figures of the status line's context bar: one number, shared with `/context`, the
/// thresholds and headless JSON; and what the session has cost so far.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ContextStatus {
    /// Tokens the next request is estimated to carry (calibrated on the provider's usage).
    pub tokens: u64,
    pub window: u64,
    pub level: BudgetLevel,
    /// A compaction is running in the background.
    pub compacting: bool,
    /// Share of the last request's prompt read from cache, when the provider reported it.
    pub cache_hit_rate: Option<f64>,
    /// Dollars the session has cost at the catalog's prices; `None` when no request had a
    /// price (local models show tokens only).
    pub cost_usd: Option<f64>,
}

impl ContextStatus {
    pub fn percent(&self) -> u64 {
        crate::conversation::percent_of(self.tokens, self.window)
    }
}

/// One part of what the model sees, for the `/context` view; the parts add up to the total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextPart {
    /// "system prompt", "tools", "memories", "summary", "messages", …
    pub name: String,
    pub tokens: u64,
}

/// Cache figures for the `/context` view.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CacheReport {
    /// Share of prompt tokens read from cache over the session's agent requests.
    pub session_hit_rate: Option<f64>,
    pub last_request: Option<Usage>,
    /// Cache breaks seen, newest last, each explained in one line.
    pub breaks: Vec<String>,
}

/// One segment of the session's history, for the `/context` tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentInfo {
    pub level: u32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub tokens: u64,
    pub summarized: bool,
    /// Still sent verbatim (not compacted or trimmed away).
    pub shown: bool,
}

/// The answer to [`UserCommand::DescribeContext`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContextBreakdown {
    pub parts: Vec<ContextPart>,
    pub total: u64,
    pub budget: ContextBudget,
    pub level: BudgetLevel,
    pub counters: ContextReport,
    pub cache: CacheReport,
    /// The segment tree, highest level first.
    pub segments: Vec<SegmentInfo>,
    pub cost: CostReport,
    /// The instruction files (AGENTS.md, CLAUDE.md) in the prompt, and those left out.
    pub instruction_files: InstructionFilesReport,
}

/// Which instruction files the prompt holds, and which exist but were skipped, with why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InstructionFilesReport {
    /// Paths relative to the project root.
    pub read: Vec<String>,
    pub skipped: Vec<SkippedFile>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    pub path: String,
    /// Says why, in words: "links outside the project (to …); only files inside it are read".
    pub reason: String,
}

impl InstructionFilesReport {
    pub fn of(scan: &crate::prompt::InstructionScan) -> InstructionFilesReport {
        InstructionFilesReport {
            read: scan.files.iter().map(|f| f.path.clone()).collect(),
            skipped: scan
                .skipped
                .iter()
                .map(|s| SkippedFile { path: s.path.clone(), reason: s.reason.to_string() })
                .collect(),
        }
    }
}

/// Money, for `/context`: `None` where no price is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CostReport {
    pub session_usd: Option<f64>,
    pub last_request_usd: Option<f64>,
}

/// Why a compaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The auto-compact threshold was crossed.
    Auto,
    /// `/compact`.
    Manual,
    /// The provider said the request was too long.
    Overflow,
}

/// Progress of a compaction, for the transcript and the spinner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum CompactionEvent {
    Started {
        trigger: CompactionTrigger,
        tokens_before: u64,
    },
    /// A chunk of a transcript too big for one summariser call is done.
    Progress {
        chunk: u32,
        chunks: u32,
    },
    Finished {
        trigger: CompactionTrigger,
        tokens_before: u64,
        tokens_after: u64,
        summary_tokens: u64,
    },
    Failed {
        trigger: CompactionTrigger,
        error: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TurnOutcome {
    Completed { text: String },
    Interrupted { partial: String },
    MaxTurns { limit: u32 },
    Failed { error: String },
}

impl TurnOutcome {
    pub fn is_error(&self) -> bool {
        match self {
            TurnOutcome::Completed { .. } => false,
            TurnOutcome::Interrupted { .. } | TurnOutcome::MaxTurns { .. } | TurnOutcome::Failed { .. } => true,
        }
    }

    /// The text a headless run reports as its result.
    pub fn result_text(&self) -> String {
        match self {
            TurnOutcome::Completed { text } => text.clone(),
            TurnOutcome::Interrupted { partial } => format!("{partial}\n[interrupted]").trim_start().to_string(),
            TurnOutcome::MaxTurns { limit } => {
                format!("stopped after {limit} model requests (--max-turns {limit}); continue with --resume")
            }
            TurnOutcome::Failed { error } => error.clone(),
        }
    }
}

/// What one prompt (or command) cost and did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TurnStats {
    /// Model requests made by the agent (auxiliary calls not included).
    pub requests: u32,
    /// Usage of every request, auxiliary ones included.
    pub usage: Usage,
    pub all_requests: u32,
    pub denied_tool_calls: u32,
    pub context: ContextReport,
    pub cache: CacheStats,
    /// Dollars for every request counted in `usage`, at the catalog's prices; `None` when no
    /// request had a price.
    pub cost_usd: Option<f64>,
}

impl TurnStats {
    /// Add what background work did after this summary was made ([`AgentEvent::Settled`]):
    /// its calls, usage and cost, and the context stages it ran.
    pub fn absorb(&mut self, later: &TurnStats) {
        self.requests += later.requests;
        self.all_requests += later.all_requests;
        self.usage.add(&later.usage);
        self.denied_tool_calls += later.denied_tool_calls;
        self.cost_usd = super::spend::add_cost(self.cost_usd, later.cost_usd);
        let (c, l) = (&mut self.context, &later.context);
        c.truncations += l.truncations;
        c.dedup_replacements += l.dedup_replacements;
        c.pruned_results += l.pruned_results;
        c.compactions += l.compactions;
        c.trimmed_messages += l.trimmed_messages;
        c.compaction_failures += l.compaction_failures;
        self.cache.read_share = self.usage.cache_hit_rate();
    }
}

/// Prompt-cache figures of a run, for headless JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacheStats {
    /// Share of the run's prompt tokens read from cache.
    pub read_share: f64,
    pub expected_breaks: u64,
    pub ttl_breaks: u64,
    pub unexpected_breaks: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TurnSummary {
    pub outcome: TurnOutcome,
    pub stats: TurnStats,
}

/// A finished tool call, as the transcript shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFinished {
    pub call_id: String,
    pub tool: String,
    pub summary: String,
    /// The result as sent to the model.
    pub content: String,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    pub diff: Option<String>,
    pub duration: Duration,
    /// The call never ran: refused by policy, denied, or its arguments did not parse.
    pub not_run: bool,
    /// What allowed or refused the call, for headless `decided_by`: the rule
    /// (`allow bash(git log *) (project-local, …:2)`), `read-only set`, `mode`, `user`,
    /// `user: --yes` or `sandbox`. `None` when nothing had to decide (an unknown tool,
    /// arguments that did not parse, an interrupt).
    pub decided_by: Option<String>,
    /// The transcript's approval line, stored with the call so a resumed session shows it too:
    /// `allowed by rule: …`, `approved by you for this session: bash(git push)`,
    /// `stopped by the sandbox: …`. `None` for calls the mode's defaults let through unasked.
    pub approval: Option<String>,
    /// The user's own `!cmd`, not the model's call: its output is shown whole.
    pub by_user: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// How a subagent's job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubagentOutcome {
    Reported,
    Failed,
    Interrupted,
}

/// What a subagent started by a `task` call is doing, for the front ends: the transcript's
/// subagent cell and headless stream-json.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum SubagentEvent {
    Started {
        agent_type: String,
        description: String,
        /// The subagent's own session, stored under the parent's.
        session_id: String,
        model: String,
        mode: Mode,
    },
    /// One of its tool calls began (`call_id` is the subagent's own call).
    ToolStarted {
        call_id: String,
        tool: String,
        summary: String,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        summary: String,
        is_error: bool,
        not_run: bool,
    },
    /// Text it wrote along the way (its final report comes with `Finished`).
    Text {
        text: String,
    },
    /// One of its model requests: the context it sent (prompt tokens) and what it cost.
    Usage {
        usage: Usage,
    },
    Finished {
        outcome: SubagentOutcome,
        /// The report as the parent gets it (capped), or why there is none.
        report: String,
        usage: Usage,
        requests: u32,
    },
}

/// A model to choose in the `/model` picker.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelChoice {
    pub name: String,
    pub window: u64,
    /// The window is cairn's guess (a model neither the catalog nor the config describes).
    pub window_assumed: bool,
    pub prices: Option<crate::config::Prices>,
    /// The provider lists it (else it comes from the catalog alone).
    pub listed: bool,
}

/// The answer to [`UserCommand::ListModels`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelList {
    pub current: String,
    pub models: Vec<ModelChoice>,
    /// Why the provider could not be asked, when it could not.
    pub provider_error: Option<String>,
}

/// What a transcript shows of a stored session beyond its messages, so a resumed session
/// reads like the live one: each call's summary as its tool gave it, and where turns ended
/// and compactions happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryRecap {
    /// Call id → the tool's one-line summary (`$ cargo test`, `fn total in src`).
    pub summaries: HashMap<String, String>,
    /// After the message at `after` (an index into the history), in order.
    pub marks: Vec<(usize, HistoryMark)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HistoryMark {
    /// A turn ended: its figures, as the live turn summary showed them.
    TurnEnd {
        elapsed: Duration,
        stats: TurnStats,
    },
    Compaction {
        trigger: CompactionTrigger,
        tokens_before: u64,
        tokens_after: u64,
        summary_tokens: u64,
    },
}

/// A file or folder an `@path` in the prompt attached, as the transcript lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attachment {
    /// The path as the project shows it; a folder ends with `/`.
    pub path: String,
    /// `120 lines`, `14 entries`, `cut to 2,000 lines`, or why it was not attached.
    pub detail: String,
    pub attached: bool,
}

/// Everything the agent reports.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// A session is loaded (at start, after `/new` or `/resume`): render its history.
    SessionReady {
        session: SessionInfo,
        resumed: bool,
        /// Every stored message, shared with the agent's own copy.
        history: Vec<std::sync::Arc<Message>>,
        /// What the transcript shows of each call besides its result (diff, duration, not
        /// run), by call id.
        tool_display: HashMap<String, ToolDisplay>,
        mode: Mode,
        model: String,
        window: u64,
        recap: HistoryRecap,
    },
    /// The session was written to the store with its first message: from now on it can be
    /// resumed (a session nobody typed into is never stored).
    SessionStored(SessionInfo),
    /// A prompt was accepted while a turn runs; it starts when the turn ends.
    Queued {
        prompt: String,
    },
    TurnStarted {
        prompt: String,
    },
    /// What the prompt's `@path` mentions attached (right after `TurnStarted`).
    Attached(Vec<Attachment>),
    TextDelta(String),
    /// A piece of the model's visible thinking, streaming.
    ThinkingDelta(String),
    /// The model began a tool call (its arguments still streaming).
    ToolCallStreaming {
        call_id: String,
        tool: String,
    },
    /// A request failed and is retried; text streamed so far is void.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
    /// A complete assistant message, as stored.
    AssistantMessage(Message),
    ToolStarted {
        call_id: String,
        tool: String,
        summary: String,
        arguments: String,
    },
    ApprovalRequested(ApprovalRequest),
    ToolFinished(ToolFinished),
    /// After every model request: its usage and the context figures.
    Usage {
        usage: Usage,
        context: ContextReport,
    },
    /// The context bar's figures changed.
    Context(ContextStatus),
    /// A stage of the context pipeline changed what is sent (truncation, dedup, pruning,
    /// trimming; compaction has its own events).
    ContextStage(crate::context::StageReport),
    Compaction(CompactionEvent),
    /// The answer to `DescribeContext`.
    ContextBreakdown(ContextBreakdown),
    ModeChanged(Mode),
    ModelChanged {
        model: String,
        window: u64,
    },
    /// `/model NAME` named no model the catalog or the provider knows: nothing changed.
    ModelRefused {
        name: String,
        known: Vec<String>,
    },
    /// The answer to [`UserCommand::ListModels`].
    Models(ModelList),
    Notice {
        level: NoticeLevel,
        text: String,
    },
    TurnFinished(TurnSummary),
    /// The answer to [`UserCommand::Settle`]: the usage and context counters of the background
    /// work that landed since the last turn's summary.
    Settled(TurnStats),
    /// The answer to a [`UserCommand::Library`] request.
    Library(LibraryAnswer),
    /// The custom commands and user-invocable skills, for completion and `/help` (after
    /// every `SessionReady`).
    Commands(Vec<CommandInfo>),
    /// The answer to a [`UserCommand::Mcp`] request.
    Mcp(McpPanel),
    /// The answer to [`UserCommand::PlanRewind`].
    RewindPlanned(Result<RewindPreview, LibraryError>),
    /// What a [`UserCommand::Rewind`] or [`UserCommand::Undo`] did.
    Rewound(Result<RewindOutcome, LibraryError>),
    /// A subagent started by the `task` call `call_id` made progress.
    Subagent {
        call_id: String,
        event: SubagentEvent,
    },
    /// The session's task list changed (the `todo` tool, or a session loaded with one).
    Todo(crate::conversation::TodoList),
}

/// A custom command or a user-invocable skill, as completion and `/help` list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommandInfo {
    /// With the slash: `/fix`.
    pub name: String,
    pub argument_hint: String,
    pub description: String,
}
