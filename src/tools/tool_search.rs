//! `tool_search`: when the MCP tools' schemas would take more than their budget in every
//! request, the model gets this tool (and `tool_call`) instead of them. A search returns the
//! best matches with their full schemas; the model calls one through `tool_call`, which the
//! dispatcher turns into a call of the tool itself (policy, approval, hooks and caps as for
//! any call). The tool list stays the same from request to request: the schemas the model
//! loads arrive as this tool's result, after the last cache breakpoint.

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::mcp::{McpTool, tools_of};
use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::{TOOL_CALL, TOOL_SEARCH};
use crate::conversation::{ToolCall, ToolSpec};
use crate::mcp::McpHub;

/// Matches returned by one search at most: enough to choose from, few enough to stay small.
const MAX_MATCHES: usize = 5;

pub struct ToolSearch {
    hub: McpHub,
}

impl ToolSearch {
    pub fn new(hub: McpHub) -> ToolSearch {
        ToolSearch { hub }
    }
}

#[derive(Deserialize)]
struct Args {
    query: String,
}

/// The spec of `tool_call`, which the dispatcher resolves (it never runs as a tool itself).
pub fn tool_call_spec() -> ToolSpec {
    ToolSpec {
        name: TOOL_CALL.into(),
        description: include_str!("../../assets/prompts/tools/tool_call.md").trim_end().into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's full name, as tool_search gave it (mcp__SERVER__TOOL)."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching the schema tool_search gave."}
            },
            "required": ["name", "arguments"]
        }),
    }
}

/// The name of the tool a call runs: the one `tool_call` names, or its own.
pub fn called_name(call: &ToolCall) -> String {
    match resolve_tool_call(call) {
        Ok(Some(inner)) => inner.name,
        Ok(None) | Err(_) => call.name.clone(),
    }
}

/// A `tool_call` as the call of the tool it names (same id, so its result answers it);
/// `None` for any other call; `Err` with the message for the model when it is malformed.
pub fn resolve_tool_call(call: &ToolCall) -> Result<Option<ToolCall>, String> {
    if call.name != TOOL_CALL {
        return Ok(None);
    }
    let args = call.parsed_arguments().map_err(|e| format!("`tool_call` was not run: its {e}."))?;
    let Some(name) = args.get("name").and_then(Value::as_str).map(str::trim).filter(|n| !n.is_empty()) else {
        return Err("`tool_call` needs `name`: the full name tool_search gave (mcp__SERVER__TOOL).".into());
    };
    if name == TOOL_CALL {
        return Err("`tool_call` cannot call itself; give the name of the tool to run.".into());
    }
    let arguments = match args.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        // Some models send the arguments as a JSON string.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => v,
            _ => return Err(format!("`tool_call`: `arguments` for `{name}` must be a JSON object")),
        },
        Some(_) => return Err(format!("`tool_call`: `arguments` for `{name}` must be a JSON object")),
    };
    Ok(Some(ToolCall { id: call.id.clone(), name: name.to_string(), arguments: arguments.to_string() }))
}

/// The words of `text`: lower-case runs of letters and digits.
fn tokens(text: &str) -> Vec<String> {
    text.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// How well `tool` matches the query words (0: not at all): a whole word counts more than a
/// part of one, the name more than the description, and a number only as a whole word (so
/// "7" finds `filler_07`'s "kind 7", not every name with a 7 in it).
fn score(tool: &McpTool, words: &[String]) -> usize {
    let name = tool.name().to_ascii_lowercase();
    let description = tool.description().to_ascii_lowercase();
    let (name_words, description_words) = (tokens(&name), tokens(&description));
    let params = tool.info().input_schema["properties"]
        .as_object()
        .map(|p| p.keys().map(|k| k.to_ascii_lowercase()).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    if words.len() == 1 && words[0] == name {
        return 1_000;
    }
    let whole = |list: &[String], w: &str| list.iter().any(|t| t == w || t.trim_start_matches('0') == w);
    words
        .iter()
        .map(|w| {
            let part = w.len() > 2;
            4 * usize::from(whole(&name_words, w))
                + 2 * usize::from(part && name.contains(w.as_str()))
                + 2 * usize::from(whole(&description_words, w))
                + usize::from(part && description.contains(w.as_str()))
                + usize::from(part && params.contains(w.as_str()))
        })
        .sum()
}

fn describe(tool: &McpTool) -> String {
    let access = if tool.info().read_only { "read-only" } else { "may change things; asks for approval" };
    format!(
        "## {}\nserver `{}` · {access}\n{}\nArguments (JSON Schema): {}",
        tool.name(),
        tool.server(),
        tool.description().trim(),
        tool.schema()
    )
}

impl Tool for ToolSearch {
    fn name(&self) -> &'static str {
        TOOL_SEARCH
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/tool_search.md").trim_end()
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing what the tool should do, or a tool's exact name."}
            },
            "required": ["query"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args("tool_search", args, "{\"query\": \"create a github issue\"}")?;
        Ok(Prepared::new(format!("search the MCP tools for “{}”", args.query.trim())))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args("tool_search", args, "{\"query\": \"create a github issue\"}")?;
            let tools = tools_of(&self.hub);
            let words: Vec<String> = args
                .query
                .to_ascii_lowercase()
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            let mut ranked: Vec<(usize, &McpTool)> =
                tools.iter().map(|t| (score(t, &words), t)).filter(|(s, _)| *s > 0).collect();
            ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name().cmp(b.1.name())));
            if ranked.is_empty() {
                let servers: Vec<String> = self
                    .hub
                    .servers()
                    .into_iter()
                    .map(|s| format!("{} ({}, {} tools)", s.name, s.state.label(), s.tools.len()))
                    .collect();
                return Ok(ToolOutput::text(format!(
                    "No MCP tool matches “{}” among {} tools. Servers: {}. Try other words, or a server's name.",
                    args.query.trim(),
                    tools.len(),
                    if servers.is_empty() { "none".to_string() } else { servers.join(", ") }
                )));
            }
            let shown: Vec<String> = ranked.iter().take(MAX_MATCHES).map(|(_, t)| describe(t)).collect();
            Ok(ToolOutput::text(format!(
                "{} of {} tools match. Call one with `tool_call`: {{\"name\": \"<name>\", \"arguments\": {{…}}}}.\n\n{}",
                shown.len(),
                tools.len(),
                shown.join("\n\n")
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_becomes_the_call_it_names() {
        let call = ToolCall::new("t1", "tool_call", r#"{"name": "mcp__gh__issue", "arguments": {"n": 1}}"#);
        let inner = resolve_tool_call(&call).unwrap().unwrap();
        assert_eq!((inner.id.as_str(), inner.name.as_str()), ("t1", "mcp__gh__issue"));
        assert_eq!(inner.arguments, r#"{"n":1}"#);
        let stringly = ToolCall::new("t2", "tool_call", r#"{"name": "x", "arguments": "{\"a\": 2}"}"#);
        assert_eq!(resolve_tool_call(&stringly).unwrap().unwrap().arguments, r#"{"a":2}"#);
        assert!(resolve_tool_call(&ToolCall::new("t3", "tool_call", "{}")).unwrap_err().contains("needs `name`"));
        assert!(resolve_tool_call(&ToolCall::new("t4", "bash", "{}")).unwrap().is_none());
        assert_eq!(called_name(&call), "mcp__gh__issue");
    }
}
