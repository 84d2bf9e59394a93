//! The parts of the interface's state, each one noun: the session on screen, the turn in
//! flight, the plan waiting to be carried out, the agent's queue, and what the terminal is to
//! be asked. `App` holds one of each; their fields are the app's own (no logic lives here).

use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use super::Activity;
use crate::agent::{CommandInfo, ContextStatus, UserCommand};
use crate::config::NotifyConfig;
use crate::conversation::{Mode, TaskList};

/// The session on screen: which one, its mode and model, its context figures, its task list.
pub(crate) struct SessionView {
    /// Once the agent has opened one.
    pub(super) open: Option<OpenSession>,
    pub(super) mode: Mode,
    pub(super) model: String,
    pub(super) window: u64,
    pub(super) context: Option<ContextStatus>,
    /// A session was just loaded; freed memory is returned at the next context report.
    pub(super) trim_after_context: bool,
    /// The project the welcome screen names.
    pub(super) project_root: String,
    /// The agent's task list (the `todo` tool's), for the task list panel.
    pub(super) task_list: TaskList,
    /// Background commands running (the status line's count).
    pub(super) background: usize,
}

impl Default for SessionView {
    fn default() -> SessionView {
        SessionView {
            open: None,
            mode: Mode::Edit,
            model: String::new(),
            window: 0,
            context: None,
            trim_after_context: false,
            project_root: String::new(),
            task_list: TaskList::default(),
            background: 0,
        }
    }
}

/// The session the agent has open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OpenSession {
    pub id: String,
    /// It is in the store (a new one is not until its first message).
    pub stored: bool,
}

/// The turn in flight, and a compaction running beside it.
pub(crate) struct TurnView {
    pub(super) activity: Activity,
    /// When the running turn started (for the spinner's clock).
    pub(super) started: Option<Instant>,
    pub(super) busy: bool,
    /// A compaction runs in the background (independent of turns).
    pub(super) compacting: Option<Option<(u32, u32)>>,
    /// The assistant cell being streamed into.
    pub(super) streaming: Option<usize>,
    /// Cells from this index on belong to the model request in flight (a retry removes them).
    pub(super) attempt_from: usize,
    /// The turn has started and what its prompt attached is not known yet: the prompt's cell
    /// may still change (inline mode keeps it off the scrollback until then).
    pub(super) attaching: bool,
    /// The retry notice of the request in flight, updated in place: its cell, the attempt,
    /// the attempts allowed, and why.
    pub(super) retry: Option<(usize, u32, u32, String)>,
}

impl Default for TurnView {
    fn default() -> TurnView {
        TurnView {
            activity: Activity::Connecting,
            started: None,
            busy: false,
            compacting: None,
            streaming: None,
            attempt_from: 0,
            attaching: false,
            retry: None,
        }
    }
}

/// A plan a plan-mode turn ended with.
#[derive(Default)]
pub(crate) struct PlanView {
    /// Enter carries it out in edit mode.
    pub(super) ready: Option<PlanReady>,
    /// The editor (Ctrl+G) is writing the plan, not the prompt.
    pub(super) editing: bool,
}

/// A plan waiting to be carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanReady {
    pub plan: String,
    /// The user changed it in the editor: it is sent along.
    pub edited: bool,
}

/// The agent as the interface reaches it.
#[derive(Default)]
pub(crate) struct AgentLink {
    /// Its command queue, once it runs.
    pub(super) queue: Option<UnboundedSender<UserCommand>>,
    /// Prompts sent while the agent was busy (or not yet connected), oldest first.
    pub(super) pending: Vec<String>,
    /// The custom commands and skills the agent found, for `/` completion and `/help`.
    pub(super) custom_commands: Vec<CommandInfo>,
}

/// What the event loop is to ask of the terminal: one-shot writes it takes once (a
/// notification, the clipboard, the editor, a full repaint), and whether the terminal reports
/// the mouse.
pub(crate) struct TerminalRequests {
    /// How to tell the user cairn needs them (`[notify]`).
    pub(super) notify: NotifyConfig,
    /// Bytes that ring the bell or raise a notification.
    pub(super) notification: Option<String>,
    /// Text to put on the clipboard (Alt+C).
    pub(super) clipboard: Option<String>,
    /// The prompt (or plan) to hand to the user's editor (Ctrl+G); the loop suspends the screen.
    pub(super) editor: Option<String>,
    /// Ctrl+L: the next frame rewrites every cell.
    pub(super) repaint: bool,
    /// The terminal reports the mouse (wheel scrolling); off lets the terminal select text.
    pub(super) mouse_capture: bool,
}

impl Default for TerminalRequests {
    fn default() -> TerminalRequests {
        TerminalRequests {
            notify: NotifyConfig::default(),
            notification: None,
            clipboard: None,
            editor: None,
            repaint: false,
            mouse_capture: true,
        }
    }
}
