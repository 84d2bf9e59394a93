//! The full-screen interface (layer 5): renders what the agent reports and sends it what the
//! user asks for. It holds display state only — the conversation, tools, modes and context are
//! the agent's — and it never prints to stdout or stderr while it owns the terminal.
//!
//! State lives in [`app::App`]; agent events and keys change it (`agent_events.rs`,
//! `input.rs`); [`render`] draws it each frame through pure widgets; [`run`] is the loop.

pub mod app;
pub mod cells;
pub mod completion;
pub mod composer;
pub mod diff;
pub mod frame;
pub mod highlight;
pub mod keys;
pub mod markdown;
pub mod overlays;
pub mod render;
pub mod run;
pub mod status;
pub mod terminal;
pub mod theme;
pub mod transcript;
pub mod wrap;

pub use app::App;
pub use completion::FileIndex;
pub use frame::FrameRequester;
pub use run::{ConnectError, Exit, run};
pub use terminal::Tui;
pub use theme::{Theme, UserTheme};
