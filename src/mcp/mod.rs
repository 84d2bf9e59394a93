//! MCP servers: the client side of the Model Context Protocol on the official SDK (`rmcp`),
//! kept behind one adapter (`client`), and the servers of a session with their states
//! (`hub`): started in the background, reported once when they fail or die, retried on
//! demand, switched on and off. `expand` reads `${VAR}` in server settings; `groups` ends the
//! stdio servers' process groups whole.
//!
//! Knows nothing of tools' policy, the model or the store: `tools` wraps these servers' tools
//! as tools the model can call, and the agent decides what the model sees.

mod client;
mod expand;
mod groups;
mod hub;

pub use client::{McpError, McpToolInfo};
pub use expand::variables;
pub use groups::end_servers;
pub use hub::{McpHub, McpReport, Reporter, ServerState};
