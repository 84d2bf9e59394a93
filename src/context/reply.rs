//! What a compaction call answers beyond the summary, in the same reply so nothing is read
//! twice: one line per marked stretch of the summarised messages (the segment summaries of
//! the outline), and the durable memories worth keeping (as the extraction prompt's JSON).
//! Both are optional trailing sections, split off here; the summary is what stays.

/// The parts of a compaction reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactionReply {
    /// The summary, without the trailing sections.
    pub summary: String,
    /// (first seq, last seq, one line) per stretch the reply summarised.
    pub stretches: Vec<(i64, i64, String)>,
    /// The `{"memories": [...]}` JSON of each call that had the section (fences removed).
    pub memories: Vec<String>,
}

pub const STRETCHES_HEADING: &str = "## Stretches";
pub const MEMORIES_HEADING: &str = "## Memories";

/// The marker put before the first message of a stretch in the summariser's transcript.
pub fn stretch_marker(first: i64, last: i64) -> String {
    format!("=== stretch {first}–{last} ===\n")
}

/// Where a heading starts a line in `text`.
fn heading_at(text: &str, heading: &str) -> Option<usize> {
    if text.starts_with(heading) {
        return Some(0);
    }
    text.rfind(&format!("\n{heading}")).map(|i| i + 1)
}

/// `- 12–40: what happened` (either dash) → (12, 40, "what happened").
fn stretch_line(line: &str) -> Option<(i64, i64, String)> {
    let rest = line.trim().strip_prefix('-').or_else(|| line.trim().strip_prefix('*'))?.trim_start();
    let (range, text) = rest.split_once(':')?;
    let range = range.trim().trim_start_matches("stretch").trim();
    let (a, b) = range.split_once('–').or_else(|| range.split_once('-'))?;
    let text = text.trim();
    (!text.is_empty()).then(|| Some((a.trim().parse().ok()?, b.trim().parse().ok()?, text.to_string())))?
}

/// The JSON object in a section, fenced or not.
fn json_of(section: &str) -> Option<String> {
    let start = section.find('{')?;
    let end = section.rfind('}')?;
    (end > start).then(|| section[start..=end].to_string())
}

/// Split a compaction reply into its summary and trailing sections.
pub fn split_reply(reply: &str) -> CompactionReply {
    let text = reply.trim();
    let stretches_at = heading_at(text, STRETCHES_HEADING);
    let memories_at = heading_at(text, MEMORIES_HEADING);
    let cut = [stretches_at, memories_at].into_iter().flatten().min().unwrap_or(text.len());
    let section = |at: Option<usize>| -> &str {
        let Some(at) = at else { return "" };
        let end = [stretches_at, memories_at].into_iter().flatten().filter(|&o| o > at).min().unwrap_or(text.len());
        &text[at..end]
    };
    CompactionReply {
        summary: text[..cut].trim_end().to_string(),
        stretches: section(stretches_at).lines().skip(1).filter_map(stretch_line).collect(),
        memories: memories_at.and_then(|at| json_of(section(Some(at)))).into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_stretches_and_memories_come_apart() {
        let reply = "## Goal\nfix the parser\n\n## Critical Context\n- error E0308\n\n## Stretches\n- 3–40: read the parser, found the bug in src/parse.rs\n- 41-60: fixed it; tests pass\n\n## Memories\n```json\n{\"memories\": [{\"type\": \"project\", \"title\": \"t\", \"content\": \"c\"}]}\n```\n";
        let r = split_reply(reply);
        assert_eq!(r.summary, "## Goal\nfix the parser\n\n## Critical Context\n- error E0308");
        assert_eq!(
            r.stretches,
            vec![
                (3, 40, "read the parser, found the bug in src/parse.rs".to_string()),
                (41, 60, "fixed it; tests pass".to_string())
            ]
        );
        assert!(r.memories[0].starts_with("{\"memories\""));
    }

    #[test]
    fn a_plain_summary_is_all_summary() {
        let r = split_reply("## Goal\nx\n## Next Steps\n- y");
        assert_eq!(r, CompactionReply { summary: "## Goal\nx\n## Next Steps\n- y".into(), ..Default::default() });
    }
}
