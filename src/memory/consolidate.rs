//! Consolidation after extraction: expired working memories go, and of the compaction
//! summaries earlier versions stored as memories only the newest ten stay (none is stored
//! now: a summary is no memory). Pinned memories always stay.

use crate::conversation::MemoryKind;
use crate::store::MemoryRecord;

const KEEP_SUMMARIES: usize = 10;

/// Ids of the memories to delete.
pub fn consolidation(memories: &[MemoryRecord], now: chrono::DateTime<chrono::Utc>) -> Vec<i64> {
    let mut doomed: Vec<i64> = memories.iter().filter(|m| super::expired(m, now)).map(|m| m.id).collect();
    let mut summaries: Vec<&MemoryRecord> =
        memories.iter().filter(|m| m.kind == MemoryKind::Compaction && !m.pinned).collect();
    summaries.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    doomed.extend(summaries.iter().skip(KEEP_SUMMARIES).map(|m| m.id));
    doomed.sort_unstable();
    doomed.dedup();
    doomed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: i64, kind: &str, class: &str, created: &str, expires: Option<&str>, pinned: bool) -> MemoryRecord {
        MemoryRecord {
            id,
            kind: MemoryKind::parse(kind).unwrap(),
            class: crate::conversation::RetentionClass::parse(class).unwrap(),
            pinned,
            title: String::new(),
            content: String::new(),
            global: false,
            session_id: None,
            created_at: created.into(),
            updated_at: String::new(),
            expires_at: expires.map(String::from),
            approved_by: None,
            quarantined: None,
        }
    }

    #[test]
    fn expired_working_memories_and_old_summaries_go_pinned_ones_stay() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z").unwrap().with_timezone(&chrono::Utc);
        let mut all = vec![
            m(1, "project", "working", "2026-11-01T00:00:00Z", Some("2026-11-15T00:00:00Z"), false),
            m(2, "project", "working", "2026-11-01T00:00:00Z", Some("2026-11-15T00:00:00Z"), true),
            m(3, "project", "durable", "2026-01-01T00:00:00Z", None, false),
        ];
        all.extend((0..12).map(|i| {
            m(
                100 + i,
                "compaction",
                "working",
                &format!("2026-11-{:02}T00:00:00Z", 10 + i),
                Some("2026-12-30T00:00:00Z"),
                false,
            )
        }));
        assert_eq!(consolidation(&all, now), vec![1, 100, 101]);
    }
}
