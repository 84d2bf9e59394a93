//! The trust dialog: shown before anything of a project runs, when its files configure things
//! that run or instruct and the user has not trusted them (or what runs changed since). It
//! lists each of them — what it runs, the file and the line — and takes `y` (trust, kept in the
//! user's config), `n` (work without them) or `q` (leave).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{footer, frame};
use crate::trust::{Change, Item, TrustQuestion};
use crate::tui::keys::{Action, TrustAction};
use crate::tui::theme::Theme;
use crate::tui::wrap::{Para, wrap_paras};

/// What the user answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustAnswer {
    Trust,
    Decline,
    Quit,
}

/// What the dialog shows: the folder, what changed since it was trusted (if it was), and
/// everything its files configure.
#[derive(Clone, Debug)]
pub struct TrustView {
    pub root: String,
    pub items: Vec<Item>,
    pub changes: Vec<Change>,
    /// When the folder was trusted before (RFC 3339), if it was.
    pub trusted_at: Option<String>,
    pub scroll: usize,
}

impl TrustView {
    pub fn of(question: &TrustQuestion) -> TrustView {
        TrustView {
            root: question.root().display().to_string(),
            items: question.inventory.items.clone(),
            changes: question.changes.clone(),
            trusted_at: question.trusted_at.clone(),
            scroll: 0,
        }
    }

    /// A key: an answer, or the list scrolled (`page` rows at a time).
    pub fn on_key(&mut self, action: TrustAction, page: usize) -> Option<TrustAnswer> {
        match action {
            TrustAction::Trust => return Some(TrustAnswer::Trust),
            TrustAction::Decline => return Some(TrustAnswer::Decline),
            TrustAction::Quit => return Some(TrustAnswer::Quit),
            TrustAction::ScrollUp => self.scroll = self.scroll.saturating_sub(1),
            TrustAction::ScrollDown => self.scroll += 1,
            TrustAction::PageUp => self.scroll = self.scroll.saturating_sub(page.max(1)),
            TrustAction::PageDown => self.scroll += page.max(1),
        }
        None
    }

    /// The rows of the dialog's body at `width` columns.
    fn body(&self, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        let mut paras = vec![Para::plain(vec![Span::styled(self.root.clone(), theme.title)])];
        let lead = match &self.trusted_at {
            Some(at) => format!(
                "You trusted this folder on {}. What its files run has changed since; none of it runs until you trust it again:",
                at.get(..10).unwrap_or(at)
            ),
            None => "cairn would run what is under Runs, and tell the model what is under Instructs. None \
                     of it happens until you trust this folder."
                .to_string(),
        };
        paras.push(Para::default());
        paras.push(Para::plain(vec![Span::styled(lead, theme.text)]));
        if !self.changes.is_empty() {
            paras.push(Para::default());
            for change in &self.changes {
                let label = if change.new { "new      " } else { "changed  " };
                paras.push(item_para(&change.item, label, theme));
            }
        }
        let runs: Vec<&Item> = self.items.iter().filter(|i| i.runs()).collect();
        let instructs: Vec<&Item> = self.items.iter().filter(|i| !i.runs()).collect();
        for (title, items) in [("Runs", runs), ("Instructs", instructs)] {
            if items.is_empty() {
                continue;
            }
            paras.push(Para::default());
            paras.push(Para::plain(vec![Span::styled(title.to_string(), theme.heading2)]));
            for item in items {
                paras.push(item_para(item, "", theme));
            }
        }
        wrap_paras(&paras, width)
    }

    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let w = area.width.min(110);
        // As tall as the list, at most the screen; the frame and a one-column margin inside.
        let rows = self.body(theme, w.saturating_sub(4));
        let h = u16::try_from(rows.len() + 2).unwrap_or(u16::MAX).min(area.height);
        let rect = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
        let foot = footer(
            &[
                (Action::Trust(TrustAction::Trust), "trust"),
                (Action::Trust(TrustAction::Decline), "don't trust"),
                (Action::Trust(TrustAction::Quit), "quit"),
                (Action::Trust(TrustAction::ScrollDown), "scroll"),
            ],
            theme,
        );
        let inner = frame(rect, buf, theme, "Do you trust the files in this folder?", foot);
        let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
        let height = inner.height as usize;
        self.scroll = self.scroll.min(rows.len().saturating_sub(height));
        let below = rows.len().saturating_sub(self.scroll + height);
        let mut shown: Vec<Line<'static>> = rows.into_iter().skip(self.scroll).take(height).collect();
        if below > 0
            && let Some(last) = shown.last_mut()
        {
            // The last row says what is hidden rather than showing half of it.
            *last = Line::from(Span::styled(format!("  ↓ {} more rows", below + 1), theme.dim));
        }
        Paragraph::new(shown).render(inner, buf);
    }
}

/// `hook  SessionStart: ./setup.sh  .cairn/settings.toml:6`, continuation rows indented.
fn item_para(item: &Item, label: &str, theme: &Theme) -> Para {
    let kind = format!("  {label}{:<14}", item.kind.label());
    let indent = " ".repeat(kind.chars().count());
    Para::prefixed(
        vec![Span::styled(kind, theme.key)],
        vec![Span::raw(indent)],
        vec![
            Span::styled(item.what.clone(), theme.text),
            Span::styled(format!("  {}:{}", item.file, item.line), theme.dim),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::{Kind, Origin};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn item(kind: Kind, file: &str, line: usize, what: &str, runs: bool) -> Item {
        Item {
            kind,
            origin: Origin::Project,
            file: file.into(),
            line,
            what: what.into(),
            id: file.into(),
            digest: runs.then(|| "00".into()),
        }
    }

    fn view(changed: bool) -> TrustView {
        let items = vec![
            item(Kind::Hook, ".cairn/settings.toml", 6, "SessionStart: ./scripts/setup.sh --install-deps", true),
            item(Kind::Hook, ".cairn/settings.toml", 10, "PreToolUse (bash): ./scripts/guard.sh", true),
            item(
                Kind::McpServer,
                ".cairn/settings.toml",
                14,
                "db: npx -y @acme/db-server (env DB_TOKEN=${DB_TOKEN})",
                true,
            ),
            item(
                Kind::Command,
                ".cairn/commands/deploy.md",
                4,
                "/deploy runs: git log --oneline -5; ./deploy.sh",
                true,
            ),
            item(Kind::Skill, ".claude/skills/pdf/", 1, "pdf: Fill PDF forms (with fill.py)", true),
            item(Kind::AllowRule, ".cairn/settings.local.toml", 2, "bash(make *) runs without asking", true),
            item(Kind::Sandbox, ".cairn/settings.local.toml", 5, "network = true", true),
            item(Kind::Instructions, "AGENTS.md", 1, "42 lines the model is told to follow", false),
            item(Kind::AgentType, ".claude/agents/reviewer.md", 1, "reviewer: Reviews diffs", false),
            item(Kind::Command, ".claude/commands/explain.md", 1, "/explain: Explain the code", false),
        ];
        let changes = if changed {
            vec![Change { item: items[0].clone(), new: false }, Change { item: items[2].clone(), new: true }]
        } else {
            Vec::new()
        };
        TrustView {
            root: "/home/me/code/acme-app".into(),
            items,
            changes,
            trusted_at: changed.then(|| "2026-03-14T09:26:53Z".into()),
            scroll: 0,
        }
    }

    fn screen(mut view: TrustView, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        let theme = Theme::fallback(true);
        terminal.draw(|f| view.render(f.area(), f.buffer_mut(), &theme)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buffer[(x, y)].symbol().to_string()).collect::<String>().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_dialog_lists_each_item_with_its_file_and_line() {
        insta::assert_snapshot!("trust_first_120x40", screen(view(false), 120, 40));
        insta::assert_snapshot!("trust_first_80x24", screen(view(false), 80, 24));
        insta::assert_snapshot!("trust_changed_120x40", screen(view(true), 120, 40));
    }

    #[test]
    fn keys_answer_or_scroll_within_the_list() {
        let mut v = view(false);
        assert_eq!(v.on_key(TrustAction::ScrollDown, 10), None);
        assert_eq!(v.on_key(TrustAction::PageDown, 10), None);
        assert_eq!(v.scroll, 11);
        // Drawn, the scroll stops where the last row shows.
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| v.render(f.area(), f.buffer_mut(), &Theme::fallback(true))).unwrap();
        assert!(v.scroll < 11, "{}", v.scroll);
        assert_eq!(v.on_key(TrustAction::Trust, 10), Some(TrustAnswer::Trust));
        assert_eq!(v.on_key(TrustAction::Decline, 10), Some(TrustAnswer::Decline));
        assert_eq!(v.on_key(TrustAction::Quit, 10), Some(TrustAnswer::Quit));
    }
}
