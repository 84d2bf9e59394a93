//! Shared conversation types: messages, content blocks, tool calls and results, usage, modes.
//!
//! This module does no IO and knows nothing about providers or storage; every other layer
//! imports it.

mod message;
mod mode;
mod request;
mod text;
mod usage;

pub use message::{Block, Message, Role, ToolCall, ToolResult};
pub use mode::Mode;
pub use request::{SystemBlock, ToolSpec};
pub use text::{clip, first_plain_line, floor_char_boundary, format_tokens};
pub use usage::Usage;
