//! Keys while something is being searched: the transcript (Ctrl+F, or `/` while scrolled
//! back), the prompt history (Ctrl+R), and a tool's output in its view. Typed characters edit
//! the query; the search actions jump between matches.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::App;
use crate::tui::keys::{self, GlobalAction, HistorySearchAction, SearchAction};
use crate::tui::overlays::Overlay;

/// A key that types text: a character without Ctrl or Alt.
pub(super) fn typed_char(key: &KeyEvent) -> Option<char> {
    match key.code {
        KeyCode::Char(c) if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => Some(c),
        _ => None,
    }
}

/// What a key does to a search query: a character added, the last one taken away.
enum QueryEdit {
    Push(char),
    Pop,
}

fn query_edit(key: &KeyEvent) -> Option<QueryEdit> {
    match (typed_char(key), key.code) {
        (Some(c), _) => Some(QueryEdit::Push(c)),
        (None, KeyCode::Backspace) => Some(QueryEdit::Pop),
        (None, _) => None,
    }
}

fn apply(edit: QueryEdit, query: &mut String) {
    match edit {
        QueryEdit::Push(c) => query.push(c),
        QueryEdit::Pop => {
            query.pop();
        }
    }
}

impl App {
    /// A key while the transcript search is open: it edits the query, jumps between matches,
    /// scrolls, or closes the search where it is.
    pub(super) fn search_key(&mut self, key: KeyEvent, global: Option<GlobalAction>) {
        let Some(bar) = &mut self.search else { return };
        match keys::search(&key) {
            Some(SearchAction::Older) => {
                let hit = bar.step(true);
                self.reveal(hit);
            }
            Some(SearchAction::Newer) => {
                let hit = bar.step(false);
                self.reveal(hit);
            }
            Some(SearchAction::Close) => self.close_search(),
            None => match (query_edit(&key), global) {
                (Some(edit), _) => {
                    apply(edit, &mut bar.query);
                    let hits = self.transcript.find(&bar.query, &self.theme);
                    bar.found(hits);
                    let hit = bar.hit();
                    if hit.is_none() {
                        self.transcript.clear_highlight();
                    }
                    self.reveal(hit);
                }
                (None, Some(GlobalAction::ClearOrQuit)) => self.close_search(),
                (
                    None,
                    Some(
                        a @ (GlobalAction::PageUp
                        | GlobalAction::PageDown
                        | GlobalAction::LineUp
                        | GlobalAction::LineDown
                        | GlobalAction::Top
                        | GlobalAction::FollowTail),
                    ),
                ) => self.global(a),
                (None, Some(_) | None) => {}
            },
        }
    }

    fn reveal(&mut self, hit: Option<(usize, usize)>) {
        if let Some((cell, row)) = hit {
            self.transcript.reveal(cell, row, &self.theme);
        }
    }

    fn close_search(&mut self) {
        self.search = None;
        self.transcript.clear_highlight();
    }

    /// A key while searching the prompt history (Ctrl+R). False when the key ends the search
    /// and should do what it does in the prompt.
    pub(super) fn history_search_key(&mut self, key: KeyEvent, global: Option<GlobalAction>) -> bool {
        match (keys::history_search(&key), query_edit(&key), global) {
            (Some(HistorySearchAction::Older), _, _) => self.composer.search_step(true),
            (Some(HistorySearchAction::Newer), _, _) => self.composer.search_step(false),
            (Some(HistorySearchAction::Accept), _, _) => self.composer.accept_history_search(),
            (Some(HistorySearchAction::Cancel), _, _) | (None, None, Some(GlobalAction::ClearOrQuit)) => {
                self.composer.cancel_history_search()
            }
            (None, Some(edit), _) => self.composer.search_type(|q| apply(edit, q)),
            (None, None, _) => {
                self.composer.accept_history_search();
                return false;
            }
        }
        true
    }

    /// A key for the search of the tool output view, while it is open. True when it took it.
    pub(super) fn text_view_search_key(&mut self, key: &KeyEvent) -> bool {
        let Some(Overlay::Text(view)) = &mut self.overlay else { return false };
        let Some(bar) = &mut view.search else { return false };
        match (keys::search(key), query_edit(key)) {
            (Some(SearchAction::Close), _) => view.search = None,
            (Some(SearchAction::Older), _) => {
                bar.step(true);
                view.show_hit();
            }
            (Some(SearchAction::Newer), _) => {
                bar.step(false);
                view.show_hit();
            }
            (None, Some(edit)) => {
                apply(edit, &mut bar.query);
                view.search_changed(&self.theme);
            }
            (None, None) => {}
        }
        true
    }
}
