//! Step 1, resolve: which tool a call names. A built-in tool or an MCP server's
//! (`mcp__SERVER__TOOL`), found in the registry as it is now and offered to this agent; a
//! `tool_call` is the call of the tool it names from here on. A call of an MCP server that is
//! not ready says what is wrong with the server, not "no such tool"; a call after an interrupt
//! never starts.

use tokio_util::sync::CancellationToken;

use super::Calls;
use crate::conversation::{FinishedCall, ToolCall};
use crate::mcp::ServerState;
use crate::tools::tool_search::resolve_tool_call;
use crate::tools::{Registry, Tool};

pub(super) const INTERRUPTED_BEFORE_RUN: &str = "[not run: the user interrupted the turn before this call started]";

/// A step's result: on, or the call finished without running.
pub(super) type Step<T> = Result<T, Box<FinishedCall>>;

/// A call and the tool it runs.
pub(super) struct Resolved<'r> {
    /// For a `tool_call`, the call of the tool it names (same id, so its result answers it).
    pub call: ToolCall,
    pub tool: &'r dyn Tool,
}

/// The call ends here, with `message` for the model.
pub(super) fn not_run<T>(call: &ToolCall, summary: String, message: String) -> Step<T> {
    Err(Box::new(FinishedCall::not_run(call, summary, message)))
}

impl Calls<'_> {
    pub(super) fn resolve<'r>(
        &self,
        call: &ToolCall,
        registry: &'r Registry,
        cancel: &CancellationToken,
    ) -> Step<Resolved<'r>> {
        if cancel.is_cancelled() {
            return not_run(call, call.name.clone(), INTERRUPTED_BEFORE_RUN.into());
        }
        let named = match resolve_tool_call(call) {
            Ok(named) => named,
            Err(message) => return not_run(call, call.name.clone(), message),
        };
        let call = named.unwrap_or_else(|| call.clone());
        let Some(tool) = registry.get(&call.name).filter(|_| self.tools.offers(&call.name)) else {
            let message = self.server_not_ready(&call.name).unwrap_or_else(|| {
                let known: Vec<_> = registry.names().filter(|n| self.tools.offers(n)).collect();
                format!("There is no tool named `{}`. The available tools are: {}.", call.name, known.join(", "))
            });
            return not_run(&call, call.name.clone(), message);
        };
        Ok(Resolved { call, tool })
    }

    /// For a call of an MCP tool whose server is not ready (still starting, failed, switched
    /// off): what is wrong with the server, rather than "no such tool" — its tools are listed
    /// only once it has answered.
    fn server_not_ready(&self, name: &str) -> Option<String> {
        let rest = name.strip_prefix("mcp__")?;
        let server = self
            .ext
            .hub
            .servers()
            .into_iter()
            .filter(|s| rest.strip_prefix(s.name.as_str()).is_some_and(|r| r.starts_with("__")))
            .max_by_key(|s| s.name.len())?;
        let which = format!("`{name}` is a tool of the MCP server `{}`, which", server.name);
        Some(match server.state {
            ServerState::Ready => return None,
            ServerState::Starting => format!(
                "{which} is still starting: its tools are offered once it has answered. Go on with other work and call it again in a moment."
            ),
            ServerState::Failed { error } => format!(
                "{which} is not available ({error}); the user can start it again with `/mcp retry {}`.",
                server.name
            ),
            ServerState::Disabled => format!("{which} is switched off; the user can switch it on in /mcp."),
        })
    }
}
