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
