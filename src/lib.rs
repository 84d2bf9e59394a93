//! cairn: a terminal coding assistant whose core strength is context management.
//!
//! Layers (a module imports only from layers below it): 0 `conversation`; 1 `config`;
//! 2 `context`, `prompt`, `llm`, `store`; 3 `memory`, `tools`; 4 `agent`; 5 `tui`, `headless`.

pub mod config;
pub mod conversation;
pub mod llm;
pub mod tools;
pub mod store;
