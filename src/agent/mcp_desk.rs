//! `/mcp`: the servers, their states, their tools and what each costs in every request; and
//! the user's changes — a server switched on or off, a failed one tried again, the project's
//! `.mcp.json` imported. Answered by the router at once, even mid-turn: the next request sees
//! the change.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::tool_section::spec_tokens;
use crate::config::{McpServerConfig, local_settings_path, read_mcp_json};
use crate::conversation::ToolSpec;
use crate::conversation::tool_names::TOOL_SEARCH;
use crate::mcp::{McpHub, ServerState};
use crate::tools::Tool;
use crate::tools::mcp::tools_of;

/// What the user asks of `/mcp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpRequest {
    Show,
    Enable(String),
    Disable(String),
    Retry(String),
    /// Copy the servers of the project's `.mcp.json` into `.cairn/settings.local.toml` and
    /// start them: the user's consent to run what the project proposes.
    Import,
}

/// One tool of a server, for the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct McpToolLine {
    /// As the model calls it: `mcp__server__tool`.
    pub name: String,
    pub read_only: bool,
    pub tokens: u64,
}

/// One server, for the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct McpServerInfo {
    pub name: String,
    pub transport: String,
    /// `starting`, `connected`, `failed`, `off`.
    pub state: &'static str,
    pub error: Option<String>,
    pub tools: Vec<McpToolLine>,
    /// What its tools' schemas take in every request when they are listed.
    pub tokens: u64,
}

/// The answer to an [`McpRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct McpPanel {
    pub servers: Vec<McpServerInfo>,
    /// What all MCP schemas would take; over `budget_tokens` the model gets `tool_search`.
    pub tokens: u64,
    pub budget_tokens: u64,
    /// `listed` or `tool_search`.
    pub offered_as: &'static str,
    /// What the request did, or why it could not.
    pub message: Option<String>,
    /// A server is still starting: a second panel follows once none is (or they time out).
    pub pending: bool,
    /// This is that second panel.
    #[serde(skip)]
    pub follow_up: bool,
    /// Servers the project's `.mcp.json` proposes that are not configured (import them with
    /// `/mcp import`).
    pub proposed: Vec<String>,
}

/// What the router keeps to answer `/mcp`.
#[derive(Clone)]
pub(super) struct McpDesk {
    pub hub: McpHub,
    pub chars_per_token: f64,
    pub budget_tokens: u64,
    pub startup_timeout_ms: u64,
    pub root: PathBuf,
    /// What a project's servers may read of the environment (`[mcp] project_variables`).
    pub mcp: crate::config::McpConfig,
    /// The folder's trust: servers imported by the user's word join its record.
    pub trust: crate::trust::ProjectTrust,
}

impl McpDesk {
    pub(super) fn answer(&self, request: McpRequest) -> McpPanel {
        let message = match request {
            McpRequest::Show => Ok(None),
            McpRequest::Enable(name) => {
                self.hub.set_enabled(&name, true).map(|()| Some(format!("{name} is switching on")))
            }
            McpRequest::Disable(name) => self.hub.set_enabled(&name, false).map(|()| Some(format!("{name} is off"))),
            McpRequest::Retry(name) => self.hub.retry(&name).map(|()| Some(format!("trying {name} again"))),
            McpRequest::Import => self.import().map(Some),
        };
        let mut panel = self.panel();
        panel.message = match message {
            Ok(m) => m,
            Err(e) => Some(e),
        };
        panel
    }

    /// The panel again once no server is starting (or the start-up timeout passed), keeping
    /// the first answer's message.
    pub(super) async fn follow_up(&self, message: Option<String>) -> McpPanel {
        let deadline = std::time::Duration::from_millis(self.startup_timeout_ms + 500);
        self.hub.settled(deadline, &tokio_util::sync::CancellationToken::new()).await;
        let mut panel = self.panel();
        panel.message = message;
        panel.pending = false;
        panel.follow_up = true;
        panel
    }

    fn panel(&self) -> McpPanel {
        let named = tools_of(&self.hub);
        let servers: Vec<McpServerInfo> = self
            .hub
            .servers()
            .into_iter()
            .map(|s| {
                let tools: Vec<McpToolLine> = named
                    .iter()
                    .filter(|t| t.server() == s.name)
                    .map(|t| McpToolLine {
                        name: t.name().to_string(),
                        read_only: t.info().read_only,
                        tokens: spec_tokens(
                            &ToolSpec {
                                name: t.name().into(),
                                description: t.description().into(),
                                input_schema: t.schema(),
                            },
                            self.chars_per_token,
                        ),
                    })
                    .collect();
                let tools = if tools.is_empty() {
                    // Switched off: its last listing, for what switching it on would cost.
                    s.tools
                        .iter()
                        .map(|t| McpToolLine {
                            name: crate::tools::mcp::model_name(&s.name, &t.name),
                            read_only: t.read_only,
                            tokens: 0,
                        })
                        .collect()
                } else {
                    tools
                };
                McpServerInfo {
                    tokens: tools.iter().map(|t| t.tokens).sum(),
                    transport: s.transport,
                    state: s.state.label(),
                    error: match s.state {
                        ServerState::Failed { error } => Some(error),
                        ServerState::Starting | ServerState::Ready | ServerState::Disabled => None,
                    },
                    name: s.name,
                    tools,
                }
            })
            .collect();
        let tokens = servers.iter().map(|s| s.tokens).sum();
        let configured: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        McpPanel {
            pending: servers.iter().any(|s| s.state == "starting"),
            follow_up: false,
            offered_as: if tokens > self.budget_tokens { TOOL_SEARCH } else { "listed" },
            servers,
            tokens,
            budget_tokens: self.budget_tokens,
            message: None,
            proposed: read_mcp_json(&self.root)
                .map(|found| found.into_keys().filter(|n| !configured.contains(n)).collect())
                .unwrap_or_default(),
        }
    }

    fn import(&self) -> Result<String, String> {
        let proposed = read_mcp_json(&self.root)?;
        if proposed.is_empty() {
            return Err(format!("{} proposes no servers", self.root.join(".mcp.json").display()));
        }
        let configured: Vec<String> = self.hub.servers().into_iter().map(|s| s.name).collect();
        let new: Vec<(String, McpServerConfig)> =
            proposed.into_iter().filter(|(n, _)| !configured.contains(n)).collect();
        if new.is_empty() {
            return Ok("every server of .mcp.json is already configured".into());
        }
        for (name, _) in &new {
            if !crate::config::valid_server_name(name) {
                return Err(format!(
                    "`{name}` cannot be a server name here (letters, digits, -, _; no `__`); rename it in .mcp.json"
                ));
            }
        }
        let path = write_servers(&self.root, &new)?;
        let names: Vec<String> = new.iter().map(|(n, _)| n.clone()).collect();
        let written: Vec<String> =
            names.iter().map(|n| format!(".cairn/settings.local.toml#mcp_servers.{n}")).collect();
        if let Err(e) = self.trust.adopt(|item| written.contains(&item.id)) {
            tracing::warn!(error = %e, "could not add the imported servers to the folder's trust");
        }
        for (name, config) in new {
            // A repository's `.mcp.json` is the project's: it reads only what the user lets it.
            self.hub.add(&name, config.from_project(&self.mcp));
        }
        Ok(format!("imported {} into {}; starting them now", names.join(", "), path.display()))
    }
}

/// Add `servers` as `[mcp_servers.NAME]` tables to the project-local settings file (kept out
/// of git), keeping what the file has.
fn write_servers(root: &Path, servers: &[(String, McpServerConfig)]) -> Result<PathBuf, String> {
    let path = local_settings_path(root);
    let dir = path.parent().ok_or("the settings path has no folder")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = crate::config::read_for_edit(&path)?;
    crate::config::parse_settings(&text).map_err(|(line, _, m)| {
        format!("{}, line {line}: {m}; fix it, then import again (nothing was written)", path.display())
    })?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    let table = crate::config::table_for_edit(&mut doc, "mcp_servers", &path)?;
    for (name, server) in servers {
        let written = toml::to_string(server).map_err(|e| format!("cannot write server `{name}`: {e}"))?;
        let value: toml_edit::DocumentMut =
            written.parse().map_err(|e| format!("cannot write server `{name}`: {e}"))?;
        table.insert(name, toml_edit::Item::Table(value.as_table().clone()));
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, doc.to_string()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    let ignore = dir.join(".gitignore");
    let listed = std::fs::read_to_string(&ignore).unwrap_or_default();
    if !listed.lines().any(|l| matches!(l.trim(), "settings.local.toml" | "/settings.local.toml" | "*.local.toml")) {
        let sep = if listed.is_empty() || listed.ends_with('\n') { "" } else { "\n" };
        std::fs::write(&ignore, format!("{listed}{sep}settings.local.toml\n"))
            .map_err(|e| format!("cannot write {}: {e}", ignore.display()))?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_writes_the_proposed_servers_beside_the_files_settings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"api": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}}}}"#,
        )
        .unwrap();
        std::fs::create_dir(root.join(".cairn")).unwrap();
        std::fs::write(local_settings_path(root), "# mine\n[permissions]\nallow = [\"bash(ls)\"]\n").unwrap();
        let servers: Vec<_> = read_mcp_json(root).unwrap().into_iter().collect();
        write_servers(root, &servers).unwrap();
        let text = std::fs::read_to_string(local_settings_path(root)).unwrap();
        assert!(text.starts_with("# mine\n[permissions]"), "{text}");
        let settings = crate::config::parse_settings(&text).unwrap();
        assert_eq!(
            settings.mcp_servers["api"].headers["Authorization"], "Bearer ${API_KEY}",
            "the variable, not its value"
        );
        assert_eq!(settings.permissions.allow.len(), 1);
        assert!(std::fs::read_to_string(root.join(".cairn/.gitignore")).unwrap().contains("settings.local.toml"));
    }
}
