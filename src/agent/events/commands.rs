//! What goes into the agent: the user's commands, and the approval dialog's question and answer.

use serde::Serialize;

use crate::agent::library::LibraryRequest;
use crate::agent::mcp_desk::McpRequest;
use crate::agent::rewind::RewindScope;
use crate::checkpoint::Overwrite;
use crate::conversation::Mode;

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
    /// `/report`: write the session report (HTML) and answer with its path
    /// ([`AgentEvent::ReportWritten`]).
    WriteReport,
    /// `/ps` and `/stop N`: answered at once, even mid-turn ([`AgentEvent::Background`]).
    Background(BackgroundRequest),
    /// `/init`: a turn in which the model writes or improves the project's AGENTS.md.
    Init,
    /// `/export`: write the conversation as a readable file (to `path`, else beside the
    /// reports) and answer with its path ([`AgentEvent::Exported`]).
    Export {
        format: crate::report::ExportFormat,
        path: Option<String>,
    },
    Shutdown,
}

impl UserCommand {
    /// Whether the user starts work with this: it ends an idle spell (the keep-alive learns
    /// how long the user was away). Looking at `/context` or a report does not.
    pub fn is_the_users_turn(&self) -> bool {
        match self {
            UserCommand::Submit(_)
            | UserCommand::Shell { .. }
            | UserCommand::RunCommand { .. }
            | UserCommand::CarryOutPlan { .. }
            | UserCommand::Init
            | UserCommand::Compact => true,
            UserCommand::Interrupt
            | UserCommand::Approval { .. }
            | UserCommand::SetMode(_)
            | UserCommand::SetModel(_)
            | UserCommand::Settle
            | UserCommand::DescribeContext
            | UserCommand::NewSession
            | UserCommand::ResumeSession(_)
            | UserCommand::Library(_)
            | UserCommand::Mcp(_)
            | UserCommand::ListModels
            | UserCommand::PlanRewind { .. }
            | UserCommand::Rewind { .. }
            | UserCommand::Undo
            | UserCommand::WriteReport
            | UserCommand::Export { .. }
            | UserCommand::Background(_)
            | UserCommand::Shutdown => false,
        }
    }
}

/// What the user asks of the background commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackgroundRequest {
    /// `/ps`: every one, with its state and last lines.
    List,
    /// `/stop N`: end one.
    Stop(u32),
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
    /// No one could answer: the front end could not ask its user (`why`, in words). Not run,
    /// and the model is told so, not that someone said no.
    Unanswered {
        why: String,
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

/// A custom command or a user-invocable skill, as completion and `/help` list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommandInfo {
    /// With the slash: `/fix`.
    pub name: String,
    pub argument_hint: String,
    pub description: String,
}
