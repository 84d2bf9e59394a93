//! Who writes segment summaries, and the outline text (seed 000, CONTEXT.md §9), with the cost
//! of each call in mind. A segment a compaction hides is given its line by that compaction's
//! own call (a stretch named in its instruction, one line in the reply): its messages are read
//! once, not twice, and no call is made for segments alone. A segment that leaves the view with
//! no summary covering it (trimming) gets its line from the next compaction, which summarises
//! it anyway. A roll-up of ten lines into their parent is made of those lines. The outline is
//! rendered here for the continuation message, which takes it only when it is rewritten anyway.

use super::segments::{ROLLUP, SegmentNode, outline};

/// The outline takes at most this share of the window, and no more than this many tokens: it
/// is read on every request after a compaction, and the summary and the recall tool cover what
/// it leaves out.
pub const OUTLINE_WINDOW_SHARE: f64 = 0.015;
pub const OUTLINE_MAX_TOKENS: u64 = 1_500;
/// A parent's line holds at most this many characters of its children's.
const ROLLUP_CHARS: usize = 600;

/// The stretches a compaction through `through_seq` (after `after_seq`) should summarise: the
/// level-0 segments inside its range that have no summary yet.
pub fn stretches(nodes: &[SegmentNode], after_seq: i64, through_seq: i64) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = nodes
        .iter()
        .filter(|n| n.level == 0 && n.summary.is_none() && n.first_seq > after_seq && n.last_seq <= through_seq)
        .map(|n| (n.first_seq, n.last_seq))
        .collect();
    out.sort_unstable();
    out
}

/// A parent's line, from its children's: the first sentence of each, in order, within
/// [`ROLLUP_CHARS`].
pub fn roll_up(children: &[SegmentNode]) -> String {
    let each = (ROLLUP_CHARS / children.len().max(1)).max(40);
    let parts: Vec<String> = children
        .iter()
        .filter_map(|n| n.summary.as_deref())
        .map(|line| {
            let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
            let first = line.split_inclusive(". ").next().unwrap_or(&line).trim().to_string();
            crate::conversation::clip(&first, each)
        })
        .collect();
    parts.join(" ")
}

/// Groups of [`ROLLUP`] summarised orphans of one level, oldest first, ready to roll up.
pub fn rollups(nodes: &[SegmentNode]) -> Vec<Vec<SegmentNode>> {
    let top = nodes.iter().map(|n| n.level).max().unwrap_or(0);
    let mut out = Vec::new();
    for level in 0..=top {
        let mut orphans: Vec<SegmentNode> =
            nodes.iter().filter(|n| n.level == level && n.summary.is_some() && n.parent.is_none()).cloned().collect();
        orphans.sort_by_key(|n| n.first_seq);
        out.extend(orphans.chunks(ROLLUP).filter(|g| g.len() == ROLLUP).map(|g| g.to_vec()));
    }
    out
}

/// The outline text of what the model no longer sees, within the window's share; empty when
/// there is nothing to show.
pub fn render_outline(nodes: &[SegmentNode], hidden: &dyn Fn(i64, i64) -> bool, window: u64, cpt: f64) -> String {
    let budget_tokens = ((window as f64 * OUTLINE_WINDOW_SHARE) as u64).min(OUTLINE_MAX_TOKENS);
    let chosen = outline(nodes, hidden, (budget_tokens as f64 * cpt) as usize);
    if chosen.is_empty() {
        return String::new();
    }
    let mut t = String::from("## Earlier in this session, by topic\n\n");
    for n in chosen {
        t.push_str(&format!(
            "- messages {}–{}: {}\n",
            n.first_seq,
            n.last_seq,
            n.summary.unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: i64, first: i64, last: i64, summary: Option<&str>) -> SegmentNode {
        SegmentNode { id, level: 0, first_seq: first, last_seq: last, summary: summary.map(String::from), parent: None }
    }

    #[test]
    fn a_compaction_names_the_unsummarised_segments_it_hides() {
        let nodes =
            vec![node(1, 1, 20, Some("done")), node(2, 21, 40, None), node(3, 41, 60, None), node(4, 61, 80, None)];
        assert_eq!(stretches(&nodes, 20, 60), vec![(21, 40), (41, 60)]);
        assert_eq!(stretches(&nodes, 0, 80), vec![(21, 40), (41, 60), (61, 80)], "a trimmed one too, later");
    }

    #[test]
    fn ten_summaries_roll_up_and_the_outline_reads_as_a_list() {
        let nodes: Vec<SegmentNode> = (0..12).map(|i| node(i, i * 10 + 1, i * 10 + 10, Some("did things"))).collect();
        assert_eq!(rollups(&nodes).len(), 1);
        assert_eq!(rollups(&nodes)[0].len(), 10);
        let parent = roll_up(&rollups(&nodes)[0]);
        assert_eq!(parent.matches("did things").count(), 10, "{parent}");
        assert!(parent.len() <= 600 + 10);
        let text = render_outline(&nodes[..2], &|_, _| true, 32_000, 3.2);
        assert_eq!(
            text,
            "## Earlier in this session, by topic\n\n- messages 1–10: did things\n- messages 11–20: did things\n"
        );
    }
}
