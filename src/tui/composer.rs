//! The composer: a multi-line editor (ratatui-textarea, with readline-style editing keys), the
//! prompt history walked with Up/Down, and the completion list for `/commands` and `@paths`.

use ratatui::crossterm::event::KeyEvent;
use ratatui::style::Style;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::completion::{self, Completion, FileIndex};
use super::theme::Theme;
use super::wrap::width;

/// Prompts remembered for Up/Down in one run.
const MAX_HISTORY: usize = 500;
pub const PLACEHOLDER: &str = "Ask cairn anything · / for commands · @ to mention a file";

pub struct Composer {
    textarea: TextArea<'static>,
    history: Vec<String>,
    /// Position while walking the history; `None` when editing a fresh prompt.
    history_pos: Option<usize>,
    /// What was being written before walking the history.
    draft: String,
    pub completion: Option<Completion>,
    /// The token the user dismissed completion for, so Esc keeps it closed while it is unchanged.
    dismissed: Option<(usize, usize, String)>,
    /// Custom commands and skills, completed like the built-in commands.
    custom: Vec<crate::agent::CommandInfo>,
    /// Ctrl+R: searching the prompt history.
    search: Option<HistorySearch>,
}

/// A search through earlier prompts (Ctrl+R), newest match first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistorySearch {
    pub query: String,
    /// The history entry shown, when the query matches one.
    pub hit: Option<usize>,
    /// The prompt as it was before the search, restored by cancelling.
    draft: String,
}

impl Composer {
    pub fn new(theme: &Theme) -> Composer {
        let mut c = Composer {
            textarea: TextArea::default(),
            history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            completion: None,
            dismissed: None,
            custom: Vec::new(),
            search: None,
        };
        c.apply_theme(theme);
        c
    }

    pub fn apply_theme(&mut self, theme: &Theme) {
        let t = &mut self.textarea;
        t.set_wrap_mode(WrapMode::WordOrGlyph);
        t.set_style(theme.composer_text);
        t.set_cursor_line_style(Style::default());
        t.set_cursor_style(theme.composer_cursor);
        t.set_placeholder_text(PLACEHOLDER);
        t.set_placeholder_style(theme.composer_placeholder);
        t.set_tab_length(4);
    }

    pub fn textarea(&self) -> &TextArea<'static> {
        &self.textarea
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.lines().iter().all(|l| l.is_empty())
    }

    /// Replace the text, cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(String::from).collect();
        let mut t = TextArea::new(lines);
        t.set_wrap_mode(self.textarea.wrap_mode());
        t.set_style(self.textarea.style());
        t.set_cursor_line_style(Style::default());
        t.set_cursor_style(self.textarea.cursor_style());
        t.set_placeholder_text(PLACEHOLDER);
        if let Some(s) = self.textarea.placeholder_style() {
            t.set_placeholder_style(s);
        }
        t.set_tab_length(4);
        t.move_cursor(CursorMove::Bottom);
        t.move_cursor(CursorMove::End);
        self.textarea = t;
        self.completion = None;
    }

    pub fn clear(&mut self) {
        self.set_text("");
        self.history_pos = None;
        self.dismissed = None;
    }

    /// Take the prompt to send, remembering it in the history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > MAX_HISTORY {
                self.history.remove(0);
            }
        }
        self.clear();
        text
    }

    /// Seed the history (the prompts of a resumed session).
    pub fn remember(&mut self, prompts: impl IntoIterator<Item = String>) {
        for p in prompts {
            if self.history.last() != Some(&p) {
                self.history.push(p);
            }
        }
        let excess = self.history.len().saturating_sub(MAX_HISTORY);
        self.history.drain(..excess);
    }

    /// An editing key; returns whether the text changed.
    pub fn input(&mut self, key: KeyEvent, files: &FileIndex) -> bool {
        let changed = self.textarea.input(key);
        self.refresh_completion(files);
        changed
    }

    /// Ctrl+U: delete from the cursor to the start of its line.
    pub fn delete_to_line_start(&mut self, files: &FileIndex) {
        self.textarea.delete_line_by_head();
        self.refresh_completion(files);
    }

    /// Ctrl+Z: undo the last edit.
    pub fn undo(&mut self, files: &FileIndex) {
        self.textarea.undo();
        self.refresh_completion(files);
    }

    /// The history search in progress, if any.
    pub fn history_search(&self) -> Option<&HistorySearch> {
        self.search.as_ref()
    }

    /// Ctrl+R: start searching earlier prompts; the prompt so far comes back on cancel.
    pub fn start_history_search(&mut self) {
        self.completion = None;
        self.search = Some(HistorySearch { query: String::new(), hit: None, draft: self.text() });
    }

    /// The query changed: show the newest prompt that contains it.
    pub fn search_type(&mut self, edit: impl FnOnce(&mut String)) {
        let Some(search) = &mut self.search else { return };
        edit(&mut search.query);
        let hit = self.find_in_history(self.history.len(), true);
        self.show_search_hit(hit);
    }

    /// Ctrl+R again: an older match; Down: a newer one. Stays put when there is none.
    pub fn search_step(&mut self, older: bool) {
        let Some(hit) = self.search.as_ref().and_then(|s| s.hit) else { return };
        if let Some(next) = self.find_in_history(if older { hit } else { hit + 1 }, older) {
            self.show_search_hit(Some(next));
        }
    }

    /// The history entry before `from` (older) or from `from` on (newer) containing the query.
    fn find_in_history(&self, from: usize, older: bool) -> Option<usize> {
        let query = self.search.as_ref()?.query.to_lowercase();
        if query.is_empty() {
            return None;
        }
        let matches = |i: &usize| self.history[*i].to_lowercase().contains(&query);
        if older {
            (0..from.min(self.history.len())).rev().find(matches)
        } else {
            (from..self.history.len()).find(matches)
        }
    }

    /// Show history entry `hit`, or the draft when nothing matches.
    fn show_search_hit(&mut self, hit: Option<usize>) {
        let Some(search) = self.search.take() else { return };
        let text = match hit {
            Some(i) => self.history[i].clone(),
            None => search.draft.clone(),
        };
        self.set_text(&text);
        self.search = Some(HistorySearch { hit, ..search });
    }

    /// Enter: keep the match in the prompt, to edit or send.
    pub fn accept_history_search(&mut self) {
        self.search = None;
    }

    /// Esc: back to the prompt as it was.
    pub fn cancel_history_search(&mut self) {
        if let Some(search) = self.search.take() {
            self.set_text(&search.draft);
        }
    }

    pub fn insert_newline(&mut self) {
        self.textarea.insert_newline();
        self.completion = None;
    }

    /// A bracketed paste: inserted as typed text, newlines kept, never sent.
    pub fn paste(&mut self, text: &str, files: &FileIndex) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.textarea.insert_str(text);
        self.refresh_completion(files);
    }

    pub fn cursor_on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    pub fn cursor_on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Up: the previous prompt. Returns false when there is none.
    pub fn history_prev(&mut self) -> bool {
        if self.history.is_empty() {
            return false;
        }
        let pos = match self.history_pos {
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(p) => p - 1,
        };
        self.history_pos = Some(pos);
        let text = self.history[pos].clone();
        self.set_text(&text);
        true
    }

    /// Down: the next prompt, then back to the draft.
    pub fn history_next(&mut self) -> bool {
        let Some(pos) = self.history_pos else { return false };
        if pos + 1 < self.history.len() {
            self.history_pos = Some(pos + 1);
            let text = self.history[pos + 1].clone();
            self.set_text(&text);
        } else {
            self.history_pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
        }
        true
    }

    pub fn set_custom_commands(&mut self, custom: Vec<crate::agent::CommandInfo>) {
        self.custom = custom;
    }

    pub fn refresh_completion(&mut self, files: &FileIndex) {
        let (row, col) = (self.textarea.cursor().0, self.textarea.cursor().1);
        let found = completion::complete_with(self.textarea.lines(), row, col, files, &self.custom);
        self.completion = match found {
            Some(c) => {
                let token: String = self
                    .textarea
                    .lines()
                    .get(c.row)
                    .map(|l| l.chars().skip(c.col).take(c.len).collect())
                    .unwrap_or_default();
                if self.dismissed.as_ref() == Some(&(c.row, c.col, token)) {
                    None
                } else {
                    // Keep the selection while the list is the same.
                    let selected =
                        self.completion.as_ref().filter(|old| old.items == c.items).map_or(0, |old| old.selected);
                    Some(Completion { selected, ..c })
                }
            }
            None => None,
        };
    }

    pub fn dismiss_completion(&mut self) {
        if let Some(c) = self.completion.take() {
            let token: String = self
                .textarea
                .lines()
                .get(c.row)
                .map(|l| l.chars().skip(c.col).take(c.len).collect())
                .unwrap_or_default();
            self.dismissed = Some((c.row, c.col, token));
        }
    }

    /// Replace the completed token with the selected candidate.
    pub fn accept_completion(&mut self) {
        let Some(c) = self.completion.take() else { return };
        let Some(candidate) = c.current().cloned() else { return };
        let mut lines: Vec<String> = self.textarea.lines().to_vec();
        let Some(line) = lines.get_mut(c.row) else { return };
        let chars: Vec<char> = line.chars().collect();
        let before: String = chars[..c.col.min(chars.len())].iter().collect();
        let after: String = chars[(c.col + c.len).min(chars.len())..].iter().collect();
        let mut insert = candidate.insert.clone();
        // A file mention, and a command that takes words after it, are followed by a space so
        // typing can go on (Enter on a command runs it as it is; see `CompletionAction::Run`).
        if (insert.starts_with('@') || candidate.takes_argument) && !insert.ends_with(' ') && !after.starts_with(' ') {
            insert.push(' ');
        }
        *line = format!("{before}{insert}{after}");
        let cursor_col = before.chars().count() + insert.chars().count();
        self.set_text(&lines.join("\n"));
        self.textarea.move_cursor(CursorMove::Jump(c.row as u16, cursor_col as u16));
    }

    /// Rows the text takes at `inner_width`, wrapped (at least one).
    pub fn rows(&self, inner_width: u16) -> u16 {
        let w = inner_width.max(1) as usize;
        let rows: usize = self.textarea.lines().iter().map(|l| width(l).div_ceil(w).max(1)).sum();
        rows.max(1) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    fn typed(c: &mut Composer, s: &str) {
        for ch in s.chars() {
            c.input(KeyEvent::new(KeyCode::Char(ch), KeyModifiers::NONE), &FileIndex::default());
        }
    }

    #[test]
    fn history_walks_back_and_returns_to_the_draft() {
        let mut c = Composer::new(&Theme::fallback(true));
        typed(&mut c, "first");
        c.take();
        typed(&mut c, "second");
        c.take();
        typed(&mut c, "dra");
        assert!(c.history_prev());
        assert_eq!(c.text(), "second");
        assert!(c.history_prev());
        assert_eq!(c.text(), "first");
        assert!(!c.history_prev(), "no older prompt");
        assert!(c.history_next());
        assert!(c.history_next());
        assert_eq!(c.text(), "dra");
    }

    #[test]
    fn ctrl_r_finds_older_prompts_and_esc_restores_the_draft() {
        let mut c = Composer::new(&Theme::fallback(true));
        c.remember(["cargo test cart".to_string(), "fix the build".to_string(), "cargo clippy".to_string()]);
        typed(&mut c, "draft");
        c.start_history_search();
        c.search_type(|q| q.push_str("cargo"));
        assert_eq!(c.text(), "cargo clippy", "the newest match first");
        c.search_step(true);
        assert_eq!(c.text(), "cargo test cart");
        c.search_step(true);
        assert_eq!(c.text(), "cargo test cart", "no older match: it stays");
        c.search_step(false);
        assert_eq!(c.text(), "cargo clippy");
        c.search_type(|q| q.push_str("zzz"));
        assert_eq!(c.history_search().unwrap().hit, None);
        c.cancel_history_search();
        assert_eq!(c.text(), "draft");
        c.start_history_search();
        c.search_type(|q| q.push_str("BUILD"));
        c.accept_history_search();
        assert_eq!((c.text(), c.history_search()), ("fix the build".to_string(), None));
    }

    #[test]
    fn ctrl_u_deletes_to_the_start_of_the_line_and_ctrl_z_undoes() {
        let mut c = Composer::new(&Theme::fallback(true));
        typed(&mut c, "first line");
        c.insert_newline();
        typed(&mut c, "second line");
        c.delete_to_line_start(&FileIndex::default());
        assert_eq!(c.text(), "first line\n");
        c.undo(&FileIndex::default());
        assert_eq!(c.text(), "first line\nsecond line");
    }

    #[test]
    fn paste_keeps_newlines_and_does_not_send() {
        let mut c = Composer::new(&Theme::fallback(true));
        c.paste("line one\r\nline two", &FileIndex::default());
        assert_eq!(c.text(), "line one\nline two");
    }

    #[test]
    fn accepting_a_command_replaces_the_typed_prefix() {
        let mut c = Composer::new(&Theme::fallback(true));
        typed(&mut c, "/mo");
        assert!(c.completion.is_some());
        c.accept_completion();
        assert_eq!(c.text(), "/mode ");
        assert!(c.completion.is_none());
    }

    #[test]
    fn accepting_a_custom_command_leaves_a_space_for_its_arguments() {
        let mut c = Composer::new(&Theme::fallback(true));
        c.set_custom_commands(vec![crate::agent::CommandInfo {
            name: "/fix".into(),
            argument_hint: String::new(),
            description: "Fix a test".into(),
        }]);
        typed(&mut c, "/fi");
        c.accept_completion();
        typed(&mut c, "test_mean");
        assert_eq!(c.text(), "/fix test_mean");
    }

    #[test]
    fn accepting_a_file_keeps_the_rest_of_the_prompt() {
        let files = FileIndex::from_files(vec!["src/lib.rs".into()]);
        let mut c = Composer::new(&Theme::fallback(true));
        c.set_text("read @lib");
        c.refresh_completion(&files);
        c.accept_completion();
        assert_eq!(c.text(), "read @src/lib.rs ");
    }

    #[test]
    fn a_dismissed_list_stays_closed_until_the_token_changes() {
        let mut c = Composer::new(&Theme::fallback(true));
        typed(&mut c, "/he");
        c.dismiss_completion();
        c.refresh_completion(&FileIndex::default());
        assert!(c.completion.is_none());
        typed(&mut c, "l");
        assert!(c.completion.is_some());
    }
}
