//! cairn: a terminal coding assistant whose core strength is context management.
//!
//! Layers (a module imports only from layers below it): 0 `conversation`; 1 `config`;
//! 2 `context`, `prompt`, `llm`, `store`; 3 `memory`, `tools`, `checkpoint`; 4 `agent`; 5 `tui`, `headless`.

pub mod agent;
pub mod checkpoint;
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
