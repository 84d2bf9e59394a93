use super::*;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

fn topic_session(topics: &[(&str, usize)]) -> Ledger {
    let mut l = Ledger::new(3.2);
    let mut seq = 0;
    for (t, (topic, turns)) in topics.iter().enumerate() {
        for n in 0..*turns {
            seq += 1;
            l.push(seq, Message::user(format!("{topic} {topic} question {n}")));
            let mut a = Message::assistant(format!("Looking at {topic} again, {topic} details."));
            a.content.push(Block::ToolCall(ToolCall::new(format!("c{t}-{n}"), "bash", "{}")));
            seq += 1;
            l.push(seq, a);
            seq += 1;
            let body = format!("{topic} output line with {topic} words\n").repeat(120);
            l.push(seq, Message::tool(ToolResult::ok(format!("c{t}-{n}"), "bash", body)));
        }
    }
    l
}

#[test]
fn nothing_happens_until_enough_has_accumulated() {
    let l = topic_session(&[("parser", 2)]);
    assert!(segment(&l, 0).is_empty());
}

#[test]
fn cuts_fall_where_the_topic_shifts_within_the_size_bounds() {
    let l = topic_session(&[("parser", 8), ("database", 8), ("frontend", 8)]);
    let cuts = segment(&l, 0);
    assert!(cuts.len() >= 2, "{cuts:?}");
    // The first cut is at the shift from parser to database (seq 25 starts the database turns).
    assert_eq!(cuts[0].last_seq, 24, "{cuts:?}");
    for c in &cuts {
        assert!(c.tokens >= MIN_SEGMENT_TOKENS && c.messages >= MIN_SEGMENT_MESSAGES, "{c:?}");
        let first = l.index_of(c.first_seq).unwrap();
        assert!(l.entries()[first].starts_unit(), "no tool group is split");
    }
    // Incremental: segmenting again after the last cut finds nothing new to cut at once.
    let again = segment(&l, cuts.last().unwrap().last_seq);
    assert!(again.iter().all(|c| c.first_seq > cuts.last().unwrap().last_seq));
}

fn node(id: i64, level: u32, first: i64, last: i64, parent: Option<i64>, text: &str) -> SegmentNode {
    SegmentNode { id, level, first_seq: first, last_seq: last, summary: Some(text.into()), parent }
}

#[test]
fn the_outline_expands_from_the_top_within_its_budget_and_never_overlaps_the_view() {
    let mut nodes = vec![node(100, 1, 1, 100, None, &"L1 summary ".repeat(10))];
    for k in 0..10 {
        nodes.push(node(k, 0, k * 10 + 1, k * 10 + 10, Some(100), &format!("segment {k}")));
    }
    nodes.push(node(50, 0, 101, 120, None, "recent segment"));
    let hidden_to_100 = |_: i64, last: i64| last <= 100;
    // A small budget: the parent alone.
    let small = outline(&nodes, &hidden_to_100, 200);
    assert_eq!(small.iter().map(|n| n.id).collect::<Vec<_>>(), vec![100]);
    // A large one: expanded into its children, in order; the visible segment never appears.
    let large = outline(&nodes, &hidden_to_100, 10_000);
    assert_eq!(large.iter().map(|n| n.id).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    // Nothing hidden: nothing to outline.
    assert!(outline(&nodes, &|_, _| false, 10_000).is_empty());
}
