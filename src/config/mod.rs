//! Configuration: the TOML file, data paths (`CAIRN_HOME` or platform dirs), the model catalog,
//! and provider resolution from flags, file and environment.
//!
//! Reads nothing but the config file and the environment; probing the network for a local
//! server belongs to `llm::discovery`.

mod checkpoints;
mod defaults;
mod error;
mod file;
mod models;
mod paths;
mod provider;
mod secrets;

pub use checkpoints::CheckpointsConfig;
pub use defaults::{
    CacheConfig, CacheTtl, CompactionConfig, Config, ContextConfig, MemoryConfig, RetryConfig, ToolsConfig,
};
pub use error::ConfigError;
pub use file::load;
pub use models::{ModelInfo, Prices, WindowSource, lookup_model};
pub use paths::Paths;
pub use provider::{
    Detected, LocalCandidate, ProviderKind, ProviderOverrides, ResolvedProvider, detect_provider, local_candidates,
    model_info, resolve_provider,
};
pub use secrets::{KEY_VARS, Redactor, Secret};
