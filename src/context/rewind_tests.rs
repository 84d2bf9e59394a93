use super::*;
use crate::config::ContextConfig;
use crate::context::Pipeline;
use crate::context::state::CarriedInstructions;
use crate::conversation::{Block, ToolCall, ToolResult};

/// Messages numbered from 1, as a session stores them.
#[derive(Default)]
struct History {
    messages: Vec<(i64, Message)>,
}

impl History {
    fn push(&mut self, m: Message) -> i64 {
        let seq = self.messages.len() as i64 + 1;
        self.messages.push((seq, m));
        seq
    }

    fn user(&mut self, text: &str) -> i64 {
        self.push(Message::user(text))
    }

    /// A call and its result; the seq of the result.
    fn call(&mut self, id: &str, tool: &str, args: &str, out: &str) -> i64 {
        let mut m = Message::assistant("");
        m.content.push(Block::ToolCall(ToolCall::new(id, tool, args)));
        self.push(m);
        self.push(Message::tool(ToolResult::ok(id, tool, out)))
    }

    fn before(&self, seq: i64) -> Vec<(i64, Message)> {
        self.messages.iter().filter(|(s, _)| *s < seq).cloned().collect()
    }
}

fn replacement(kind: ReplacementKind, text: &str) -> Replacement {
    Replacement { kind, text: text.into() }
}

fn summary(through_seq: i64, text: &str, generation: u32) -> SummaryState {
    SummaryState { text: text.into(), through_seq, generation }
}

/// A session of three turns: read a.rs; write it and read it again; run a command.
fn three_turns() -> (History, [i64; 3]) {
    let mut h = History::default();
    let t1 = h.user("read a.rs");
    h.call("r1", "file_read", r#"{"path":"a.rs"}"#, "     1\tfn a() {}");
    h.push(Message::assistant("It defines a."));
    let t2 = h.user("change it");
    h.call("w1", "file_write", r#"{"path":"a.rs","content":"fn b() {}\n"}"#, "wrote a.rs");
    h.call("r2", "file_read", r#"{"path":"a.rs"}"#, "     1\tfn b() {}");
    h.push(Message::assistant("Done."));
    let t3 = h.user("test it");
    h.call("b1", "bash", r#"{"command":"cargo test"}"#, "ok");
    h.push(Message::assistant("Tests pass."));
    (h, [t1, t2, t3])
}

#[test]
fn a_summary_of_rewound_messages_gives_way_to_the_one_before_and_what_it_hid_shows_again() {
    let (h, [_, t2, t3]) = three_turns();
    let state = ContextState {
        summary: Some(summary(t3 + 1, "everything up to the test run", 2)),
        carried: CarriedInstructions {
            messages: vec![(1, "read a.rs".into()), (t2, "change it".into()), (t3, "test it".into())],
        },
        trimmed: vec![(2, 3), (t2 + 1, t3 + 2)],
        clipped: BTreeMap::from([(t2, "change…".to_string()), (t3, "test…".to_string())]),
        recall: BTreeMap::from([(1, "recalled".to_string()), (t3, "recalled later".to_string())]),
        awaiting_usage: true,
        outline: "## Earlier in this session, by topic\n".into(),
        ..Default::default()
    };
    let earlier = Some(summary(3, "the first read", 1));
    let out = rewind_state(&state, t3, earlier.clone(), &h.before(t3));
    assert_eq!(out.summary, earlier, "the compaction before the rewound turn stands");
    assert_eq!(out.trimmed, vec![(2, 3), (t2 + 1, t3 - 1)], "ranges end before the rewind");
    assert_eq!(
        out.carried.messages,
        vec![(1, "read a.rs".to_string())],
        "the first prompt is still summarised; the second is shown verbatim again, the third is gone"
    );
    assert_eq!(out.clipped.keys().copied().collect::<Vec<_>>(), [t2]);
    assert_eq!(out.recall.keys().copied().collect::<Vec<_>>(), [1]);
    assert!(!out.awaiting_usage && out.outline.is_empty());

    let none = rewind_state(&state, 2, Some(summary(2, "not before 2", 1)), &h.before(2));
    assert_eq!(none.summary, None, "a summary must lie wholly before the rewind");
    assert!(none.carried.messages.is_empty() && none.trimmed.is_empty() && none.clipped.is_empty());
}

#[test]
fn deduplications_stay_only_while_what_justified_them_stays() {
    let (h, [_, t2, t3]) = three_turns();
    let state = ContextState {
        replacements: BTreeMap::from([
            ("r1".to_string(), replacement(ReplacementKind::StaleRead, crate::context::dedup::STALE_READ)),
            ("b1".to_string(), replacement(ReplacementKind::Pruned, "[pruned]")),
        ]),
        ..Default::default()
    };
    // The write and the second read stay: r1 is still superseded.
    let kept = rewind_state(&state, t3, None, &h.before(t3));
    assert_eq!(kept.replacements.keys().collect::<Vec<_>>(), ["r1"], "b1 was rewound with its turn");
    // The second read is rewound (the write stays): r1 is stale, not superseded.
    let reread = h.messages.iter().find(|(_, m)| m.tool_calls().any(|c| c.id == "r2")).map(|(s, _)| *s).unwrap();
    let partial = rewind_state(&state, reread, None, &h.before(reread));
    assert!(partial.replacements.is_empty(), "{:?}", partial.replacements);
    // The whole second turn is rewound: r1 is the latest read again.
    assert!(rewind_state(&state, t2, None, &h.before(t2)).replacements.is_empty());

    // A stale warning stands while the write does, even once a re-read superseded it outright.
    let warned = ContextState {
        replacements: BTreeMap::from([(
            "r1".to_string(),
            replacement(ReplacementKind::StaleWarning, &crate::context::dedup::stale_warning("a.rs")),
        )]),
        ..Default::default()
    };
    assert_eq!(rewind_state(&warned, t3, None, &h.before(t3)).replacements.len(), 1);
    assert_eq!(rewind_state(&warned, reread, None, &h.before(reread)).replacements.len(), 1);
    assert!(rewind_state(&warned, t2, None, &h.before(t2)).replacements.is_empty());
}

#[test]
fn pruned_results_and_shrunk_arguments_of_calls_that_stay_stay() {
    let (h, [_, t2, _]) = three_turns();
    let state = ContextState {
        replacements: BTreeMap::from([
            ("r1".to_string(), replacement(ReplacementKind::Pruned, "[pruned read]")),
            ("w1".to_string(), replacement(ReplacementKind::Pruned, "[pruned write]")),
        ]),
        shrunk_arguments: BTreeMap::from([
            ("r1".to_string(), "{}".to_string()),
            ("w1".to_string(), r#"{"path":"a.rs","content":"[…]"}"#.to_string()),
        ]),
        counters: crate::context::StageCounters { pruned_results: 2, ..Default::default() },
        ..Default::default()
    };
    let out = rewind_state(&state, t2, None, &h.before(t2));
    assert_eq!(out.replacements.keys().collect::<Vec<_>>(), ["r1"]);
    assert_eq!(out.shrunk_arguments.keys().collect::<Vec<_>>(), ["r1"]);
    assert_eq!(out.counters, state.counters, "what happened still happened");
}

#[test]
fn what_stays_is_sent_exactly_as_before_so_its_cached_prefix_holds() {
    let (mut h, [_, t2, t3]) = three_turns();
    for i in 0..4 {
        h.user(&format!("more {i}"));
        h.call(&format!("x{i}"), "bash", r#"{"command":"ls"}"#, &"file\n".repeat(50));
    }
    let config = ContextConfig::default();
    let state = ContextState {
        summary: Some(summary(t2 - 1, "the first read", 1)),
        carried: CarriedInstructions { messages: vec![(1, "read a.rs".into())] },
        replacements: BTreeMap::from([
            ("r1".to_string(), replacement(ReplacementKind::Pruned, "[pruned]")),
            ("x3".to_string(), replacement(ReplacementKind::Pruned, "[pruned]")),
        ]),
        prompt: crate::context::PromptSnapshot { memory_block: Some(String::new()), ..Default::default() },
        ..Default::default()
    };
    let mut before = Pipeline::restore(config.clone(), state.clone(), h.messages.clone());
    let sent_before = before.view(200_000);

    let rewound = rewind_state(&state, t3, None, &h.before(t3));
    assert_eq!(rewound.summary, state.summary, "the summary lies before the rewind");
    assert_eq!(rewound.prompt, state.prompt);
    let mut after = Pipeline::restore(config, rewound, h.before(t3));
    let sent_after = after.view(200_000);
    assert_eq!(sent_after.len(), sent_before.len() - (h.messages.len() - (t3 as usize - 1)));
    assert_eq!(sent_after[..], sent_before[..sent_after.len()], "byte for byte the same prefix");
}
