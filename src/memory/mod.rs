//! Memories: which to inject and how, what to extract at compaction, how to avoid twins, and
//! what consolidation removes. Decisions only — the store keeps them, the agent runs the calls.
//!
//! Renders nothing to the screen.

mod consolidate;
mod extract;
mod select;

pub use consolidate::consolidation;
pub use extract::{Merge, merge_decision, parse_extraction};
pub use select::build_block;

/// Why `memory` must not be injected as it is (see `context::injection`), pinned or not.
pub fn quarantine(memory: &crate::conversation::MemoryRecord) -> Option<String> {
    crate::context::scan_injection(&format!("{}\n{}", memory.title, memory.content))
}

/// Whether `memory` may go into the prompt: it carries no instructions for the model, or the
/// user pinned it after seeing why it was held back.
pub fn injectable(memory: &crate::conversation::MemoryRecord) -> bool {
    memory.pinned || quarantine(memory).is_none()
}

/// `memories` with the reason each one is held back filled in.
pub fn with_quarantine(memories: Vec<crate::conversation::MemoryRecord>) -> Vec<crate::conversation::MemoryRecord> {
    memories.into_iter().map(|m| crate::conversation::MemoryRecord { quarantined: quarantine(&m), ..m }).collect()
}

/// Working memories expire after this many days (KosmoKrator's retention).
pub const WORKING_DAYS: i64 = 14;

/// When a memory of `class` saved at `now` expires (UTC, RFC 3339): working memories do.
pub fn expiry(class: crate::conversation::RetentionClass, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
    use crate::conversation::RetentionClass;
    match class {
        RetentionClass::Working => {
            Some((now + chrono::Duration::days(WORKING_DAYS)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        }
        RetentionClass::Priority | RetentionClass::Durable => None,
    }
}

/// Whether a memory is past its expiry at `now` (pinned ones never expire).
pub fn expired(memory: &crate::store::MemoryRecord, now: chrono::DateTime<chrono::Utc>) -> bool {
    !memory.pinned
        && memory
            .expires_at
            .as_deref()
            .and_then(|e| chrono::DateTime::parse_from_rfc3339(e).ok())
            .is_some_and(|e| e.with_timezone(&chrono::Utc) <= now)
}
