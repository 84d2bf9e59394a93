//! The interface's state: transcript, composer, status, dialogs and views. Agent events change
//! it (`agent_events.rs`), keys change it (`input.rs`), and `render.rs` draws it; nothing here
//! decides anything about the conversation — prompts and answers go to the agent as commands.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

mod agent_events;
mod answers;
#[cfg(test)]
pub(crate) mod fixture;
mod history;
mod input;
mod scrollback;
mod search_input;
mod state;
mod streaming;
mod subagents;
mod submit;

use tokio::sync::mpsc::UnboundedSender;

use crate::agent::UserCommand;
use crate::config::{NotifyConfig, NotifyMethod};
use crate::conversation::Mode;
pub(crate) use crate::tui::activity::Activity;
use crate::tui::cells::{Cell, NoticeCell, NoticeKind};
use crate::tui::completion::FileIndex;
use crate::tui::composer::Composer;
use crate::tui::overlays::{ApprovalDialog, Overlay};
use crate::tui::search::SearchBar;
use crate::tui::status::StatusLine;
use crate::tui::theme::Theme;
use crate::tui::transcript::Transcript;
pub use state::PlanReady;
use state::{AgentLink, OpenSession, PlanView, SessionView, TerminalRequests, TurnView};

/// How long a second Ctrl+C still counts as "twice".
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a status-line message stays.
const FLASH_FOR: Duration = Duration::from_secs(4);

/// Where the interface is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The first frame is up; the provider is being resolved.
    Starting,
    Ready,
    /// No usable provider: the setup screen explains what to set.
    Setup {
        message: String,
    },
}

pub struct App {
    theme: Theme,
    transcript: Transcript,
    composer: Composer,
    files: FileIndex,
    phase: Phase,
    /// The session on screen.
    session: SessionView,
    /// The turn in flight.
    turn: TurnView,
    overlay: Option<Overlay>,
    /// Approval requests; the first is on screen.
    approvals: VecDeque<ApprovalDialog>,
    /// Searching the transcript (Ctrl+F, or `/` while scrolled back).
    search: Option<SearchBar>,
    plan: PlanView,
    agent: AgentLink,
    terminal: TerminalRequests,
    /// Every tool call's output is expanded (Ctrl+O).
    expand_all: bool,
    /// The task list panel is wanted (Ctrl+T hides and shows it); drawn when there is a list.
    task_list_panel: bool,
    /// When Ctrl+C was pressed on an empty prompt: a second press soon after quits.
    ctrl_c_at: Option<Instant>,
    /// When a key last edited the prompt (a dialog opening then guards its answer keys).
    last_typed: Option<Instant>,
    /// The status line's message, and when it was set.
    flash: Option<(String, Instant)>,
    /// The user asked to leave.
    quit: bool,
    /// The time frames are drawn at (set before each draw; fixed in tests).
    now: Instant,
    /// When the interface started: the spinner's phase when nothing is timed.
    epoch: Instant,
    /// The user's own status line, when `[tui] status_command` is set.
    user_status: Option<crate::tui::user_status::UserStatus>,
}

impl App {
    pub fn new(theme: Theme, files: FileIndex) -> App {
        let composer = Composer::new(&theme);
        let now = Instant::now();
        App {
            theme,
            transcript: Transcript::new(),
            composer,
            files,
            phase: Phase::Starting,
            session: SessionView::default(),
            turn: TurnView::default(),
            overlay: None,
            approvals: VecDeque::new(),
            search: None,
            plan: PlanView::default(),
            agent: AgentLink::default(),
            terminal: TerminalRequests::default(),
            expand_all: false,
            task_list_panel: true,
            ctrl_c_at: None,
            last_typed: None,
            flash: None,
            quit: false,
            now,
            epoch: now,
            user_status: None,
        }
    }

    /// Show the user's status command's line under the composer.
    pub fn set_user_status(&mut self, status: crate::tui::user_status::UserStatus) {
        self.user_status = Some(status);
    }

    /// Offer the user's status command the figures as they are now, and take what it answered;
    /// whether the screen changed. A failure is told once (until it answers again).
    pub fn sync_user_status(&mut self) -> bool {
        let Some(status) = &self.user_status else { return false };
        status.offer(&crate::tui::user_status::StatusFigures {
            session_id: self.session.open.as_ref().map(|s| s.id.as_str()),
            model: &self.session.model,
            mode: self.session.mode,
            context: self.session.context,
            window: self.session.window,
            busy: self.turn.busy,
            background: self.session.background,
        });
        let (changed, failed) = match &mut self.user_status {
            Some(status) => status.take_answers(),
            None => (false, None),
        };
        if let Some(why) = &failed {
            self.notice(
                NoticeKind::Warning,
                format!("your status command (tui.status_command in config.toml) failed: {why}; its line keeps what it last printed"),
            );
        }
        changed || failed.is_some()
    }

    /// The line the user's status command printed last.
    pub(crate) fn user_status_line(&self) -> Option<&str> {
        self.user_status.as_ref().and_then(|s| s.line())
    }

    /// The agent is running: send what was typed while connecting.
    pub fn connect(&mut self, commands: UnboundedSender<UserCommand>) {
        self.phase = Phase::Ready;
        if self.turn.activity == Activity::Connecting {
            self.turn.activity = Activity::Idle;
        }
        for prompt in &self.agent.pending {
            let command = match crate::agent::parse_shell(prompt) {
                Some(Ok(shell)) => shell,
                Some(Err(_)) | None => UserCommand::Submit(prompt.clone()),
            };
            // A closed channel is reported by `send` below, on the next command.
            let _ = commands.send(command);
        }
        self.agent.queue = Some(commands);
    }

    /// A prompt given on the command line: sent as soon as the agent is there.
    pub(crate) fn send_first(&mut self, prompt: String) {
        self.composer.remember([prompt.clone()]);
        self.agent.pending.push(prompt);
    }

    /// How to tell the user cairn needs them (`[notify]`).
    pub(crate) fn set_notifications(&mut self, notify: NotifyConfig) {
        self.terminal.notify = notify;
    }

    /// Ring or notify, as configured: `title` says what happened.
    pub(crate) fn notify_user(&mut self, message: &str) {
        let clean: String = message.chars().filter(|c| !c.is_control() && *c != ';').collect();
        self.terminal.notification = match self.terminal.notify.method {
            NotifyMethod::Off => None,
            NotifyMethod::Bell => Some("\x07".to_string()),
            NotifyMethod::Osc9 => Some(format!("\x1b]9;cairn: {clean}\x1b\\")),
            NotifyMethod::Osc777 => Some(format!("\x1b]777;notify;cairn;{clean}\x1b\\")),
        };
    }

    /// What to write to the terminal to ring or notify, once.
    pub(crate) fn take_notification(&mut self) -> Option<String> {
        self.terminal.notification.take()
    }

    /// No provider: show the setup screen.
    pub(crate) fn setup_needed(&mut self, message: String) {
        self.phase = Phase::Setup { message };
        self.turn.activity = Activity::Idle;
    }

    pub(crate) fn send(&mut self, command: UserCommand) {
        match &self.agent.queue {
            Some(agent) => {
                if agent.send(command).is_err() {
                    self.notice(
                        NoticeKind::Error,
                        "the agent has stopped; see the log in the data folder, then restart cairn",
                    );
                }
            }
            None => self.flash("still connecting to the model provider…"),
        }
    }

    pub(crate) fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.end_stream();
        self.transcript.push(Cell::Notice(NoticeCell::new(kind, text)));
    }

    pub(crate) fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now));
    }

    /// The status line said work was under way (`pending` starts it); its answer has come, as a
    /// notice, so the status line stops saying so. A newer message stays.
    pub(crate) fn answered(&mut self, pending: &str) {
        if self.flash.as_ref().is_some_and(|(text, _)| text.starts_with(pending)) {
            self.flash = None;
        }
    }

    pub(crate) fn flash_text(&self) -> Option<&str> {
        self.flash.as_ref().filter(|(_, at)| self.now.duration_since(*at) < FLASH_FOR).map(|(t, _)| t.as_str())
    }

    /// Ctrl+C was pressed once on an empty prompt and a second press would quit.
    pub(crate) fn quit_armed(&self) -> bool {
        self.ctrl_c_at.is_some_and(|at| self.now.duration_since(at) < QUIT_WINDOW)
    }

    /// The streamed text is complete (or void): later deltas start a new cell.
    pub(crate) fn end_stream(&mut self) {
        if let Some(i) = self.turn.streaming.take() {
            self.transcript.update(i, |c| {
                if let Cell::Assistant(a) = c {
                    a.streaming = false;
                }
            });
        }
    }

    /// Whether something on screen moves by itself (spinner, clocks), so frames are needed
    /// even without input.
    pub(crate) fn animating(&self) -> bool {
        self.turn.busy
            || self.turn.compacting.is_some()
            || matches!(self.turn.activity, Activity::Connecting | Activity::Retrying { .. })
            || self.flash_text().is_some()
            || self.quit_armed()
    }

    /// The project the welcome screen names.
    pub(crate) fn show_project(&mut self, root: String) {
        self.session.project_root = root;
    }

    /// The mode asked for on the command line, shown until the agent confirms it.
    pub(crate) fn start_in(&mut self, mode: Mode) {
        self.session.mode = mode;
    }

    /// Frames are drawn at this time (the loop sets it before each; tests fix it).
    pub(crate) fn set_now(&mut self, now: Instant) {
        self.now = now;
    }

    /// The user asked to leave.
    pub(crate) fn wants_to_quit(&self) -> bool {
        self.quit
    }

    /// The terminal closed (or a signal came): nothing more can be shown or typed.
    pub(crate) fn terminal_gone(&mut self) {
        self.quit = true;
    }

    /// Ctrl+L asked for every cell to be written again; asking clears it.
    pub(crate) fn take_repaint(&mut self) -> bool {
        std::mem::take(&mut self.terminal.repaint)
    }

    /// Text for the clipboard (Alt+C), once.
    pub(crate) fn take_clipboard(&mut self) -> Option<String> {
        self.terminal.clipboard.take()
    }

    /// The prompt to hand to the user's editor (Ctrl+G), once.
    pub(crate) fn take_editor_request(&mut self) -> Option<String> {
        self.terminal.editor.take()
    }

    /// The editor is closed: its text becomes the prompt (or the plan to carry out), or what
    /// was there stays and the reason is shown.
    pub(crate) fn editor_returned(&mut self, edited: Result<String, String>) {
        let plan = std::mem::take(&mut self.plan.editing);
        match edited {
            Ok(text) if plan => {
                if let Some(ready) = &mut self.plan.ready
                    && text.trim() != ready.plan.trim()
                {
                    ready.plan = text;
                    ready.edited = true;
                    self.flash("plan edited; Enter carries it out");
                }
            }
            Ok(text) => self.composer.set_text(&text),
            Err(message) => self.flash(message),
        }
    }

    pub(crate) fn mouse_capture(&self) -> bool {
        self.terminal.mouse_capture
    }

    pub(crate) fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The session on screen, once the agent has opened one.
    pub(crate) fn session(&self) -> Option<&OpenSession> {
        self.session.open.as_ref()
    }

    /// The session on screen if it is in the store: the one to name when leaving.
    pub(crate) fn stored_session(&self) -> Option<&OpenSession> {
        self.session.open.as_ref().filter(|s| s.stored)
    }

    /// The transcript search, while it is open.
    pub(crate) fn search(&self) -> Option<&SearchBar> {
        self.search.as_ref()
    }

    /// The plan waiting to be carried out, if the prompt is empty (typing hides the offer).
    pub(crate) fn plan_ready(&self) -> Option<&PlanReady> {
        self.plan.ready.as_ref().filter(|_| self.composer.is_empty())
    }

    pub(crate) fn theme(&self) -> &Theme {
        &self.theme
    }

    pub(crate) fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub(crate) fn composer(&self) -> &Composer {
        &self.composer
    }

    pub(crate) fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    /// The approval dialog on screen (the first of those waiting).
    pub(crate) fn approval(&self) -> Option<&ApprovalDialog> {
        self.approvals.front()
    }

    /// Prompts waiting for the agent, oldest first.
    pub(crate) fn pending(&self) -> &[String] {
        &self.agent.pending
    }

    pub(crate) fn project_root(&self) -> &str {
        &self.session.project_root
    }

    pub(crate) fn busy(&self) -> bool {
        self.turn.busy
    }

    pub(crate) fn mode(&self) -> Mode {
        self.session.mode
    }

    /// The status line's facts, as they are this frame.
    pub(crate) fn status_line(&self) -> StatusLine<'_> {
        StatusLine {
            theme: &self.theme,
            mode: self.session.mode,
            model: &self.session.model,
            activity: &self.turn.activity,
            compacting: self.turn.compacting,
            busy: self.turn.busy,
            turn_started: self.turn.started,
            epoch: self.epoch,
            now: self.now,
            flash: self.flash_text(),
            quit_armed: self.quit_armed(),
            mouse_capture: self.terminal.mouse_capture,
            context: self.session.context,
            ready: matches!(self.phase, Phase::Ready),
            window: self.session.window,
            background: self.session.background,
        }
    }
}
