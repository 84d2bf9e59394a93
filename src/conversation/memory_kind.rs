//! The vocabulary of memories: what a memory is about, and how long it is kept. Shared by the
//! store (which keeps them), the memory rules (which choose and merge them), the tools (which
//! the model saves them through) and the views.

use serde::{Deserialize, Serialize};

/// What a memory is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// A fact about the code.
    Project,
    /// A preference or correction of the user.
    User,
    /// A technical choice and why.
    Decision,
    /// The summary of a compaction, which earlier versions kept as a working memory of its
    /// session; none is stored now (a summary is no memory), old ones expire.
    Compaction,
}

impl MemoryKind {
    /// The kinds the model may save (summaries are cairn's own).
    pub const SAVED: [MemoryKind; 3] = [MemoryKind::Project, MemoryKind::User, MemoryKind::Decision];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Project => "project",
            MemoryKind::User => "user",
            MemoryKind::Decision => "decision",
            MemoryKind::Compaction => "compaction",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryKind> {
        let s = s.trim().to_ascii_lowercase();
        [MemoryKind::Project, MemoryKind::User, MemoryKind::Decision, MemoryKind::Compaction]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// How long a memory is kept, and how it is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetentionClass {
    /// Always shown first.
    Priority,
    /// Kept until deleted.
    #[default]
    Durable,
    /// Expires after a while.
    Working,
}

impl RetentionClass {
    pub const ALL: [RetentionClass; 3] = [RetentionClass::Priority, RetentionClass::Durable, RetentionClass::Working];

    pub fn as_str(self) -> &'static str {
        match self {
            RetentionClass::Priority => "priority",
            RetentionClass::Durable => "durable",
            RetentionClass::Working => "working",
        }
    }

    pub fn parse(s: &str) -> Option<RetentionClass> {
        let s = s.trim().to_ascii_lowercase();
        RetentionClass::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so tables can align it with `{:<10}`.
        f.pad(self.as_str())
    }
}

impl std::fmt::Display for RetentionClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_pad_in_tables() {
        for kind in [MemoryKind::Project, MemoryKind::User, MemoryKind::Decision, MemoryKind::Compaction] {
            assert_eq!(MemoryKind::parse(kind.as_str()), Some(kind));
        }
        for class in RetentionClass::ALL {
            assert_eq!(RetentionClass::parse(class.as_str()), Some(class));
        }
        assert_eq!(MemoryKind::parse(" User "), Some(MemoryKind::User));
        assert_eq!(MemoryKind::parse("note"), None);
        assert_eq!(format!("{:<9}|", MemoryKind::User), "user     |");
        assert_eq!(serde_json::to_value(RetentionClass::Working).unwrap(), "working");
    }
}
