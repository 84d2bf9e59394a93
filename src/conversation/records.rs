//! The records every layer lists and shows, as plain data: a session in a list, a memory, a
//! turn of a session, and what a transcript shows of a recorded call. The store reads and
//! writes them; the agent hands them to the front ends, which show them.

use serde::Serialize;

use super::{MemoryKind, Mode, RetentionClass};

/// A session as listed by `cairn sessions` and the picker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub started_at: String,
    pub last_active_at: String,
    pub message_count: u64,
    /// Prompt tokens of the last request: what the context held when the session was left.
    pub tokens: u64,
    pub model: String,
    pub mode: Mode,
    /// The last user or assistant text, cut to one line.
    pub last_message: String,
    /// A subagent's session: the session whose `task` call started it. Listed right after it.
    pub parent: Option<String>,
    /// A subagent's session: the agent type it ran as (`explore`, `general`, …).
    pub agent_type: Option<String>,
}

/// A stored memory. A global memory has no project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryRecord {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: MemoryKind,
    pub class: RetentionClass,
    pub pinned: bool,
    pub title: String,
    pub content: String,
    pub global: bool,
    pub session_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// UTC, RFC 3339; working memories expire.
    pub expires_at: Option<String>,
    /// Who approved it being global (a global save always needs someone): "you, in the
    /// approval dialog", "--yes", "you, in /memories". `None` for a project memory.
    pub approved_by: Option<String>,
    /// Why it is not given to the model as it is (it carries instructions aimed at the
    /// model), until the user pins it. Filled by whoever lists memories; the store leaves it
    /// `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
}

/// A turn as `/rewind` and `cairn rewind --to N` number it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TurnInfo {
    /// 1-based among the turns still in the conversation.
    pub number: u32,
    pub user_seq: i64,
    /// The prompt's first non-empty line.
    pub prompt: String,
    pub created_at: String,
    /// Paths the turn changed that no code rewind has put back.
    pub files_changed: u64,
    /// Paths the turn changed that a code rewind put back.
    pub files_reverted: u64,
}

/// What a transcript shows of a recorded call besides its result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolDisplay {
    pub diff: Option<String>,
    pub duration_ms: u64,
    pub not_run: bool,
    /// The approval line: what allowed or refused the call (`None` for calls recorded before
    /// cairn kept it, and for calls nothing had to decide).
    pub decided_by: Option<String>,
    /// The call's one-line summary as its tool gave it (`None` for calls recorded before cairn
    /// kept it: the summary is then made again from the arguments).
    pub summary: Option<String>,
}
