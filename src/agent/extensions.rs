//! What the user added to cairn, read once when the agent starts: MCP servers (the user's
//! config and the project's settings files), hooks (the same levels, run in that order),
//! skills and custom commands (the project's `.cairn/` and `.claude/` folders and the user's).
//! A file that cannot be read is named in a notice and left out; the rest still loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::link::Emitter;
use crate::agent::events::{CommandInfo, NoticeLevel};
use crate::config::{Config, HooksConfig, McpServerConfig, Redactor};
use crate::hooks::Hooks;
use crate::mcp::{McpHub, McpReport};
use crate::prompt::skills::{self, Skill};
use crate::prompt::{CustomCommand, commands};
use crate::trust::ProjectTrust;

pub(super) struct Extensions {
    pub hub: McpHub,
    pub hooks: Hooks,
    pub skills: Arc<Vec<Skill>>,
    /// The skills' lines of the system prompt, fixed for the agent's life (cached prefix).
    pub skills_listing: String,
    pub commands: Vec<CustomCommand>,
    /// What could not be loaded, said once at start.
    pub problems: Vec<String>,
    /// What SessionStart hooks said, for the session's first prompt.
    session_context: Option<String>,
    /// The first prompt has waited for servers still starting.
    pub waited_for_servers: bool,
}

/// The servers of every level, a later level replacing an earlier one of the same name; the
/// project's only in a trusted folder, and reading only the variables the user lets them.
fn servers(
    config: &Config,
    root: &Path,
    trust: &ProjectTrust,
    problems: &mut Vec<String>,
) -> (BTreeMap<String, McpServerConfig>, HooksConfig) {
    let mut servers = config.mcp_servers.clone();
    let mut hooks = config.hooks.clone();
    if !trust.is_trusted() {
        return (servers, hooks);
    }
    match crate::config::load_project_settings(root) {
        Ok(project) => {
            for file in [&project.shared, &project.local] {
                servers.extend(file.mcp_servers.iter().map(|(n, s)| (n.clone(), s.clone().from_project(&config.mcp))));
                hooks.extend(&file.hooks);
            }
        }
        Err(e) => problems.push(format!("{e}; its MCP servers and hooks are not loaded")),
    }
    (servers, hooks)
}

impl Extensions {
    pub(super) fn load(
        config: &Config,
        root: &Path,
        user_dirs: &[PathBuf],
        trust: &ProjectTrust,
        events: Emitter,
    ) -> Extensions {
        let mut problems = Vec::new();
        let (servers, hooks) = servers(config, root, trust, &mut problems);
        let report: crate::mcp::Reporter = Arc::new(move |report| match report {
            McpReport::Connected { .. } => {}
            McpReport::Failed { server, error } => events.notice(
                NoticeLevel::Warning,
                format!("MCP server `{server}` failed to start: {error}. /mcp shows it; it is tried again when needed"),
            ),
            McpReport::Died { server, error } => events.notice(
                NoticeLevel::Warning,
                format!("MCP server `{server}` stopped ({error}); it is restarted when one of its tools is called"),
            ),
        });
        let hub = McpHub::new(
            config.mcp.clone(),
            servers,
            root.to_path_buf(),
            Arc::new(|url: &str| crate::net::build_client(url).map_err(|e| e.to_string())),
            Arc::new(|name: &str| crate::config::env_var(name)),
            report,
        );
        // An untrusted project's folders are not read: only the user's own count.
        let project = trust.is_trusted().then_some(root);
        let (skills, skill_problems) = skills::discover(&skills::skill_dirs(project, user_dirs));
        let (commands, command_problems) = commands::discover(&commands::command_dirs(project, user_dirs));
        problems.extend(skill_problems.into_iter().map(|p| format!("skill {}: {}", p.path.display(), p.problem)));
        problems.extend(command_problems.into_iter().map(|p| format!("command {}: {}", p.path.display(), p.problem)));
        Extensions {
            hub,
            hooks: Hooks::new(hooks, root.to_path_buf()),
            skills_listing: skills::listing(&skills),
            skills: Arc::new(skills),
            commands,
            problems,
            session_context: None,
            waited_for_servers: false,
        }
    }

    /// What a subagent shares: the servers, hooks and skills (its parent reported what could
    /// not load, and its first request does not wait for servers again).
    pub(super) fn for_subagent(&self) -> Extensions {
        Extensions {
            hub: self.hub.clone(),
            hooks: self.hooks.clone(),
            skills: self.skills.clone(),
            skills_listing: self.skills_listing.clone(),
            commands: Vec::new(),
            problems: Vec::new(),
            session_context: None,
            waited_for_servers: true,
        }
    }

    pub(super) fn add_session_context(&mut self, context: &str) {
        let kept = self.session_context.get_or_insert_with(String::new);
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(context);
    }

    pub(super) fn take_session_context(&mut self) -> Option<String> {
        self.session_context.take()
    }

    /// Custom commands, then user-invocable skills no command hides.
    pub(super) fn command_list(&self) -> Vec<CommandInfo> {
        let mut list: Vec<CommandInfo> = self
            .commands
            .iter()
            .map(|c| CommandInfo {
                name: format!("/{}", c.name),
                argument_hint: c.argument_hint.clone(),
                description: c.description.clone(),
            })
            .collect();
        for skill in self.skills.iter().filter(|s| s.user_invocable) {
            if !self.commands.iter().any(|c| c.name == skill.name) {
                list.push(CommandInfo {
                    name: format!("/{}", skill.name),
                    argument_hint: String::new(),
                    description: format!("skill: {}", skill.description),
                });
            }
        }
        list
    }

    /// Whether `path` is a skill's file, which the model reads like the project's own.
    pub(super) fn is_skill_file(&self, path: &Path) -> bool {
        self.skills.iter().any(|s| match &s.dir {
            Some(dir) => path.starts_with(dir),
            None => path == s.path,
        })
    }
}

/// Values of the environment variables the MCP servers' settings name, so they are kept out
/// of everything stored (`${GITHUB_TOKEN}` in a header).
pub(super) fn redact_server_variables(config: &Config, root: &Path, trust: &ProjectTrust, redactor: &mut Redactor) {
    let mut ignored = Vec::new();
    let (servers, _) = servers(config, root, trust, &mut ignored);
    for server in servers.values() {
        let texts = server
            .headers
            .values()
            .chain(server.env.values())
            .chain(server.args.iter())
            .chain(server.url.iter())
            .chain(server.command.iter());
        // A variable a project's server may not read is not expanded, so there is nothing to
        // keep out (and `${HOME}` in a repository's file must not redact every path).
        for name in texts.flat_map(|t| crate::mcp::variables(t)).filter(|n| server.may_read(n)) {
            if let Some(value) = crate::config::env_var(&name) {
                redactor.add("an MCP server's setting", value.trim());
            }
        }
    }
}
