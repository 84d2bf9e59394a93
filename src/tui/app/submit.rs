//! What the prompt becomes when it is sent: a turn, a shell command, a slash command (a command
//! for the agent or a view to open), or a flash saying why not now.

use super::{Activity, App};
use crate::agent::{BackgroundRequest, LibraryRequest, SlashCommand, UserCommand, parse_shell, parse_slash_with};
use crate::tui::keys::{self, Action, GlobalAction};
use crate::tui::overlays::{
    ContextView, HelpView, McpView, MemoriesView, ModelsView, Overlay, RewindView, SessionsView, TextView,
};

/// Days `/usage` reports.
pub(super) const USAGE_DAYS: u32 = 30;
/// What the status line says while `/report` is written, until the notice answers it.
pub(super) const WRITING_REPORT: &str = "writing the session report…";
/// …and while `/stop N` ends a background command (the number follows).
pub(super) const STOPPING_JOB: &str = "stopping background command ";

impl App {
    /// A rewind changes files and the conversation: never under a running turn.
    fn idle_for(&mut self, what: &str) -> bool {
        if self.turn.busy {
            let interrupt = keys::hint(Action::Global(GlobalAction::Interrupt));
            self.flash(format!("wait for the turn to finish (or {interrupt}), then {what}"));
            return false;
        }
        true
    }

    pub(super) fn submit(&mut self) {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return;
        }
        if let Some(shell) = parse_shell(&text) {
            match shell {
                Err(message) => self.flash(message),
                Ok(command) => {
                    let typed = self.composer.take();
                    self.send_work(typed, command);
                }
            }
            return;
        }
        match parse_slash_with(&text, &self.agent.custom_commands) {
            Some(Err(message)) => self.flash(message),
            Some(Ok(command)) => {
                self.composer.take();
                self.slash(command);
            }
            None => {
                let prompt = self.composer.take();
                self.send_work(prompt.clone(), UserCommand::Submit(prompt));
            }
        }
    }

    /// A prompt, a custom command or a `!cmd` for the agent (shown as typed): queued while it
    /// is busy or still connecting.
    fn send_work(&mut self, typed: String, command: UserCommand) {
        self.transcript.follow();
        if self.turn.busy || self.agent.queue.is_none() {
            self.agent.pending.push(typed);
        }
        if self.agent.queue.is_some() {
            self.turn.busy = true;
            if self.turn.activity == Activity::Idle {
                self.turn.activity = Activity::Thinking;
                self.turn.started.get_or_insert(self.now);
            }
            self.send(command);
        }
    }

    fn slash(&mut self, command: SlashCommand) {
        match command {
            SlashCommand::Compact => {
                self.send(UserCommand::Compact);
                self.flash("compaction requested");
            }
            SlashCommand::Memories => self.open_memories(),
            SlashCommand::Forget(id) => {
                self.ask_library(LibraryRequest::Forget(id));
            }
            SlashCommand::Sessions | SlashCommand::Resume(None) => self.open_sessions(),
            SlashCommand::Resume(Some(id)) => self.send(UserCommand::ResumeSession(id)),
            SlashCommand::New => self.send(UserCommand::NewSession),
            SlashCommand::Mode(mode) => {
                self.session.mode = mode;
                self.send(UserCommand::SetMode(mode));
            }
            SlashCommand::Model(Some(name)) => self.send(UserCommand::SetModel(name)),
            SlashCommand::Model(None) => {
                if self.agent.queue.is_some() {
                    self.overlay = Some(Overlay::Models(ModelsView::default()));
                    self.send(UserCommand::ListModels);
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Usage => {
                if self.ask_library(LibraryRequest::Usage { days: USAGE_DAYS }) {
                    self.overlay = Some(Overlay::Text(TextView::loading("Usage (cost and tokens)")));
                }
            }
            SlashCommand::Report => {
                if self.agent.queue.is_some() {
                    self.send(UserCommand::WriteReport);
                    self.flash(WRITING_REPORT);
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Ps => {
                if self.agent.queue.is_some() {
                    self.send(UserCommand::Background(BackgroundRequest::List));
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Stop(id) => {
                if self.agent.queue.is_some() {
                    self.send(UserCommand::Background(BackgroundRequest::Stop(id)));
                    self.flash(format!("{STOPPING_JOB}{id}…"));
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Init => self.send_work("/init".to_string(), UserCommand::Init),
            SlashCommand::Export { format, path } => {
                if self.agent.queue.is_some() {
                    self.send(UserCommand::Export { format, path });
                    self.flash("exporting the conversation…");
                } else {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Context => {
                self.overlay = Some(Overlay::Context(ContextView::new(None)));
                self.send(UserCommand::DescribeContext);
            }
            SlashCommand::Rewind => self.open_rewind(),
            SlashCommand::Undo => {
                if self.idle_for("undo") && self.agent.queue.is_some() {
                    self.send(UserCommand::Undo);
                } else if self.agent.queue.is_none() {
                    self.flash("still connecting to the model provider…");
                }
            }
            SlashCommand::Diff(target) => match self.session.open.as_ref().map(|s| s.id.clone()) {
                Some(session) => {
                    self.ask_library(LibraryRequest::Diff { session, target });
                }
                None => self.flash("no session yet: nothing has changed"),
            },
            SlashCommand::Help => {
                self.overlay = Some(Overlay::Help(HelpView { scroll: 0, custom: self.agent.custom_commands.clone() }))
            }
            SlashCommand::Quit => self.quit = true,
            SlashCommand::Mcp(request) => {
                if !matches!(self.overlay, Some(Overlay::Mcp(_))) {
                    self.overlay = Some(Overlay::Mcp(McpView { panel: None, selected: 0 }));
                }
                self.send(UserCommand::Mcp(request));
            }
            SlashCommand::Custom { name, args } => {
                let shown = format!("/{name} {args}").trim_end().to_string();
                self.send_work(shown, UserCommand::RunCommand { name, args });
            }
        }
    }

    /// Ask the agent's library for something; a view waiting for the answer opens only when
    /// the agent is there to answer.
    pub(super) fn ask_library(&mut self, request: LibraryRequest) -> bool {
        if self.agent.queue.is_none() {
            self.flash("still connecting to the model provider…");
            return false;
        }
        self.send(UserCommand::Library(request));
        true
    }

    fn open_sessions(&mut self) {
        if self.ask_library(LibraryRequest::Sessions) {
            let current = self.session.open.as_ref().map(|s| s.id.clone());
            self.overlay = Some(Overlay::Sessions(SessionsView {
                items: Vec::new(),
                selected: 0,
                current,
                now: chrono::Utc::now(),
                error: None,
                loading: true,
            }));
        }
    }

    fn open_rewind(&mut self) {
        if !self.idle_for("rewind") {
            return;
        }
        let Some(session) = self.session.open.as_ref().map(|s| s.id.clone()) else {
            self.flash("no session yet: there is nothing to rewind");
            return;
        };
        if self.ask_library(LibraryRequest::Turns { session }) {
            self.overlay = Some(Overlay::Rewind(RewindView::new(chrono::Utc::now())));
        }
    }

    fn open_memories(&mut self) {
        if self.ask_library(LibraryRequest::Memories) {
            self.overlay = Some(Overlay::Memories(MemoriesView {
                items: Vec::new(),
                selected: 0,
                viewing: false,
                confirm_delete: None,
                now: chrono::Utc::now(),
                error: None,
                loading: true,
            }));
        }
    }
}
