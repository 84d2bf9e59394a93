//! Everything an agent is made of, as the command line resolves it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, ModelInfo, ProviderKind, Redactor};
use crate::conversation::Mode;
use crate::llm::Provider;
use crate::store::{ProjectId, SessionInfo, Store};
use crate::tools::permissions::Policy;
use crate::tools::{ApprovalPolicy, Registry, SandboxPolicy};

/// Which session the agent opens.
#[derive(Clone, Debug)]
pub enum SessionChoice {
    New,
    /// An existing session of the project, already resolved (so an unknown id fails before
    /// anything starts).
    Resume(SessionInfo),
    /// A new session the front end drafted (`Store::draft_session`) because it had to give out
    /// its id before the agent could start (ACP's `session/new`). Written with its first message.
    Drafted(SessionInfo),
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
    /// The tools, `bash` sandboxed as `sandbox` says.
    pub registry: Arc<Registry>,
    /// The permission rules of every level (files and command line).
    pub permissions: Policy,
    /// The OS sandbox for `bash` (the registry's `bash` runs in it; plan mode tightens it).
    pub sandbox: SandboxPolicy,
    pub approval: ApprovalPolicy,
    /// Most model requests per prompt.
    pub max_turns: Option<u32>,
    pub mode: Mode,
    pub session: SessionChoice,
    /// Key values to keep out of everything stored.
    pub redactor: Redactor,
    /// Where full outputs of truncated results go.
    pub truncations_dir: PathBuf,
    /// The user's folders of custom commands and skills (`commands/`, `skills/` in each):
    /// cairn's config folder, and `~/.claude` unless CAIRN_HOME keeps cairn to one folder.
    pub user_dirs: Vec<PathBuf>,
    /// The agent types the `task` tool may start (built-in and from files).
    pub agent_types: Arc<crate::prompt::AgentTypes>,
    /// Asks the provider which models it serves (`/model`); `None` when it cannot be asked.
    pub model_lister: Option<super::models::ModelLister>,
    /// The llama-server cairn runs (`--local`): its news and its facts for `/model`.
    pub local_server: Option<Arc<crate::local::LocalServer>>,
    /// The server's own tokenizer (a llama-server), for exact token counts.
    pub tokenizer: Option<crate::local::Tokenizer>,
    /// Whether the project's files are in force: its hooks, MCP servers, commands, skills,
    /// instruction files and allow rules load only when the folder is trusted.
    pub trust: crate::trust::ProjectTrust,
    /// The editor whose buffers the file tools read and write (ACP's `fs/*`); `None`: the disk.
    pub editor: Option<Arc<dyn crate::tools::Editor>>,
}
