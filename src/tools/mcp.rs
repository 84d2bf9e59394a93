//! MCP servers' tools as tools the model calls: `mcp__SERVER__TOOL`, read-only when the
//! server marks them so (`readOnlyHint`: plan mode offers and runs only those), every other
//! one asks like a command. The result is text, capped and spilled by the dispatcher like any
//! other tool's.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use futures_util::future::BoxFuture;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput};
use crate::mcp::{McpError, McpHub, McpToolInfo};

/// Tool names and descriptions live as long as the process (the `Tool` trait hands out
/// `&'static str`); the same text is stored once, however often a server reconnects.
pub(crate) fn intern(text: &str) -> &'static str {
    static TEXTS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut texts = TEXTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(known) = texts.get(text) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
    texts.insert(leaked);
    leaked
}

/// Anthropic and OpenAI accept tool names of letters, digits, `_` and `-`, 64 at most.
const MAX_NAME: usize = 64;

/// `mcp__server__tool`, with characters the providers refuse replaced and cut to their limit.
pub fn model_name(server: &str, tool: &str) -> String {
    let clean: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    let mut name = format!("mcp__{server}__{clean}");
    name.truncate(MAX_NAME);
    name
}

/// Every known tool of every switched-on server of `hub`, named for the model (a second tool
/// whose cleaned name collides gets a number), in the hub's stable order.
pub fn tools_of(hub: &McpHub) -> Vec<McpTool> {
    let mut seen = HashSet::new();
    hub.tools()
        .into_iter()
        .map(|(server, info)| {
            let base = model_name(&server, &info.name);
            let mut name = base.clone();
            let mut n = 2;
            while !seen.insert(name.clone()) {
                let suffix = format!("_{n}");
                name = format!("{}{suffix}", &base[..base.len().min(MAX_NAME - suffix.len())]);
                n += 1;
            }
            McpTool::new(hub.clone(), server, info, &name)
        })
        .collect()
}

/// One tool of one server.
pub struct McpTool {
    hub: McpHub,
    server: String,
    tool: McpToolInfo,
    name: &'static str,
    description: &'static str,
}

impl McpTool {
    pub fn new(hub: McpHub, server: String, tool: McpToolInfo, name: &str) -> McpTool {
        let description = if tool.description.trim().is_empty() {
            format!("The `{}` tool of the MCP server `{server}`.", tool.name)
        } else {
            tool.description.clone()
        };
        McpTool { hub, name: intern(name), description: intern(&description), server, tool }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn info(&self) -> &McpToolInfo {
        &self.tool
    }
}

impl Tool for McpTool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn schema(&self) -> serde_json::Value {
        let mut schema = self.tool.input_schema.clone();
        // The providers want an object schema; some servers omit the type.
        if let Some(map) = schema.as_object_mut() {
            map.entry("type").or_insert_with(|| "object".into());
        }
        schema
    }

    fn access(&self) -> Access {
        if self.tool.read_only { Access::Read } else { Access::Execute }
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        if !args.is_object() {
            return Err(ToolError::new(format!("`{}`: the arguments must be a JSON object", self.name)));
        }
        let shown = crate::conversation::clip(&args.to_string(), 120);
        Ok(Prepared::new(format!("{} · {} {shown}", self.server, self.tool.name)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match self.hub.call(&self.server, &self.tool.name, args.clone(), &ctx.cancel).await {
                Ok(out) => {
                    let mut content =
                        if out.text.is_empty() { "(the tool returned no content)".into() } else { out.text };
                    // The first image goes to the model like a read image file (scaled to the
                    // caps); one that cannot be read stays a line of text.
                    let limits = super::image::ImageLimits::from_config(&ctx.config);
                    let image = match out.first_image.map(|raw| super::image::prepare(raw, self.name, limits)) {
                        Some(Ok(loaded)) => {
                            content.push_str(&format!("\n{}. The image follows.", loaded.describe()));
                            Some(loaded.image)
                        }
                        Some(Err(why)) => {
                            content.push_str(&format!("\n[the image could not be shown: {why}]"));
                            None
                        }
                        None => None,
                    };
                    Ok(ToolOutput { content, is_error: out.is_error, image, ..Default::default() })
                }
                Err(McpError::Cancelled) => Err(ToolError::new("[interrupted by the user]")),
                Err(e @ McpError::Connection(_)) => Err(ToolError::new(format!(
                    "`{}` did not run: {e}. Carry on without it, or tell the user the server is down (/mcp shows it).",
                    self.name
                ))),
                Err(e @ (McpError::Call(_) | McpError::Timeout(_))) => {
                    Err(ToolError::new(format!("`{}` failed: {e}", self.name)))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_the_providers_accept() {
        assert_eq!(model_name("git", "create_issue"), "mcp__git__create_issue");
        assert_eq!(model_name("fs", "read.file/v2"), "mcp__fs__read_file_v2");
        assert_eq!(model_name("s", &"x".repeat(100)).len(), 64);
        assert!(std::ptr::eq(intern("same text"), intern(&String::from("same text"))));
    }
}
