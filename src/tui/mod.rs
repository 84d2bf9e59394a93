//! The interface (layer 5), full-screen or inline: renders what the agent reports and sends it
//! what the user asks for. It holds display state only — the conversation, tools, modes and context are
//! the agent's — and does no IO but the terminal: the command line hands it the agent, the
//! project's files, the user's theme and editor.
//!
//! State lives in [`App`] (`app/`); agent events and keys change it (`app/agent_events.rs`,
//! `app/input.rs`); [`draw`] draws it each frame through pure widgets; `run` is the loop. One
//! renderer of cells, two presenters: the full screen (`render.rs` on the alternate screen),
//! or inline (`inline.rs`: finished rows into the terminal's scrollback, a live viewport below).
//! Public is what the render benchmark drives.

mod activity;
mod ansi;
mod app;
mod cells;
mod colour;
mod completion;
mod composer;
mod diff;
mod frame;
mod highlight;
mod hints;
mod inline;
mod key_file;
mod keys;
mod markdown;
mod overlays;
mod present;
mod render;
mod run;
mod search;
mod settled;
mod status;
mod task_list_panel;
mod terminal;
mod theme;
mod transcript;
mod trust_prompt;
mod user_status;
mod viewport;
mod wrap;

pub use app::App;
pub(crate) use cells::NoticeKind;
pub use completion::FileIndex;
pub(crate) use frame::FrameRequester;
pub(crate) use key_file::install_user_keys;
pub(crate) use overlays::TrustAnswer;
pub use render::draw;
pub(crate) use run::{ConnectError, Exit, run};
pub(crate) use terminal::{ScreenMode, Tui};
pub use theme::Theme;
pub(crate) use theme::UserTheme;
pub(crate) use trust_prompt::ask_trust;
pub(crate) use user_status::UserStatus;
