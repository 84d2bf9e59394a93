//! cairn: a terminal coding assistant whose core strength is context management.
//!
//! The modules are layered (a module imports only from layers below it); the table and the
//! module map are in docs/ARCHITECTURE.md, and `tests/it/layers/` holds the code to them.
//!
//! Public are what the binary, the integration tests and the benches drive directly: the
//! shared types and config, the context pipeline, the model clients, the store, the agent's
//! events and the interface's app. The rest is crate-private, so the compiler finds what
//! nothing uses.

mod acp;
pub mod agent;
pub mod checkpoint;
mod cli;
pub mod config;
pub mod context;
pub mod conversation;
mod headless;
mod hooks;
pub mod llm;
pub mod local;
mod mcp;
mod mcp_serve;
mod memory;
pub mod net;
mod prompt;
mod report;
pub mod store;
mod tools;
mod trust;
pub mod tui;

pub use cli::{Cli, run, run_before_runtime};
