//! Configuration: the TOML file, data paths (`CAIRN_HOME` or platform dirs), the model catalog,
//! and provider resolution from flags, file and environment.
//!
//! Reads nothing but the config file and the environment; probing the network for a local
//! server belongs to `llm::discovery`.

mod checkpoints;
mod defaults;
mod edit;
mod error;
mod extensions;
mod file;
mod local;
mod models;
mod paths;
mod permissions;
mod pricing;
mod provider;
mod reasoning;
mod secrets;
mod subagents;
mod trust;

pub use checkpoints::CheckpointsConfig;
pub use defaults::{
    CacheConfig, CacheTtl, CompactionConfig, Config, ContextConfig, MemoryConfig, NotifyConfig, NotifyMethod,
    RetryConfig, ToolsConfig, TuiConfig, TuiMode,
};
pub use edit::{read_for_edit, table_for_edit};
pub use error::ConfigError;
pub use extensions::{
    HookConfig, HooksConfig, McpConfig, McpServerConfig, parse_mcp_json, read_mcp_json, valid_server_name,
};
pub use file::{load, read_trust};
pub use local::{LocalConfig, expand_home};
pub use models::{
    CatalogModel, ModelInfo, ModelOverride, Prices, WindowSource, catalog, is_known_model, lookup_model, price_of,
};
pub use paths::Paths;
pub use permissions::{
    DEFAULT_MEMORY_LIMIT_MB, PermissionsConfig, ProjectSettings, RuleText, SandboxConfig, SandboxMode, SettingsFile,
    default_max_processes, load_project_settings, load_settings, local_settings_path, parse_settings,
    shared_settings_path,
};
pub use pricing::{Pricing, format_usd};
pub use provider::{
    Detected, LocalCandidate, ProviderKind, ProviderOverrides, ResolvedProvider, detect_provider, local_candidates,
    model_info, resolve_provider,
};
pub use reasoning::{MIN_THINKING_BUDGET, ThinkingSetting, ThinkingSupport};
pub use secrets::{KEY_VARS, Redactor, Secret, env_var, keep_memory_private, take_keys_from_env};
pub use subagents::{SubagentsConfig, TodoConfig};
pub use trust::{TrustEntry, record_trust};
