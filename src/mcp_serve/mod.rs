//! `cairn mcp-serve`: cairn as an MCP server on stdin/stdout, for other agents. Two tools:
//! `prompt` runs a prompt in a new session (or a given one) and returns the answer, the
//! session's id and what it cost; `continue` runs one in a session already there (the one named,
//! or the project's last). Approvals go back to the calling client as MCP elicitations when it
//! takes them; otherwise the permission rules and `--allow` decide, and every other call is
//! refused, the reason in the result. Protocol and transport are the `rmcp` SDK's.

mod turn;

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::agent::AgentHandle;
use crate::tools::{ApprovalPolicy, Unattended};

/// Which session a call runs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    New,
    /// A stored session by id (a unique prefix is enough).
    Session(String),
    /// The project's last session.
    Latest,
}

/// Starts an agent for a call: on the session `Target` names, its approvals answered as the
/// policy says (the client's elicitations, or the rules alone). The error says what is wrong.
pub type StartAgent = Arc<dyn Fn(Target, ApprovalPolicy) -> Result<AgentHandle, String> + Send + Sync>;

/// Serve MCP on stdin/stdout until the client goes away.
pub async fn serve(start: StartAgent) -> Result<(), String> {
    let server = CairnServer { start };
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| format!("the MCP handshake with the client failed: {e}"))?;
    running.waiting().await.map(|_| ()).map_err(|e| format!("the MCP connection failed: {e}"))
}

const PROMPT: &str = "prompt";
const CONTINUE: &str = "continue";

#[derive(Clone)]
struct CairnServer {
    start: StartAgent,
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        // The literals below are objects.
        _ => Arc::new(serde_json::Map::new()),
    }
}

fn tools() -> Vec<Tool> {
    let prompt = Tool::new(
        PROMPT,
        "Give cairn, a coding agent working in this project, a task or a question. It runs to the end (reading, editing and running what its permission rules allow) and returns its answer, the session id (pass it to `continue` to follow up) and the cost in dollars. Without session_id a new session starts.",
        schema(json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "What cairn should do or answer."},
                "session_id": {"type": "string", "description": "Run it in this stored session instead of a new one (a unique prefix is enough)."}
            },
            "required": ["prompt"]
        })),
    )
    .with_annotations(ToolAnnotations::new().read_only(false).open_world(false));
    let follow = Tool::new(
        CONTINUE,
        "Continue a cairn session with another prompt: the session named by session_id, or the project's last one. Returns the answer, the session id and the cost in dollars.",
        schema(json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "What cairn should do next."},
                "session_id": {"type": "string", "description": "The session to continue, as `prompt` returned it; the project's last session when left out."}
            },
            "required": ["prompt"]
        })),
    )
    .with_annotations(ToolAnnotations::new().read_only(false).open_world(false));
    vec![prompt, follow]
}

impl ServerHandler for CairnServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "cairn is a coding agent for this project. `prompt` gives it a task in a new session; `continue` follows up in a session it returned. Calls that need approval are asked of you (elicitation) when you support it; otherwise only what cairn's permission rules allow runs.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let Some(prompt) = text("prompt") else {
            return Err(ErrorData::invalid_params("`prompt` is missing or empty; give cairn the task as text", None));
        };
        let target = match (request.name.as_ref(), text("session_id")) {
            (PROMPT | CONTINUE, Some(id)) => Target::Session(id.to_string()),
            (PROMPT, None) => Target::New,
            (CONTINUE, None) => Target::Latest,
            (other, _) => {
                return Err(ErrorData::invalid_params(
                    format!("there is no tool {other:?}; use `prompt` or `continue`"),
                    None,
                ));
            }
        };
        let asks = context.peer.supported_elicitation_modes().contains(&ElicitationMode::Form);
        let policy = if asks { ApprovalPolicy::Ask } else { ApprovalPolicy::DenyAll(Unattended::McpClient) };
        let handle = match (self.start)(target, policy) {
            Ok(handle) => handle,
            Err(why) => return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into()),
        };
        let peer = asks.then(|| context.peer.clone());
        let done = turn::run(handle, prompt.to_string(), peer, context.ct.clone()).await;
        Ok(done.into_result().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tools_take_a_prompt_and_an_optional_session() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [PROMPT, CONTINUE]);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("required"), Some(&json!(["prompt"])), "{}", tool.name);
            assert!(tool.input_schema["properties"].get("session_id").is_some());
        }
    }
}
