//! The full-screen interface (layer 5): renders what the agent reports and sends it what the
//! user asks for. It holds display state only — the conversation, tools, modes and context are
//! the agent's — and does no IO but the terminal: the command line hands it the agent, the
//! project's files, the user's theme and editor.
//!
//! State lives in [`App`] (`app/`); agent events and keys change it (`app/agent_events.rs`,
//! `app/input.rs`); [`draw`] draws it each frame through pure widgets; `run` is the loop.
//! Public is what the render benchmark drives.

mod activity;
mod app;
mod cells;
mod completion;
mod composer;
mod diff;
mod frame;
mod highlight;
mod hints;
mod key_file;
mod keys;
mod markdown;
mod overlays;
mod render;
mod run;
mod search;
mod status;
mod task_list_panel;
mod terminal;
mod theme;
mod transcript;
mod trust_prompt;
mod user_status;
mod wrap;

pub use app::App;
pub(crate) use cells::NoticeKind;
pub use completion::FileIndex;
pub(crate) use frame::FrameRequester;
pub(crate) use key_file::install_user_keys;
pub(crate) use overlays::TrustAnswer;
pub use render::draw;
pub(crate) use run::{ConnectError, Exit, run};
pub(crate) use terminal::Tui;
pub use theme::Theme;
pub(crate) use theme::UserTheme;
pub(crate) use trust_prompt::ask_trust;
pub(crate) use user_status::UserStatus;
