use serde::{Deserialize, Serialize};

/// How much the agent may do. Enforced by the tool dispatcher, not only described in prompts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// All tools; writes and bash need approval.
    #[default]
    Edit,
    /// Read-only tools and memory tools; everything else is refused.
    Plan,
    /// No tools at all.
    Ask,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Edit => "edit",
            Mode::Plan => "plan",
            Mode::Ask => "ask",
        }
    }

    /// The label of the status line.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Edit => "EDIT",
            Mode::Plan => "PLAN",
            Mode::Ask => "ASK",
        }
    }

    /// Shift+Tab order: edit → plan → ask → edit.
    pub fn next(self) -> Mode {
        match self {
            Mode::Edit => Mode::Plan,
            Mode::Plan => Mode::Ask,
            Mode::Ask => Mode::Edit,
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "edit" => Some(Mode::Edit),
            "plan" => Some(Mode::Plan),
            "ask" => Some(Mode::Ask),
            _ => None,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
