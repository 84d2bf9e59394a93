//! Memories: which to inject and how, what to extract at compaction, how to avoid twins, and
//! what consolidation removes. Decisions only — the store keeps them, the agent runs the calls.
//!
//! Renders nothing to the screen.

mod consolidate;
mod extract;
mod select;

pub use consolidate::{consolidation, summary_title};
pub use extract::{ExtractedMemory, Merge, merge_decision, parse_extraction};
pub use select::{MemoryBlock, build_block};

pub const EXTRACTION_PROMPT: &str = include_str!("../../assets/prompts/extraction.md");

/// Memory kinds the model may save.
pub const KINDS: [&str; 3] = ["project", "user", "decision"];
/// Retention classes.
pub const CLASSES: [&str; 3] = ["priority", "durable", "working"];
/// Working memories expire after this many days (001).
pub const WORKING_DAYS: i64 = 14;

/// Whether a memory is past its expiry at `now` (pinned ones never expire).
pub fn expired(memory: &crate::store::MemoryRecord, now: chrono::DateTime<chrono::Utc>) -> bool {
    !memory.pinned
        && memory
            .expires_at
            .as_deref()
            .and_then(|e| chrono::DateTime::parse_from_rfc3339(e).ok())
            .is_some_and(|e| e.with_timezone(&chrono::Utc) <= now)
}
