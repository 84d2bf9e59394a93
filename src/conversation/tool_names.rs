//! The built-in tools' names, as the model calls them and the rules, hooks and interface name
//! them: each tool answers to its constant here, and every other layer that needs to know one
//! tool from another uses the same constant.

pub const FILE_READ: &str = "file_read";
pub const FILE_WRITE: &str = "file_write";
pub const FILE_EDIT: &str = "file_edit";
pub const GLOB: &str = "glob";
pub const GREP: &str = "grep";
pub const BASH: &str = "bash";
/// Reads what a background command printed.
pub const BASH_OUTPUT: &str = "bash_output";
/// Ends a background command.
pub const BASH_STOP: &str = "bash_stop";
pub const WEB_FETCH: &str = "web_fetch";
pub const MEMORY_SAVE: &str = "memory_save";
pub const MEMORY_SEARCH: &str = "memory_search";
/// Keeps the session's task list.
pub const TODO: &str = "todo";
/// Hands a job to a subagent.
pub const TASK: &str = "task";
pub const SKILL: &str = "skill";
/// Finds MCP tools when their schemas would not fit the tool budget.
pub const TOOL_SEARCH: &str = "tool_search";
/// Calls an MCP tool `tool_search` found; resolved to that tool's call, never run itself.
pub const TOOL_CALL: &str = "tool_call";
