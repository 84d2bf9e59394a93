//! cairn: a terminal coding assistant whose core strength is context management.
//!
//! The modules are layered (a module imports only from layers below it); the table and the
//! module map are in docs/ARCHITECTURE.md, and `tests/it/layers.rs` holds the code to them.

pub mod agent;
pub mod cli;
pub mod config;
pub mod context;
pub mod conversation;
pub mod headless;
pub mod llm;
pub mod memory;
pub mod prompt;
pub mod store;
pub mod tools;
pub mod tui;
