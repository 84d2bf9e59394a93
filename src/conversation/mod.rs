//! Shared conversation types: messages, content blocks, tool calls and results, usage, modes,
//! the vocabulary of memories, the plain parts of a request, and the records of sessions,
//! memories and turns that every layer lists.
//!
//! This module does no IO and knows nothing about providers or storage; every other layer
//! imports it.

mod background_job;
mod content;
mod controls;
mod finished_call;
mod memory_kind;
mod message;
mod mode;
mod records;
mod request;
mod task_list;
mod text;
pub mod tool_names;
mod usage;

pub use background_job::{BackgroundJob, JobState, job_lines};
pub use content::{Image, Thinking, ThinkingSource};
pub use controls::strip_terminal_controls;
pub use finished_call::FinishedCall;
pub use memory_kind::{MemoryKind, RetentionClass};
pub use message::{Block, IMAGE_CHARS_PER_TOKEN, Message, Role, ToolCall, ToolResult};
pub use mode::Mode;
pub use records::{MemoryRecord, SessionSummary, ToolDisplay, TurnInfo};
pub use request::{SystemBlock, ToolSpec};
pub use task_list::{TaskCounts, TaskItem, TaskList, TaskStatus};
pub use text::{clip, first_plain_line, floor_char_boundary, format_tokens, percent_of};
pub use usage::Usage;
