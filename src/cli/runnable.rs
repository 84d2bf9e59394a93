//! `cairn doctor`'s account of everything that can run: the user's hooks, MCP servers,
//! commands, skills, agent types and status command, the project's too, each with the file and line it comes
//! from, and whether the folder is trusted (so whether the project's are in force).

use super::startup::Startup;
use crate::trust::{Inventory, Origin, ProjectTrust, TrustCheck};

/// The section, and the folder's trust as a start of cairn would find it (for the rest of the
/// report). `None` when the project's settings cannot be read (the section says why).
pub(super) fn section(startup: &Startup, out: &mut String) -> Option<ProjectTrust> {
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    out.push_str("\nWhat can run\n");
    let user = Inventory::user(&startup.config, &startup.paths.config_file, &startup.paths.user_extension_dirs());
    let (trust, project) = match startup.trust_check() {
        Ok(TrustCheck::Settled(trust)) => {
            let state = match startup.config.trust.get(&startup.root.display().to_string()) {
                Some(entry) => format!("trusted (since {})", entry.at),
                None => "nothing to trust: its files configure nothing that runs or instructs".to_string(),
            };
            line(out, "this folder", state);
            let project = Inventory::project(&startup.root, &startup.cwd).unwrap_or_default();
            (trust, project)
        }
        Ok(TrustCheck::Ask(question)) => {
            let state = if question.trusted_at.is_some() {
                format!(
                    "not trusted as it is: {} changed since you trusted it; cairn asks before any of it runs",
                    plural(question.changes.len(), "thing that runs", "things that run")
                )
            } else {
                "not trusted: none of the project's items below runs or is read until you trust it (cairn asks, or --trust)"
                    .to_string()
            };
            line(out, "this folder", state);
            for change in &question.changes {
                line(out, "", format!("{}: {}", if change.new { "new" } else { "changed" }, change.item.describe()));
            }
            let project = question.inventory.clone();
            (question.decline(), project)
        }
        Err(e) => {
            line(out, "this folder", format!("cannot tell: {e}"));
            return None;
        }
    };
    let status = startup.config.tui.status_command.as_deref().filter(|c| !c.trim().is_empty());
    if user.is_empty() && project.is_empty() && status.is_none() {
        line(out, "", "nothing: no hooks, MCP servers, commands, skills, agent types or instructions".into());
    }
    if let Some(command) = status {
        // The user's own: it runs without the folder's trust, and no project's file sets it.
        let file = startup.paths.config_file.display();
        let at = std::fs::read_to_string(&startup.paths.config_file)
            .ok()
            .and_then(|t| t.lines().position(|l| l.trim_start().starts_with("status_command")))
            .map_or(String::new(), |i| format!(":{}", i + 1));
        let tui = &startup.config.tui;
        line(
            out,
            "status command",
            format!(
                "{command}  ({file}{at}; yours, runs in every folder; at most every {} ms, killed after {} ms)",
                tui.status_command_interval_ms, tui.status_command_timeout_ms
            ),
        );
    }
    let in_force = trust.is_trusted();
    for item in user.items.iter().chain(&project.items) {
        let whose = match item.origin {
            Origin::User => "yours",
            Origin::Project if in_force => "project",
            Origin::Project => "project, held",
        };
        line(out, item.kind.label(), format!("{}  ({}:{}; {whose})", item.what, item.file, item.line));
    }
    Some(trust)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
