//! `[subagents]` and `[todo]`: the `task` tool's children and the `todo` tool's list.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubagentsConfig {
    /// Subagents running at once; more `task` calls in one message wait for a free slot. Four
    /// keeps a rate-limited account out of 429s and a two-core machine responsive.
    pub max_parallel: usize,
    /// How deep delegation goes: 1 lets the main agent start subagents and no subagent start
    /// its own (no grandchildren), so a job cannot fan out without bound.
    pub max_depth: u32,
    /// The model of types asking for a fast one (the built-in `explore`, `model: fast` or
    /// `model: haiku` in a type file); unset means the session's own model.
    pub fast_model: Option<String>,
    /// A subagent's report is cut to this many characters before the parent reads it: the
    /// parent's context is what delegation saves, and 12,000 characters is about 4k tokens.
    pub report_max_chars: usize,
    /// Model requests one subagent may make for its job; past it, it stops and says so.
    pub max_turns: u32,
}

impl Default for SubagentsConfig {
    fn default() -> Self {
        SubagentsConfig { max_parallel: 4, max_depth: 1, fast_model: None, report_max_chars: 12_000, max_turns: 50 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TodoConfig {
    /// Items a list may hold: it is sent with every request, so it stays a checklist (a
    /// hundred short items is about 2k tokens).
    pub max_items: usize,
}

impl Default for TodoConfig {
    fn default() -> Self {
        TodoConfig { max_items: 100 }
    }
}
