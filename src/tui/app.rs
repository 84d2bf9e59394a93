//! The interface's state: transcript, composer, status, dialogs and views. Agent events change
//! it (`agent_events.rs`), keys change it (`input.rs`), and `render.rs` draws it; nothing here
//! decides anything about the conversation — prompts and answers go to the agent as commands.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::cells::{Cell, NoticeCell, NoticeKind};
use super::completion::FileIndex;
use super::composer::Composer;
use super::overlays::{ApprovalDialog, Overlay};
use super::theme::Theme;
use super::transcript::Transcript;
use crate::agent::{ContextStatus, UserCommand};
use crate::conversation::Mode;
use crate::store::SessionInfo;

/// How long a second Ctrl+C still counts as "twice".
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a status-line message stays.
const FLASH_FOR: Duration = Duration::from_secs(4);

/// What the agent is doing, for the spinner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    Idle,
    /// The provider is being resolved.
    Connecting,
    /// A request is out, nothing has streamed yet.
    Thinking,
    Streaming,
    /// The model is writing a tool call's arguments.
    PreparingTool(String),
    Tool(String),
    Approval(String),
    Compacting {
        chunk: Option<(u32, u32)>,
    },
    Retrying {
        attempt: u32,
        max_attempts: u32,
        until: Instant,
    },
}

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
    pub theme: Theme,
    pub transcript: Transcript,
    pub composer: Composer,
    pub files: FileIndex,
    pub phase: Phase,
    pub mode: Mode,
    pub model: String,
    pub window: u64,
    pub context: Option<ContextStatus>,
    /// A session was just loaded; freed memory is returned at the next context report.
    pub trim_after_context: bool,
    pub activity: Activity,
    /// When the running turn started (for the spinner's clock).
    pub turn_started: Option<Instant>,
    pub busy: bool,
    /// A compaction runs in the background (independent of turns).
    pub compacting: Option<Option<(u32, u32)>>,
    pub overlay: Option<Overlay>,
    /// Approval requests; the first is on screen.
    pub approvals: VecDeque<ApprovalDialog>,
    /// Prompts sent while the agent was busy (or not yet connected), oldest first.
    pub pending: Vec<String>,
    pub agent: Option<UnboundedSender<UserCommand>>,
    pub session: Option<SessionInfo>,
    pub project_root: String,
    /// Raw arguments of tool calls, by call id (for the approval dialog's full command).
    pub arguments: HashMap<String, String>,
    /// The assistant cell being streamed into.
    pub streaming: Option<usize>,
    /// Cells from this index on belong to the model request in flight (a retry removes them).
    pub attempt_from: usize,
    pub expand_all: bool,
    pub ctrl_c_at: Option<Instant>,
    pub flash: Option<(String, Instant)>,
    pub quit: bool,
    /// Ctrl+L: the next frame rewrites every cell.
    pub repaint: bool,
    /// When a key last edited the prompt (a dialog opening then guards its answer keys).
    pub last_typed: Option<Instant>,
    /// Text to put on the clipboard at the next chance (Alt+C).
    pub clipboard: Option<String>,
    /// Ctrl+G: the prompt to hand to the user's editor; the event loop suspends the screen.
    pub editor_request: Option<String>,
    /// The terminal reports the mouse (wheel scrolling); off lets the terminal select text.
    pub mouse_capture: bool,
    /// The time frames are drawn at (set before each draw; fixed in tests).
    pub now: Instant,
    /// When the interface started: the spinner's phase when nothing is timed.
    pub epoch: Instant,
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
            mode: Mode::Edit,
            model: String::new(),
            window: 0,
            context: None,
            trim_after_context: false,
            activity: Activity::Connecting,
            turn_started: None,
            busy: false,
            compacting: None,
            overlay: None,
            approvals: VecDeque::new(),
            pending: Vec::new(),
            agent: None,
            session: None,
            project_root: String::new(),
            arguments: HashMap::new(),
            streaming: None,
            attempt_from: 0,
            expand_all: false,
            ctrl_c_at: None,
            flash: None,
            quit: false,
            repaint: false,
            last_typed: None,
            clipboard: None,
            editor_request: None,
            mouse_capture: true,
            now,
            epoch: now,
        }
    }

    /// The agent is running: send what was typed while connecting.
    pub fn connect(&mut self, commands: UnboundedSender<UserCommand>) {
        self.phase = Phase::Ready;
        if self.activity == Activity::Connecting {
            self.activity = Activity::Idle;
        }
        for prompt in &self.pending {
            // A closed channel is reported by `send` below, on the next command.
            let _ = commands.send(UserCommand::Submit(prompt.clone()));
        }
        self.agent = Some(commands);
    }

    /// No provider: show the setup screen.
    pub fn setup_needed(&mut self, message: String) {
        self.phase = Phase::Setup { message };
        self.activity = Activity::Idle;
    }

    pub fn send(&mut self, command: UserCommand) {
        match &self.agent {
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

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.end_stream();
        self.transcript.push(Cell::Notice(NoticeCell::new(kind, text)));
    }

    pub fn flash(&mut self, text: impl Into<String>) {
        self.flash = Some((text.into(), self.now));
    }

    pub fn flash_text(&self) -> Option<&str> {
        self.flash.as_ref().filter(|(_, at)| self.now.duration_since(*at) < FLASH_FOR).map(|(t, _)| t.as_str())
    }

    /// Ctrl+C was pressed once on an empty prompt and a second press would quit.
    pub fn quit_armed(&self) -> bool {
        self.ctrl_c_at.is_some_and(|at| self.now.duration_since(at) < QUIT_WINDOW)
    }

    /// The streamed text is complete (or void): later deltas start a new cell.
    pub fn end_stream(&mut self) {
        if let Some(i) = self.streaming.take() {
            self.transcript.update(i, |c| {
                if let Cell::Assistant(a) = c {
                    a.streaming = false;
                }
            });
        }
    }

    /// Whether something on screen moves by itself (spinner, clocks), so frames are needed
    /// even without input.
    pub fn animating(&self) -> bool {
        self.busy
            || self.compacting.is_some()
            || matches!(self.activity, Activity::Connecting | Activity::Retrying { .. })
            || self.flash_text().is_some()
            || self.quit_armed()
    }

    /// The theme changed (or colours were turned off): every cached layout is stale.
    pub fn set_theme(&mut self, theme: Theme) {
        self.composer.apply_theme(&theme);
        self.theme = theme;
        self.transcript.invalidate();
    }
}
