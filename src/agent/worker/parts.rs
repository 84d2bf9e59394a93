//! The worker's parts grouped by what they serve: what the agent reaches beyond its session
//! (`Reach`), what the session keeps count of (`Books`), and the bounds it works within
//! (`Limits`).

use super::subagent::Delegation;
use crate::agent::checkpoints::Checkpoints;
use crate::agent::extensions::Extensions;
use crate::agent::models::ModelDirectory;
use crate::agent::spend::Spend;
use crate::agent::task_list::TaskList;

/// What the agent reaches beyond the session: the files (checkpoints), the extensions, and
/// the subagents it may launch.
pub(super) struct Reach {
    /// The session's file checkpoints; replaced with the session.
    pub(super) checkpoints: Checkpoints,
    /// MCP servers, hooks, skills and custom commands.
    pub(super) ext: Extensions,
    /// Subagents: this worker's depth, the agent types, the running ones' slots, and (for a
    /// subagent) its role.
    pub(super) delegation: Delegation,
    /// The local server: its news, its tokenizer, its timings.
    pub(super) local: crate::agent::local_site::LocalSite,
}

/// What the session keeps count of.
pub(super) struct Books {
    /// What the session has cost.
    pub(super) spend: Spend,
    /// The session's task list.
    pub(super) todo: TaskList,
}

/// The bounds the worker works within.
pub(super) struct Limits {
    /// The models `/model` may switch to.
    pub(super) models: ModelDirectory,
    /// Most model requests per prompt.
    pub(super) max_turns: Option<u32>,
}
