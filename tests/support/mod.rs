//! Helpers shared by the integration tests: the scripted mock LLM server (`mock_llm`), small
//! helpers for driving cairn's model clients against it (`llm`), and the real binary in a
//! pseudo-terminal (`pty`, and `reflow_term` for a terminal that keeps scrollback and reflows).

// Each test module uses a different subset of these helpers.
#![allow(dead_code)]

pub mod aux_calls;
pub mod cache_check;
pub mod cairn;
pub mod fake_llama;
pub mod llm;
pub mod mcp_server;
pub mod mock_llm;
pub mod pty;
pub mod reflow_term;
