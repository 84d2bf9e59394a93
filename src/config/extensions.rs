//! The extension tables: `[mcp]` and `[mcp_servers.NAME]` (MCP servers), `[hooks]` (shell
//! commands run at events), in `config.toml` and in the project's settings files; and reading a
//! project's `.mcp.json` (Claude Code's format) so `/mcp import` can copy it over.
//!
//! Only shapes and defaults live here: what a server or a hook does is `mcp`'s and `hooks`'
//! business. Values that name environment variables (`${VAR}`) are kept as written, never
//! expanded into anything stored.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `[mcp]`: how MCP servers are used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Tokens the MCP tools' schemas may take in every request; above it the model gets
    /// `tool_search` and `tool_call` instead and loads what it needs (USER-PAINS §10: 10
    /// servers should cost at most about 5k tokens at start-up, built-in tools included).
    pub tool_budget_tokens: u64,
    /// A server that has not connected and listed its tools by then is reported as failed
    /// (npx-launched servers download themselves on first use, which takes a while).
    pub startup_timeout_ms: u64,
    /// One tool call at most; past it the call ends with an error the model can act on.
    pub call_timeout_ms: u64,
    /// A server that failed is tried again on demand (a call to one of its tools, `/mcp`),
    /// at most this often.
    pub retry_after_ms: u64,
    /// The session's first request waits this long at most for servers still starting, so
    /// their tools are in it rather than changing the tool list (and the cache) later.
    pub startup_wait_ms: u64,
    /// The environment variables a project's servers (`.cairn/settings*.toml`, `/mcp import`)
    /// may name as `${VAR}`. Nothing else expands for them: a repository's file cannot send
    /// your tokens to its own server. Provider keys never expand for them, listed or not.
    pub project_variables: Vec<String>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            tool_budget_tokens: 4_000,
            startup_timeout_ms: 30_000,
            // Long enough for a slow API behind a server, short enough that a hung server does
            // not hold a turn for the bash maximum.
            call_timeout_ms: 120_000,
            retry_after_ms: 10_000,
            // Most local servers answer within a second; a slow one joins later.
            startup_wait_ms: 3_000,
            project_variables: Vec::new(),
        }
    }
}

/// `[mcp_servers.NAME]`: one server, started as a child process (`command`) or reached over
/// streamable HTTP (`url`). Strings may name environment variables as `${VAR}` or
/// `${VAR:-default}`; they are expanded when the server starts and never written anywhere.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program of a stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables for the server process, on top of cairn's own.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Working folder of the server process; relative to the project root. Unset: the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The endpoint of a streamable-HTTP server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent with every request, e.g. `Authorization = "Bearer ${GITHUB_TOKEN}"`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Off: configured but not started (switch it on in `/mcp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The variables its `${VAR}` may read: `None` for a server of the user's own config (any),
    /// the user's `[mcp] project_variables` for a project's. Not written anywhere.
    #[serde(skip)]
    pub variables: Option<Vec<String>>,
}

impl McpServerConfig {
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// Whether `${name}` may expand for this server.
    pub fn may_read(&self, name: &str) -> bool {
        match &self.variables {
            None => true,
            Some(listed) => !super::secrets::KEY_VARS.contains(&name) && listed.iter().any(|v| v == name),
        }
    }

    /// The same server, as a project's: its `${VAR}` reads only what `config` lets a project's
    /// server read.
    pub fn from_project(mut self, config: &McpConfig) -> McpServerConfig {
        self.variables = Some(config.project_variables.clone());
        self
    }

    /// What is wrong with this server's table, if anything.
    pub fn problem(&self) -> Option<String> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Some("has both `command` (stdio) and `url` (HTTP); keep one".into()),
            (None, None) => Some("needs `command` (a stdio server) or `url` (a streamable-HTTP server)".into()),
            (Some(c), None) if c.trim().is_empty() => Some("`command` is empty".into()),
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                Some(format!("`url` must start with http:// or https://, not `{u}`"))
            }
            (Some(_), None) if !self.headers.is_empty() => Some("`headers` are for HTTP servers (`url`)".into()),
            (None, Some(_)) if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() => {
                Some("`args`, `env` and `cwd` are for stdio servers (`command`)".into())
            }
            (Some(_), None) | (None, Some(_)) => None,
        }
    }
}

/// One hook: a shell command run at an event, with the event as JSON on its stdin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookConfig {
    /// For tool events: a tool name, a permission-rule pattern (`bash(rm *)`, `mcp__github`)
    /// or `*`. Other events ignore it.
    pub matcher: String,
    /// Run with `sh -c` in the project root.
    pub command: String,
    /// Past this the hook's whole process group is killed and the event goes on as if it had
    /// not been there.
    pub timeout_ms: u64,
}

impl Default for HookConfig {
    fn default() -> Self {
        // Claude Code's default is a minute; ten seconds keeps a stuck hook from holding a turn.
        HookConfig { matcher: "*".into(), command: String::new(), timeout_ms: 10_000 }
    }
}

/// `[hooks]`: `[[hooks.PreToolUse]]`, … — the hooks of each event, in the order written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    #[serde(rename = "PreToolUse")]
    pub pre_tool_use: Vec<HookConfig>,
    #[serde(rename = "PostToolUse")]
    pub post_tool_use: Vec<HookConfig>,
    #[serde(rename = "UserPromptSubmit")]
    pub user_prompt_submit: Vec<HookConfig>,
    #[serde(rename = "Stop")]
    pub stop: Vec<HookConfig>,
    #[serde(rename = "PreCompact")]
    pub pre_compact: Vec<HookConfig>,
    #[serde(rename = "SessionStart")]
    pub session_start: Vec<HookConfig>,
    #[serde(rename = "Notification")]
    pub notification: Vec<HookConfig>,
}

impl HooksConfig {
    /// `other`'s hooks after these (a project's run after the user's).
    pub fn extend(&mut self, other: &HooksConfig) {
        self.pre_tool_use.extend(other.pre_tool_use.iter().cloned());
        self.post_tool_use.extend(other.post_tool_use.iter().cloned());
        self.user_prompt_submit.extend(other.user_prompt_submit.iter().cloned());
        self.stop.extend(other.stop.iter().cloned());
        self.pre_compact.extend(other.pre_compact.iter().cloned());
        self.session_start.extend(other.session_start.iter().cloned());
        self.notification.extend(other.notification.iter().cloned());
    }

    pub fn is_empty(&self) -> bool {
        self.pre_tool_use.is_empty()
            && self.post_tool_use.is_empty()
            && self.user_prompt_submit.is_empty()
            && self.stop.is_empty()
            && self.pre_compact.is_empty()
            && self.session_start.is_empty()
            && self.notification.is_empty()
    }

    /// Each event's name, as written in the file, with its hooks.
    pub fn by_event(&self) -> [(&'static str, &[HookConfig]); 7] {
        [
            ("PreToolUse", &self.pre_tool_use),
            ("PostToolUse", &self.post_tool_use),
            ("UserPromptSubmit", &self.user_prompt_submit),
            ("Stop", &self.stop),
            ("PreCompact", &self.pre_compact),
            ("SessionStart", &self.session_start),
            ("Notification", &self.notification),
        ]
    }

    /// The first hook without a command, as `Event[n]`, for the error message.
    pub fn problem(&self) -> Option<String> {
        for (event, hooks) in self.by_event() {
            for (i, hook) in hooks.iter().enumerate() {
                if hook.command.trim().is_empty() {
                    return Some(format!("hooks.{event}[{}] has no `command`", i + 1));
                }
                if hook.timeout_ms == 0 {
                    return Some(format!("hooks.{event}[{}]: 0 ms is not a timeout", i + 1));
                }
            }
        }
        None
    }
}

/// The servers a project's `.mcp.json` proposes, converted to cairn's shape (Claude Code's
/// `type`, `command`, `args`, `env`, `url`, `headers`), by name. `${VAR}` stays as written.
pub fn read_mcp_json(root: &Path) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let path = root.join(".mcp.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    parse_mcp_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[derive(Deserialize)]
struct McpJson {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, McpJsonServer>,
}

#[derive(Deserialize)]
struct McpJsonServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

pub fn parse_mcp_json(text: &str) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let json: McpJson = serde_json::from_str(text).map_err(|e| format!("not a valid .mcp.json ({e})"))?;
    let mut out = BTreeMap::new();
    for (name, s) in json.servers {
        if let Some(kind) = s.kind.as_deref()
            && !matches!(kind, "stdio" | "http" | "streamable-http")
        {
            return Err(format!(
                "server `{name}` is of type `{kind}`; cairn speaks stdio and streamable HTTP (not the old SSE transport)"
            ));
        }
        let server = McpServerConfig {
            command: s.command,
            args: s.args,
            env: s.env,
            cwd: s.cwd,
            url: s.url,
            headers: s.headers,
            enabled: None,
            variables: None,
        };
        if let Some(problem) = server.problem() {
            return Err(format!("server `{name}` {problem}"));
        }
        out.insert(name, server);
    }
    Ok(out)
}

/// Whether `name` can be part of a tool name `mcp__NAME__TOOL`.
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty() && !name.contains("__") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_json_converts_both_kinds_and_keeps_variable_names() {
        let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-fs", "."], "env": {"TOKEN": "${FS_TOKEN}"}},
            "api": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}}
        }}"#;
        let servers = parse_mcp_json(text).unwrap();
        assert_eq!(servers["files"].command.as_deref(), Some("npx"));
        assert_eq!(servers["files"].env["TOKEN"], "${FS_TOKEN}");
        assert_eq!(servers["api"].headers["Authorization"], "Bearer ${API_KEY}");
        let err = parse_mcp_json(r#"{"mcpServers": {"old": {"type": "sse", "url": "https://h/sse"}}}"#).unwrap_err();
        assert!(err.contains("old") && err.contains("SSE"), "{err}");
    }

    #[test]
    fn a_server_needs_exactly_one_transport() {
        let both = McpServerConfig { command: Some("x".into()), url: Some("https://h".into()), ..Default::default() };
        assert!(both.problem().unwrap().contains("keep one"));
        assert!(McpServerConfig::default().problem().unwrap().contains("needs"));
        let ftp = McpServerConfig { url: Some("ftp://h".into()), ..Default::default() };
        assert!(ftp.problem().unwrap().contains("http://"));
    }

    #[test]
    fn server_names_fit_tool_names() {
        assert!(valid_server_name("git-hub_2"));
        assert!(!valid_server_name("a__b") && !valid_server_name("a b") && !valid_server_name(""));
    }
}
