//! The items of a settings file (`.cairn/settings.toml`, `.cairn/settings.local.toml`, or the
//! user's `config.toml`): hooks, MCP servers, allow rules, and the sandbox settings that widen
//! it — each with the line it is written on.

use std::collections::BTreeMap;

use super::items::{Item, Kind, Origin, digest, masked, masked_url, one_line};
use crate::config::{HooksConfig, McpServerConfig, RuleText, SandboxConfig, SandboxMode};

/// What one file says, with its text (for the lines) and how it is shown.
pub(super) struct SettingsText<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub origin: Origin,
    pub hooks: &'a HooksConfig,
    pub servers: &'a BTreeMap<String, McpServerConfig>,
    pub allow: &'a [RuleText],
    /// Only the project-local file's: the committed one may only tighten the sandbox.
    pub sandbox: Option<&'a SandboxConfig>,
}

/// The longest command or URL shown on one line.
const SHOWN: usize = 160;

impl SettingsText<'_> {
    pub fn items(&self) -> Vec<Item> {
        let mut out = Vec::new();
        for (event, hooks) in self.hooks.by_event() {
            let header = format!("[[hooks.{event}]]");
            let lines = header_lines(self.text, &header);
            for (i, hook) in hooks.iter().enumerate() {
                let matcher = if hook.matcher == "*" { String::new() } else { format!(" ({})", hook.matcher) };
                let timeout = hook.timeout_ms.to_string();
                out.push(self.item(
                    Kind::Hook,
                    lines.get(i).copied().or_else(|| first_line_with(self.text, event)),
                    format!("{event}{matcher}: {}", one_line(&hook.command, SHOWN)),
                    format!("hooks.{event}[{}]", i + 1),
                    Some(digest(&[
                        event.as_bytes(),
                        hook.matcher.as_bytes(),
                        hook.command.as_bytes(),
                        timeout.as_bytes(),
                    ])),
                ));
            }
        }
        for (name, server) in self.servers {
            let line = header_lines(self.text, &format!("[mcp_servers.{name}]"))
                .first()
                .or(header_lines(self.text, &format!("[mcp_servers.\"{name}\"]")).first())
                .copied()
                .or_else(|| first_line_with(self.text, name));
            let written = toml::to_string(server).unwrap_or_default();
            out.push(self.item(
                Kind::McpServer,
                line,
                server_line(name, server),
                format!("mcp_servers.{name}"),
                Some(digest(&[name.as_bytes(), written.as_bytes()])),
            ));
        }
        for rule in self.allow {
            out.push(self.item(
                Kind::AllowRule,
                Some(rule.line),
                format!("{} runs without asking", rule.text),
                format!("permissions.allow:{}", rule.text),
                Some(digest(&[rule.text.as_bytes()])),
            ));
        }
        if let Some(sandbox) = self.sandbox {
            let mut widen = |key: &str, value: String, id: String| {
                let line = first_line_with(self.text, key);
                out.push(self.item(
                    Kind::Sandbox,
                    line,
                    format!("{key} = {value}"),
                    id,
                    Some(digest(&[value.as_bytes()])),
                ));
            };
            if let Some(mode) = sandbox.mode.filter(|m| *m != SandboxMode::ReadOnly) {
                widen("mode", mode.label().to_string(), "sandbox.mode".into());
            }
            if sandbox.network == Some(true) {
                widen("network", "true".into(), "sandbox.network".into());
            }
            for root in &sandbox.writable_roots {
                widen("writable_roots", format!("\"{root}\""), format!("sandbox.writable_roots:{root}"));
            }
        }
        out
    }

    fn item(&self, kind: Kind, line: Option<usize>, what: String, key: String, digest: Option<String>) -> Item {
        Item {
            kind,
            origin: self.origin,
            file: self.file.to_string(),
            line: line.unwrap_or(1),
            what,
            id: format!("{}#{key}", self.file),
            digest,
        }
    }
}

/// `db: npx -y server (env GITHUB_TOKEN=${GITHUB_TOKEN})` or `docs: https://h/mcp (headers
/// Authorization)`, values masked.
fn server_line(name: &str, server: &McpServerConfig) -> String {
    let mut out = match (&server.command, &server.url) {
        (Some(command), _) => {
            let mut line = command.clone();
            for arg in &server.args {
                line.push(' ');
                line.push_str(arg);
            }
            format!("{name}: {}", one_line(&line, SHOWN))
        }
        (None, Some(url)) => format!("{name}: {}", one_line(&masked_url(url), SHOWN)),
        (None, None) => format!("{name}: (no command or url)"),
    };
    if !server.env.is_empty() {
        let env: Vec<String> = server.env.iter().map(|(k, v)| format!("{k}={}", masked(v))).collect();
        out.push_str(&format!(" (env {})", env.join(", ")));
    }
    if !server.headers.is_empty() {
        let headers: Vec<String> = server.headers.iter().map(|(k, v)| format!("{k}: {}", masked(v))).collect();
        out.push_str(&format!(" (headers {})", headers.join(", ")));
    }
    if !server.is_enabled() {
        out.push_str(" (switched off)");
    }
    out
}

/// The 1-based lines on which `header` is written, in order.
fn header_lines(text: &str, header: &str) -> Vec<usize> {
    text.lines().enumerate().filter(|(_, l)| l.trim() == header).map(|(i, _)| i + 1).collect()
}

/// The first line that mentions `word`.
fn first_line_with(text: &str, word: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(word)).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_setting_is_an_item_on_its_line_with_secrets_masked() {
        let text = "[permissions]\nallow = [\"bash(cargo test *)\"]\ndeny = [\"bash(rm *)\"]\n\n\
                    [[hooks.SessionStart]]\ncommand = \"./setup.sh\"\n\n[[hooks.PreToolUse]]\nmatcher = \"bash\"\ncommand = \"./a.sh\"\n\n\
                    [[hooks.SessionStart]]\ncommand = \"./second.sh\"\n\n\
                    [mcp_servers.db]\ncommand = \"npx\"\nargs = [\"-y\", \"db-server\"]\nenv = { TOKEN = \"${DB_TOKEN}\", PLAIN = \"literal-secret\" }\n\n\
                    [mcp_servers.web]\nurl = \"https://h.example/mcp?key=abc\"\nheaders = { Authorization = \"Bearer xyz\" }\n\n\
                    [sandbox]\nmode = \"full-access\"\nnetwork = true\n";
        let settings = crate::config::parse_settings(text).unwrap();
        let items = SettingsText {
            file: ".cairn/settings.local.toml",
            text,
            origin: Origin::Project,
            hooks: &settings.hooks,
            servers: &settings.mcp_servers,
            allow: &settings.permissions.allow,
            sandbox: Some(&settings.sandbox),
        }
        .items();
        let shown: Vec<String> = items.iter().map(Item::describe).collect();
        assert_eq!(
            shown,
            [
                "hook PreToolUse (bash): ./a.sh  (.cairn/settings.local.toml:8)",
                "hook SessionStart: ./setup.sh  (.cairn/settings.local.toml:5)",
                "hook SessionStart: ./second.sh  (.cairn/settings.local.toml:12)",
                "MCP server db: npx -y db-server (env PLAIN=***, TOKEN=${DB_TOKEN})  (.cairn/settings.local.toml:15)",
                "MCP server web: https://h.example/mcp?key=*** (headers Authorization: ***)  (.cairn/settings.local.toml:20)",
                "allow rule bash(cargo test *) runs without asking  (.cairn/settings.local.toml:2)",
                "sandbox mode = full-access  (.cairn/settings.local.toml:25)",
                "sandbox network = true  (.cairn/settings.local.toml:26)",
            ]
        );
        assert!(items.iter().all(Item::runs));
        assert_eq!(items[2].id, ".cairn/settings.local.toml#hooks.SessionStart[2]");
        assert!(!shown.concat().contains("literal-secret") && !shown.concat().contains("xyz"));
    }
}
