//! Keys, pastes and the mouse: each key is looked up in the binding table for the focused part
//! (dialog, view, completion list, composer), then globally; unbound keys edit the prompt.
//! Slash commands are parsed with the agent's parser and become commands or views.

use ratatui::crossterm::event::{KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};

use super::{Activity, App, Phase};
use crate::agent::{LibraryRequest, UserCommand};
use crate::tui::cells::Cell;
use crate::tui::completion::CompletionKind;
use crate::tui::keys::{self, Action, CompletionAction, ComposerAction, GlobalAction, OverlayAction, PlanAction};
use crate::tui::overlays::{Overlay, TextView, ViewKey, ViewOutcome};
use crate::tui::search::SearchBar;

use super::search_input::typed_char;

/// Rows one wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

/// What a key's outcome is about: the view on screen, or the first approval dialog.
#[derive(Clone, Copy)]
enum Shown {
    Overlay,
    Approval,
}

impl App {
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let global = keys::global(&key);
        if let Phase::Setup { .. } = self.phase {
            if keys::setup(&key).is_some() || global == Some(GlobalAction::ClearOrQuit) {
                self.quit = true;
            }
            return;
        }
        if global != Some(GlobalAction::ClearOrQuit) {
            self.ctrl_c_at = None;
        }
        if !self.approvals.is_empty() {
            self.approval_key(key, global);
            return;
        }
        if self.overlay.is_some() {
            self.overlay_key(key, global);
            return;
        }
        if self.search.is_some() {
            self.search_key(key, global);
            return;
        }
        if self.composer.history_search().is_some() {
            if self.history_search_key(key, global) {
                return;
            }
        } else if self.plan_ready().is_some()
            && let Some(action) = keys::plan(&key)
        {
            self.plan_key(action);
            return;
        }
        if self.composer.completion.is_some()
            && let Some(action) = keys::completion(&key)
        {
            match action {
                CompletionAction::Next => self.composer.completion.iter_mut().for_each(|c| c.select_next()),
                CompletionAction::Prev => self.composer.completion.iter_mut().for_each(|c| c.select_prev()),
                CompletionAction::Accept => self.composer.accept_completion(),
                CompletionAction::Run => {
                    let runs = self.composer.completion.as_ref().is_some_and(|c| {
                        c.kind == CompletionKind::Command && c.current().is_some_and(|i| !i.insert.ends_with(' '))
                    });
                    self.composer.accept_completion();
                    if runs {
                        self.submit();
                    }
                }
                CompletionAction::Dismiss => self.composer.dismiss_completion(),
            }
            return;
        }
        if let Some(action) = keys::composer(&key) {
            match action {
                ComposerAction::Submit => {
                    self.last_typed = Some(self.now);
                    self.submit();
                }
                ComposerAction::Newline => {
                    self.last_typed = Some(self.now);
                    self.composer.insert_newline();
                }
                ComposerAction::HistoryPrev => {
                    if !(self.composer.cursor_on_first_line() && self.composer.history_prev()) {
                        self.composer.input(key, &self.files);
                    }
                }
                ComposerAction::HistoryNext => {
                    if !(self.composer.cursor_on_last_line() && self.composer.history_next()) {
                        self.composer.input(key, &self.files);
                    }
                }
                ComposerAction::OpenEditor => self.terminal.editor = Some(self.composer.text()),
                ComposerAction::DeleteToLineStart => self.composer.delete_to_line_start(&self.files),
                ComposerAction::Undo => self.composer.undo(&self.files),
                ComposerAction::SearchHistory => self.composer.start_history_search(),
            }
            return;
        }
        if let Some(action) = global {
            // End edits the prompt, and `/` starts a command, unless the transcript is
            // scrolled back (and, for `/`, nothing is being written).
            let following = self.transcript.is_following();
            let types = match action {
                GlobalAction::FollowTail => following,
                GlobalAction::SearchTranscript => {
                    typed_char(&key) == Some('/') && (following || !self.composer.is_empty())
                }
                _ => false,
            };
            if !types {
                self.global(action);
                return;
            }
        }
        self.last_typed = Some(self.now);
        self.composer.input(key, &self.files);
    }

    pub(super) fn global(&mut self, action: GlobalAction) {
        let page = self.transcript.page();
        match action {
            GlobalAction::ClearOrQuit => {
                if !self.composer.is_empty() {
                    self.composer.clear();
                    self.ctrl_c_at = None;
                } else if self.quit_armed() {
                    self.quit = true;
                } else {
                    if self.turn.busy {
                        self.send(UserCommand::Interrupt);
                    }
                    self.ctrl_c_at = Some(self.now);
                }
            }
            GlobalAction::Interrupt => {
                if self.turn.busy {
                    self.send(UserCommand::Interrupt);
                    self.flash("interrupting…");
                }
            }
            GlobalAction::CycleMode => {
                let next = self.session.mode.next();
                if self.agent.queue.is_some() {
                    self.session.mode = next;
                    self.send(UserCommand::SetMode(next));
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            GlobalAction::PageUp => self.transcript.scroll_up(page, &self.theme),
            GlobalAction::PageDown => self.transcript.scroll_down(page, &self.theme),
            GlobalAction::LineUp => self.transcript.scroll_up(1, &self.theme),
            GlobalAction::LineDown => self.transcript.scroll_down(1, &self.theme),
            GlobalAction::Top => self.transcript.scroll_to_top(&self.theme),
            GlobalAction::FollowTail => self.transcript.follow(),
            GlobalAction::ToggleToolOutput => {
                self.expand_all = !self.expand_all;
                let expand = self.expand_all;
                for i in 0..self.transcript.len() {
                    let differs = match self.transcript.get(i) {
                        Some(Cell::Tool(t)) => t.expanded != expand,
                        Some(Cell::Subagent(s)) => s.expanded != expand,
                        Some(Cell::Thinking(t)) => t.expanded != expand,
                        Some(Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) | Cell::Changes(_)) | None => false,
                    };
                    if differs {
                        self.transcript.update(i, |c| match c {
                            Cell::Tool(t) => t.expanded = expand,
                            Cell::Subagent(s) => s.expanded = expand,
                            Cell::Thinking(t) => t.expanded = expand,
                            Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) | Cell::Changes(_) => {}
                        });
                    }
                }
                self.flash(if expand { "tool output expanded" } else { "tool output collapsed" });
            }
            GlobalAction::ToggleTaskList => {
                self.task_list_panel = !self.task_list_panel;
                let text = match (self.task_list_panel, self.session.task_list.is_empty()) {
                    (true, false) => "task list shown",
                    (true, true) => "the task list shows when the agent starts one",
                    (false, _) => "task list hidden",
                };
                self.flash(text);
            }
            GlobalAction::CopyAnswer => {
                let answer = self.transcript.cells().rev().find_map(|c| match c {
                    Cell::Assistant(a) if !a.text.as_str().trim().is_empty() => Some(a.text.as_str().to_string()),
                    Cell::User(_)
                    | Cell::Assistant(_)
                    | Cell::Tool(_)
                    | Cell::Subagent(_)
                    | Cell::Notice(_)
                    | Cell::Thinking(_)
                    | Cell::Changes(_) => None,
                });
                match answer {
                    Some(text) => {
                        self.flash(format!("copied the last answer ({} characters)", text.chars().count()));
                        self.terminal.clipboard = Some(text);
                    }
                    None => self.flash("no answer to copy yet"),
                }
            }
            GlobalAction::ToggleMouse => {
                self.terminal.mouse_capture = !self.terminal.mouse_capture;
                self.flash(if self.terminal.mouse_capture {
                    "the wheel scrolls the transcript again".to_string()
                } else {
                    format!(
                        "the mouse is free: select text with it; {} to scroll with the wheel again",
                        keys::hint(Action::Global(GlobalAction::ToggleMouse))
                    )
                });
            }
            GlobalAction::Redraw => self.terminal.repaint = true,
            GlobalAction::SearchTranscript => {
                self.composer.dismiss_completion();
                self.search = Some(SearchBar::default());
            }
            GlobalAction::ShowToolOutput => self.show_tool_output(),
        }
    }

    /// Alt+O: the whole output of the newest tool call on screen (or in the session).
    fn show_tool_output(&mut self) {
        let is_tool = |i: &usize| matches!(self.transcript.get(*i), Some(Cell::Tool(t)) if t.is_finished());
        let on_screen = self.transcript.cells_on_screen().into_iter().rev().find(is_tool);
        let newest = on_screen.or_else(|| (0..self.transcript.len()).rev().find(is_tool));
        let Some(Cell::Tool(tool)) = newest.and_then(|i| self.transcript.get(i)) else {
            self.flash("no tool output to show yet");
            return;
        };
        let (call_id, title) = (tool.call_id.clone(), format!("{}  {}", tool.tool, tool.summary));
        let Some(session) = self.session.open.as_ref().map(|s| s.id.clone()) else { return };
        if self.ask_library(LibraryRequest::ToolOutput { session, call_id: call_id.clone() }) {
            self.overlay = Some(Overlay::Text(TextView::output(title, call_id)));
        }
    }

    /// A key while a plan waits to be carried out (the prompt empty).
    fn plan_key(&mut self, action: PlanAction) {
        let Some(ready) = self.plan.ready.clone() else { return };
        match action {
            PlanAction::CarryOut => {
                if self.agent.queue.is_none() {
                    self.flash("still connecting to the model provider…");
                    return;
                }
                self.plan.ready = None;
                self.session.mode = crate::conversation::Mode::Edit;
                self.turn.busy = true;
                self.turn.activity = Activity::Thinking;
                self.turn.started.get_or_insert(self.now);
                self.send(UserCommand::CarryOutPlan { edited: ready.edited.then_some(ready.plan) });
            }
            PlanAction::EditPlan => {
                self.plan.editing = true;
                self.terminal.editor = Some(ready.plan);
            }
            PlanAction::Dismiss => self.plan.ready = None,
        }
    }

    /// A key for the approval dialog on screen: the dialog handles it, the app does what it asks.
    fn approval_key(&mut self, key: KeyEvent, global: Option<GlobalAction>) {
        let Some(dialog) = self.approvals.front_mut() else { return };
        let outcome = dialog.on_key(key, global, self.now, &self.theme);
        self.follow(outcome, Shown::Approval);
    }

    /// A key for the view on screen: the view handles it, the app does what it asks.
    fn overlay_key(&mut self, key: KeyEvent, global: Option<GlobalAction>) {
        if self.text_view_search_key(&key) {
            return;
        }
        let view_key = match (keys::overlay(&key), global) {
            (Some(action), _) => ViewKey::Action(action),
            (None, Some(GlobalAction::ClearOrQuit)) => ViewKey::Action(OverlayAction::Close),
            (None, Some(GlobalAction::PageDown)) => ViewKey::Page(10),
            (None, Some(GlobalAction::PageUp)) => ViewKey::Page(-10),
            (None, Some(_) | None) => ViewKey::Other,
        };
        let Some(overlay) = &mut self.overlay else { return };
        let outcome = overlay.on_key(view_key);
        self.follow(outcome, Shown::Overlay);
    }

    /// What a view or the approval dialog asked for after a key.
    fn follow(&mut self, outcome: ViewOutcome, shown: Shown) {
        match outcome {
            ViewOutcome::Stay => {}
            ViewOutcome::Say(text) => self.flash(text),
            ViewOutcome::Global(action) => self.global(action),
            ViewOutcome::Close => self.close(shown),
            ViewOutcome::CloseSaying(text) => {
                self.close(shown);
                self.flash(text);
            }
            ViewOutcome::CloseSending { command, saying } => {
                self.close(shown);
                self.flash(saying);
                self.send(command);
            }
            ViewOutcome::Ask(request) => {
                self.ask_library(request);
            }
            ViewOutcome::Mcp(request) => self.send(UserCommand::Mcp(request)),
            ViewOutcome::SetModel(name) => {
                self.close(shown);
                self.send(UserCommand::SetModel(name));
            }
            ViewOutcome::Resume(id) => {
                self.close(shown);
                if self.turn.busy {
                    let interrupt = keys::hint(Action::Global(GlobalAction::Interrupt));
                    self.flash(format!("wait for the turn to finish (or {interrupt}), then resume"));
                } else {
                    self.send(UserCommand::ResumeSession(id));
                }
            }
            ViewOutcome::PlanRewind { user_seq, scope } => self.send(UserCommand::PlanRewind { user_seq, scope }),
            ViewOutcome::Rewind { user_seq, scope, overwrite } => {
                self.send(UserCommand::Rewind { user_seq, scope, overwrite })
            }
        }
    }

    fn close(&mut self, shown: Shown) {
        match shown {
            Shown::Overlay => self.overlay = None,
            Shown::Approval => {
                self.approvals.pop_front();
                // The dialog is answered: the turn goes on.
                if self.turn.busy {
                    self.turn.activity = Activity::Thinking;
                }
            }
        }
    }

    pub(crate) fn on_paste(&mut self, text: &str) {
        if let Some(dialog) = self.approvals.front_mut() {
            dialog.on_paste(text);
            return;
        }
        if self.overlay.is_none() && !matches!(self.phase, Phase::Setup { .. }) {
            self.composer.paste(text, &self.files);
        }
    }

    pub(crate) fn on_mouse(&mut self, ev: MouseEvent) {
        let up = matches!(ev.kind, MouseEventKind::ScrollUp);
        let down = matches!(ev.kind, MouseEventKind::ScrollDown);
        if let Some(dialog) = self.approvals.front_mut() {
            if up || down {
                dialog.scroll_by(if up { -(WHEEL_ROWS as isize) } else { WHEEL_ROWS as isize });
            }
            return;
        }
        if let Some(overlay) = &mut self.overlay {
            if up || down {
                overlay.on_wheel(up);
            }
            return;
        }
        match ev.kind {
            MouseEventKind::ScrollUp => self.transcript.scroll_up(WHEEL_ROWS, &self.theme),
            MouseEventKind::ScrollDown => self.transcript.scroll_down(WHEEL_ROWS, &self.theme),
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(i) = self.transcript.cell_at_row(ev.row)
                    && matches!(self.transcript.get(i), Some(Cell::Tool(_) | Cell::Subagent(_) | Cell::Thinking(_)))
                {
                    self.transcript.update(i, |c| match c {
                        Cell::Tool(t) => t.expanded = !t.expanded,
                        Cell::Subagent(s) => s.expanded = !s.expanded,
                        Cell::Thinking(t) => t.expanded = !t.expanded,
                        Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) | Cell::Changes(_) => {}
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
