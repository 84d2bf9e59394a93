//! `/help`: generated from the key binding table and the agent's command table.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{ViewKey, ViewOutcome, footer, frame, view_area};
use crate::tui::keys::{self, Action, KeyContext, OverlayAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, truncate_spans, wrap_paras};

#[derive(Debug, Default)]
pub struct HelpView {
    pub scroll: usize,
    /// The project's and the user's custom commands and skills.
    pub custom: Vec<crate::agent::CommandInfo>,
}

impl HelpView {
    pub fn on_key(&mut self, key: ViewKey) -> ViewOutcome {
        super::scroll_only(&mut self.scroll, key)
    }

    pub fn scroll_by(&mut self, by: isize) {
        self.scroll = self.scroll.saturating_add_signed(by);
    }
}

/// Every line of the help text at `width`, descriptions wrapped under their column.
pub fn help_lines(theme: &Theme, width: u16, custom: &[crate::agent::CommandInfo]) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    // The key column fits the longest entry, so no description runs into its keys.
    let bindings = keys::active().bindings();
    let col = bindings
        .iter()
        .map(|b| keys::describe_keys(b).chars().count())
        .chain(crate::agent::COMMANDS.iter().map(|(n, a, _)| n.len() + a.len() + 1))
        .chain(custom.iter().map(|c| c.name.len() + c.argument_hint.len() + 1))
        .max()
        .unwrap_or(20)
        + 2;
    let row = |keys: String, what: &str| {
        wrap_paras(
            &[Para::prefixed(
                vec![Span::styled(format!("  {keys:<col$}"), theme.key)],
                vec![Span::raw(" ".repeat(col + 2))],
                vec![Span::styled(what.to_string(), theme.text)],
            )],
            width,
        )
    };
    out.push(Line::from(Span::styled("Commands", theme.heading2)));
    for (name, arg, what) in crate::agent::COMMANDS {
        let usage = if arg.is_empty() { name.to_string() } else { format!("{name} {arg}") };
        out.extend(row(usage, what));
    }
    if !custom.is_empty() {
        out.push(Line::default());
        out.push(Line::from(Span::styled("Custom commands and skills", theme.heading2)));
        for c in custom {
            let usage =
                if c.argument_hint.is_empty() { c.name.clone() } else { format!("{} {}", c.name, c.argument_hint) };
            out.extend(row(usage, &c.description));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("Shell commands", theme.heading2)));
    for (usage, what) in crate::agent::SHELL_PREFIXES {
        out.extend(row(usage.to_string(), what));
    }
    // Not the setup and trust screens: they come before the session, where /help is not typed.
    for context in KeyContext::ALL.into_iter().filter(|c| !matches!(c, KeyContext::Setup | KeyContext::Trust)) {
        out.push(Line::default());
        out.push(Line::from(Span::styled(context.title(), theme.heading2)));
        for b in bindings.iter().filter(|b| b.context() == context) {
            out.extend(row(keys::describe_keys(b), b.help));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("Editing", theme.heading2)));
    out.extend(wrap_paras(
        &[Para::prefixed(
            vec![Span::raw("  ")],
            vec![Span::raw("  ")],
            vec![Span::styled(
                "Emacs-style keys work in the prompt: Ctrl+A/E line start/end, Ctrl+W or Alt+Backspace delete a word, Ctrl+K delete to the end of the line, Ctrl+U/Ctrl+R undo/redo, Alt+B/F or Alt+←/→ move by word. With the mouse captured for wheel scrolling, hold Shift to select text.",
                theme.text,
            )],
        )],
        width,
    ));
    out
}

impl HelpView {
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = help_lines(theme, view_area(area, usize::MAX).width.saturating_sub(3), &self.custom).len();
        let area = view_area(area, rows);
        let foot = footer(
            &[(Action::Overlay(OverlayAction::Close), "close"), (Action::Overlay(OverlayAction::Next), "scroll")],
            theme,
        );
        let inner = frame(area, buf, theme, "Help — keys and commands", foot);
        let lines = help_lines(theme, inner.width.saturating_sub(1), &self.custom);
        let start = self.scroll.min(lines.len().saturating_sub(inner.height as usize));
        for (i, line) in lines.into_iter().skip(start).take(inner.height as usize).enumerate() {
            let line = Line::from(truncate_spans(line.spans, inner.width as usize));
            buf.set_line(inner.x + 1, inner.y + i as u16, &line, inner.width.saturating_sub(1));
        }
    }
}
