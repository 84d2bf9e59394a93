//! The tools the model can call: the `Tool` trait, the registry, the permission rules, the OS
//! sandbox for `bash`, path resolution, and the built-in tools themselves.
//!
//! A call goes through three steps, in this order, in `agent`'s call path (`agent/calls`):
//! permissions (may this run in this mode, on these paths, under these rules? —
//! `permissions::Policy`), approval (does the user agree, having seen the preview?), execution
//! (`bash` inside the sandbox). `prepare` computes the preview without side effects; `execute`
//! performs exactly what was prepared, and refuses if the world changed in between.

mod change;
mod command_run;
mod editor;
mod editor_terminal;
pub mod image;
mod paths;
mod policy;
mod registry;
mod shell;
mod summary;
mod terminals;
#[cfg(test)]
pub(crate) mod test_support;
mod tracker;

pub mod background;
pub mod bash;
pub mod bash_jobs;
pub mod file_edit;
pub mod file_read;
pub mod file_write;
pub mod glob;
pub mod grep;
pub mod launcher;
pub mod leftover;
pub mod mcp;
pub mod memory;
pub mod permissions;
pub mod sandbox;
pub mod skill;
pub mod task;
pub mod todo;
pub mod tool_search;
pub mod web_fetch;

pub use change::FileChange;
pub use editor::{Editor, files_only};
pub use memory::{MemoryAccess, MemoryDraft};
pub use paths::{ProjectPath, resolve_in, resolve_path};
pub use policy::{ApprovalPolicy, Unattended};
pub use registry::Registry;
pub use sandbox::SandboxPolicy;
pub use summary::summary_of;
pub use task::{Subagents, TaskRequest};
pub use terminals::{TerminalCommand, TerminalExit, TerminalOutput, Terminals};
pub use todo::TaskBoard;
pub use tracker::{FileTracker, Fingerprinter};

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::config::ToolsConfig;

/// What a tool does to the world; the permission policy starts from this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads files; never changes anything.
    Read,
    /// Writes files.
    Write,
    /// Runs processes.
    Execute,
    /// Reads or writes cairn's own memory store.
    Memory,
    /// Fetches from the network (web_fetch): asks in edit mode, and plan mode runs it only
    /// where a permission rule allows the domain.
    Network,
}

impl Access {
    pub fn is_read_only(self) -> bool {
        match self {
            Access::Read | Access::Memory => true,
            Access::Write | Access::Execute | Access::Network => false,
        }
    }
}

/// What every tool call may use.
#[derive(Clone)]
pub struct ToolContext {
    /// Canonical project root; relative paths resolve against it.
    pub root: PathBuf,
    pub config: ToolsConfig,
    /// What the agent last read or wrote of each file, to catch files changed under an edit.
    pub files: Arc<FileTracker>,
    /// Fires when the user interrupts; long-running tools stop and report what they have.
    pub cancel: CancellationToken,
    /// cairn's memories and past sessions, for the memory tools.
    pub memory: Option<Arc<dyn MemoryAccess>>,
    /// Subagents for the `task` tool: set for its calls only, and only where delegation is
    /// allowed (not past the depth limit).
    pub subagents: Option<Arc<dyn Subagents>>,
    /// The session's task list, for the `todo` tool.
    pub task_list: Option<Arc<dyn TaskBoard>>,
    /// The editor whose buffers the file tools read and write, when a front end offers one.
    pub editor: Option<Arc<dyn Editor>>,
    /// Files the deny rules keep from reading tools: `grep` and `glob` skip them.
    pub denied: ReadDenials,
    /// Where `bash` with `background: true` starts its jobs, and `bash_output` and `bash_stop`
    /// find them: the main agent's only (a subagent's commands run to their end).
    pub background: Option<background::BackgroundPlace>,
}

/// Which files a tool that walks folders must skip, because a `deny` rule for it (or for
/// `file_read`) covers them: `grep` with `glob = ".e*"` does not read `.env` under
/// `deny file_read(.env)`.
#[derive(Clone, Default)]
pub struct ReadDenials(Option<Arc<DeniesRead>>);

/// Whether a deny rule keeps `tool` from reading `path`.
type DeniesRead = dyn Fn(&str, &std::path::Path) -> bool + Send + Sync;

impl ReadDenials {
    pub fn new(denies: impl Fn(&str, &std::path::Path) -> bool + Send + Sync + 'static) -> ReadDenials {
        ReadDenials(Some(Arc::new(denies)))
    }

    /// Whether `tool` may not read `path` (absolute).
    pub fn denies(&self, tool: &str, path: &std::path::Path) -> bool {
        self.0.as_ref().is_some_and(|f| f(tool, path))
    }
}

/// A validated call, ready for policy, approval and execution.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// One line for the transcript and the approval dialog: `src/lib.rs`, `$ cargo test`.
    pub summary: String,
    /// Every file or directory the call touches, resolved; the permission policy checks these
    /// against the project root and the rules.
    pub paths: Vec<ProjectPath>,
    /// For writes and edits: the exact change the user approves and `execute` applies.
    pub change: Option<FileChange>,
    /// The call, once the agent has shown it to the front end: what a tool shows of itself
    /// there (an editor's terminal running `bash`) belongs to it. `None` for a run no front end
    /// shows as a call (a custom command's `` !`cmd` ``).
    pub shown_as: Option<String>,
}

impl Prepared {
    pub fn new(summary: impl Into<String>) -> Prepared {
        Prepared { summary: summary.into(), paths: Vec::new(), change: None, shown_as: None }
    }
}

/// The result of running a tool, before truncation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub exit_code: Option<i32>,
    /// Unified diff of a write or edit, kept with the stored result for display.
    pub diff: Option<String>,
    /// `bash` only: the command ran in the OS sandbox and most likely failed because of it;
    /// why, in words. The user may approve a run outside the sandbox
    /// ([`Tool::execute_in_sandbox`] with [`SandboxPolicy::full_access`]).
    pub sandbox_denial: Option<String>,
    /// An image the tool returned (`file_read` of a PNG): sent after the text, in the result.
    pub image: Option<crate::conversation::Image>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> ToolOutput {
        ToolOutput { content: content.into(), ..Default::default() }
    }
}

/// A failure to report to the model as an error result. The message says what was wrong and
/// what to do instead; it never aborts the session.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

/// Parse a tool's arguments into its own struct, with an error that shows the expected shape.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: &serde_json::Value,
    shape: &str,
) -> Result<T, ToolError> {
    serde_json::from_value(args.clone())
        .map_err(|e| ToolError::new(format!("{tool}: bad arguments ({e}); expected {shape}")))
}

/// One tool.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// What the model reads about the tool (prose from `assets/prompts/tools/`).
    fn description(&self) -> &'static str;
    /// JSON Schema of the arguments object.
    fn schema(&self) -> serde_json::Value;
    fn access(&self) -> Access;
    /// Validate the arguments and work out what the call would do, without doing it.
    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError>;

    /// [`Tool::prepare`], for the agent: a tool whose preview needs what an editor holds (a
    /// file's unsaved text, [`ToolContext::editor`]) reads it first. The rest just prepare.
    fn prepare_in<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(std::future::ready(self.prepare(args, ctx)))
    }
    /// Do what `prepare` described.
    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// Do what `prepare` described, in `sandbox` instead of the tool's own: read-only for plan
    /// mode, or [`SandboxPolicy::full_access`] for a re-run the user approved after the sandbox
    /// stopped a command. Tools that run nothing in a sandbox just execute.
    fn execute_in_sandbox<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
        _sandbox: &'a SandboxPolicy,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.execute(args, prepared, ctx)
    }
}
