//! `/mcp`: the MCP servers — state, transport, tools and what each costs in every request —
//! with Enter switching the selected server on or off (or trying a failed one again).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, footer, frame, moved, view_area};
use crate::agent::{McpPanel, McpRequest, McpServerInfo};
use crate::conversation::format_tokens;
use crate::conversation::tool_names::TOOL_SEARCH;
use crate::tui::keys::{Action, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::truncate_spans;

pub struct McpView {
    /// `None` until the agent answers.
    pub panel: Option<McpPanel>,
    pub selected: usize,
}

/// What Enter does to a server in this state.
fn toggle(server: &McpServerInfo) -> McpRequest {
    match server.state {
        "off" => McpRequest::Enable(server.name.clone()),
        "failed" => McpRequest::Retry(server.name.clone()),
        _ => McpRequest::Disable(server.name.clone()),
    }
}

impl McpView {
    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        let len = self.panel.as_ref().map_or(0, |p| p.servers.len());
        match key {
            ViewKey::Action(OverlayAction::Next) => self.selected = moved(self.selected, 1, len),
            ViewKey::Action(OverlayAction::Prev) => self.selected = moved(self.selected, -1, len),
            ViewKey::Page(by) => self.selected = moved(self.selected, by, len),
            ViewKey::Action(OverlayAction::Open) => {
                if let Some(server) = self.panel.as_ref().and_then(|p| p.servers.get(self.selected)) {
                    return ViewOutcome::Mcp(toggle(server));
                }
            }
            ViewKey::Action(
                OverlayAction::Close
                | OverlayAction::TogglePin
                | OverlayAction::ToggleGlobal
                | OverlayAction::Delete
                | OverlayAction::Search,
            )
            | ViewKey::Other => {}
        }
        ViewOutcome::Stay
    }

    pub fn move_by(&mut self, by: isize) {
        let len = self.panel.as_ref().map_or(0, |p| p.servers.len());
        self.selected = moved(self.selected, by, len);
    }

    pub fn lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let Some(panel) = &self.panel else { return vec![Line::from(Span::styled("asking the agent…", theme.dim))] };
        let mut out = Vec::new();
        if panel.servers.is_empty() {
            out.push(Line::from(Span::styled(
                "No MCP servers. Add [mcp_servers.NAME] to config.toml or .cairn/settings.toml (see the README).",
                theme.dim,
            )));
        }
        let how = if panel.offered_as == TOOL_SEARCH {
            format!(
                "{} of tool schemas, over the {} budget: the model gets tool_search and loads what it needs",
                format_tokens(panel.tokens),
                format_tokens(panel.budget_tokens)
            )
        } else {
            format!(
                "{} of tool schemas in every request (budget {})",
                format_tokens(panel.tokens),
                format_tokens(panel.budget_tokens)
            )
        };
        if !panel.servers.is_empty() {
            out.push(Line::from(Span::styled(how, theme.dim)));
            out.push(Line::default());
        }
        for (i, s) in panel.servers.iter().enumerate() {
            let marker = if i == self.selected { "▸ " } else { "  " };
            let state_style = match s.state {
                "connected" => theme.context_ok,
                "failed" => theme.context_blocking,
                "starting" => theme.context_warning,
                _ => theme.faint,
            };
            out.push(Line::from(vec![
                Span::styled(marker.to_string(), theme.key),
                Span::styled(s.name.clone(), theme.title),
                Span::raw("  "),
                Span::styled(s.state.to_string(), state_style),
                Span::styled(format!("  {} tools · {}  ", s.tools.len(), format_tokens(s.tokens)), theme.dim),
                Span::styled(s.transport.clone(), theme.faint),
            ]));
            if let Some(error) = &s.error {
                out.push(Line::from(Span::styled(format!("    {error}"), theme.context_blocking)));
            }
            if i == self.selected {
                for t in &s.tools {
                    let ro = if t.read_only { " (read-only)" } else { "" };
                    out.push(Line::from(Span::styled(format!("    {}{ro}", t.name), theme.text)));
                }
            }
        }
        if !panel.proposed.is_empty() {
            out.push(Line::default());
            out.push(Line::from(Span::styled(
                format!("The project's .mcp.json proposes {}: /mcp import to use them.", panel.proposed.join(", ")),
                theme.context_warning,
            )));
        }
        if let Some(message) = &panel.message {
            out.push(Line::default());
            out.push(Line::from(Span::styled(message.clone(), theme.text)));
        }
        out
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let lines = self.lines(theme);
        let area = view_area(area, lines.len());
        let foot = footer(
            &[
                (Action::Overlay(OverlayAction::Close), "close"),
                (Action::Overlay(OverlayAction::Next), "select"),
                (Action::Overlay(OverlayAction::Open), "switch on/off, retry"),
            ],
            theme,
        );
        let inner = frame(area, buf, theme, "MCP servers", foot);
        for (row, line) in lines.into_iter().take(inner.height as usize).enumerate() {
            let line = Line::from(truncate_spans(line.spans, inner.width as usize));
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::McpServerInfo;

    fn server(name: &str, state: &'static str) -> McpServerInfo {
        McpServerInfo {
            name: name.into(),
            transport: "stdio: srv".into(),
            state,
            error: None,
            tools: Vec::new(),
            tokens: 120,
        }
    }

    #[test]
    fn enter_switches_off_on_or_retries_by_state() {
        let panel = McpPanel {
            servers: vec![server("a", "connected"), server("b", "off"), server("c", "failed")],
            tokens: 360,
            budget_tokens: 4_000,
            offered_as: "listed",
            message: None,
            proposed: Vec::new(),
            pending: false,
            follow_up: false,
        };
        let mut view = McpView { panel: Some(panel), selected: 0 };
        let open = ViewKey::Action(OverlayAction::Open);
        assert_eq!(view.on_key(open), ViewOutcome::Mcp(McpRequest::Disable("a".into())));
        view.on_key(ViewKey::Action(OverlayAction::Next));
        assert_eq!(view.on_key(open), ViewOutcome::Mcp(McpRequest::Enable("b".into())));
        view.on_key(ViewKey::Page(5));
        assert_eq!(view.on_key(open), ViewOutcome::Mcp(McpRequest::Retry("c".into())));
    }
}
