//! Memories extracted at compaction: reading the model's JSON (whatever fences or prose it
//! wraps it in) and deciding, for each, whether it is new or an update of one already kept.

use serde::Deserialize;

use crate::context::{similarity, terms};
use crate::conversation::MemoryKind;
use crate::store::MemoryRecord;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedMemory {
    pub kind: MemoryKind,
    pub title: String,
    pub content: String,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(alias = "kind")]
    r#type: Option<String>,
    title: Option<String>,
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Reply {
    Wrapped { memories: Vec<Raw> },
    List(Vec<Raw>),
}

const MAX_TITLE_CHARS: usize = 120;
const MAX_CONTENT_CHARS: usize = 2_000;
const MAX_MEMORIES: usize = 8;

/// The memories in a reply: JSON as an object with `memories` or as a bare list, inside code
/// fences or prose or not. Anything unreadable or invalid is left out, never guessed at.
pub fn parse_extraction(reply: &str) -> Vec<ExtractedMemory> {
    let Some(parsed) = candidates(reply).into_iter().find_map(|json| serde_json::from_str::<Reply>(json).ok()) else {
        return Vec::new();
    };
    let raws = match parsed {
        Reply::Wrapped { memories } | Reply::List(memories) => memories,
    };
    raws.into_iter()
        .filter_map(|r| {
            let kind = MemoryKind::parse(&r.r#type?).filter(|k| MemoryKind::SAVED.contains(k))?;
            let title = r.title?.trim().to_string();
            let content = r.content?.trim().to_string();
            (!title.is_empty() && !content.is_empty()).then(|| ExtractedMemory {
                kind,
                title: crate::conversation::clip(&title, MAX_TITLE_CHARS),
                content: crate::context::redact_secrets(&crate::conversation::clip(&content, MAX_CONTENT_CHARS))
                    .into_owned(),
            })
        })
        .take(MAX_MEMORIES)
        .collect()
}

/// Substrings that may be the JSON: the inside of each code fence, then the widest span from
/// the first `{` or `[` to the matching last `}` or `]`.
fn candidates(reply: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = reply;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map(|n| n + 1).unwrap_or(0);
        let Some(end) = after[body_start..].find("```") else { break };
        out.push(after[body_start..body_start + end].trim());
        rest = &after[body_start + end + 3..];
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (reply.find(open), reply.rfind(close))
            && a < b
        {
            out.push(&reply[a..=b]);
        }
    }
    out
}

/// What to do with a memory, given those already kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    Insert,
    /// It says what memory `id` says (perhaps better): update that one instead of adding a twin.
    Update(i64),
}

/// Same kind, and a title or content that overlaps enough, is the same memory.
pub fn merge_decision(kind: MemoryKind, title: &str, content: &str, existing: &[MemoryRecord]) -> Merge {
    let (t, c) = (terms(title), terms(content));
    existing
        .iter()
        .filter(|m| m.kind == kind)
        .map(|m| {
            let same_title = similarity(&t, &terms(&m.title));
            let same_content = similarity(&c, &terms(&m.content));
            (m.id, same_title.max(same_content * 0.9))
        })
        .filter(|&(_, s)| s >= 0.6)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Merge::Insert, |(id, _)| Merge::Update(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_json_in_fences_prose_or_bare_and_drops_invalid_items() {
        let fenced = "Here you go:\n```json\n{\"memories\": [{\"type\": \"project\", \"title\": \"Tests\", \"content\": \"Run with make check\"}, {\"type\": \"gossip\", \"title\": \"x\", \"content\": \"y\"}]}\n```\nDone.";
        let m = parse_extraction(fenced);
        assert_eq!(
            m,
            vec![ExtractedMemory {
                kind: MemoryKind::Project,
                title: "Tests".into(),
                content: "Run with make check".into()
            }]
        );
        let bare = "[{\"kind\": \"User\", \"title\": \"Style\", \"content\": \"early returns\"}]";
        assert_eq!(parse_extraction(bare)[0].kind, MemoryKind::User);
        let prose = "I found one: {\"memories\": [{\"type\": \"decision\", \"title\": \"Auth\", \"content\": \"JWT\"}]} hope it helps";
        assert_eq!(parse_extraction(prose).len(), 1);
        assert!(parse_extraction("no json here").is_empty());
        assert!(parse_extraction("{\"memories\": []}").is_empty());
    }

    #[test]
    fn secrets_in_extracted_memories_are_redacted() {
        let reply = r#"{"memories": [{"type": "project", "title": "Staging", "content": "STAGING_API_KEY=abcdef123456 is in .env"}]}"#;
        assert!(!parse_extraction(reply)[0].content.contains("abcdef123456"));
    }

    #[test]
    fn a_twin_updates_the_existing_memory() {
        let existing = vec![MemoryRecord {
            id: 7,
            kind: MemoryKind::Project,
            class: crate::conversation::RetentionClass::Durable,
            pinned: false,
            title: "Test command".into(),
            content: "Run the tests with make check".into(),
            global: false,
            session_id: None,
            created_at: String::new(),
            updated_at: String::new(),
            expires_at: None,
            approved_by: None,
            quarantined: None,
        }];
        assert_eq!(
            merge_decision(MemoryKind::Project, "Test command", "Tests run with `make check -j8`", &existing),
            Merge::Update(7)
        );
        assert_eq!(
            merge_decision(MemoryKind::User, "Test command", "make check", &existing),
            Merge::Insert,
            "another kind"
        );
        assert_eq!(merge_decision(MemoryKind::Project, "Deploy", "ship with fly deploy", &existing), Merge::Insert);
    }
}
