use std::collections::BTreeMap;

use super::*;
use crate::context::ledger::Ledger;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

struct History {
    ledger: Ledger,
    index: DedupIndex,
    seq: i64,
}

impl History {
    fn new() -> History {
        let mut h = History { ledger: Ledger::new(3.2), index: DedupIndex::default(), seq: 0 };
        h.push(Message::user("go"));
        h
    }

    fn push(&mut self, m: Message) {
        self.seq += 1;
        let i = self.ledger.push(self.seq, m);
        self.index.observe(&self.ledger, i);
    }

    fn call(&mut self, id: &str, tool: &str, args: &str, result: &str, ok: bool) {
        let mut m = Message::assistant("");
        m.content.push(Block::ToolCall(ToolCall::new(id, tool, args)));
        self.push(m);
        let r = if ok { ToolResult::ok(id, tool, result) } else { ToolResult::error(id, tool, result) };
        self.push(Message::tool(r));
    }

    fn decisions(&self) -> BTreeMap<String, ReplacementKind> {
        let none = BTreeMap::new();
        self.index.unapplied(&none).map(|(id, _, r)| (id.to_string(), r.kind.clone())).collect()
    }
}

fn kinds(pairs: &[(&str, ReplacementKind)]) -> BTreeMap<String, ReplacementKind> {
    pairs.iter().map(|(id, k)| (id.to_string(), k.clone())).collect()
}

#[test]
fn identical_outputs_are_left_to_the_view_not_superseded_here() {
    // A repeat is sent as a reference to the first copy from the start (see the pipeline's
    // tests); superseding the first would rewrite everything after it.
    let mut h = History::new();
    h.call("a", "file_read", r#"{"path":"x.rs"}"#, "     1\tfn x() {}", true);
    h.call("b", "file_read", r#"{"path":"x.rs"}"#, "     1\tfn x() {}", true);
    h.call("c", "bash", r#"{"command":"cargo test"}"#, "ok\n[exit code 0]", true);
    h.call("d", "bash", r#"{"command":"cargo test"}"#, "ok\n[exit code 0]", true);
    assert!(h.decisions().is_empty());
    assert_eq!(h.ledger.entries()[4].identical_to, vec![2], "b repeats a");
    assert_eq!(h.ledger.entries()[8].identical_to, vec![6], "d repeats c");
}

#[test]
fn stale_read_is_superseded_only_after_successful_edit_and_covering_reread() {
    let mut h = History::new();
    h.call("r1", "file_read", r#"{"path":"a.rs"}"#, "     1\told", true);
    h.call("e1", "file_edit", r#"{"path":"a.rs","old_string":"zzz","new_string":"y"}"#, "old_string not found", false);
    h.call("r2", "file_read", r#"{"path":"a.rs"}"#, "     1\told ", true);
    assert!(h.decisions().is_empty(), "a failed edit is not a write");
    h.call("e2", "file_edit", r#"{"path":"./a.rs","old_string":"old","new_string":"new"}"#, "Edited a.rs", true);
    assert_eq!(
        h.decisions(),
        kinds(&[("r1", ReplacementKind::StaleWarning), ("r2", ReplacementKind::StaleWarning)]),
        "reads before a write are flagged stale until re-read"
    );
    h.call("r3", "file_read", r#"{"path":"a.rs"}"#, "     1\tnew", true);
    assert_eq!(h.decisions(), kinds(&[("r1", ReplacementKind::StaleRead), ("r2", ReplacementKind::StaleRead)]));
}

#[test]
fn a_partial_reread_does_not_supersede_a_read_of_other_lines() {
    let mut h = History::new();
    h.call(
        "head",
        "file_read",
        r#"{"path":"big.py","offset":1,"limit":50}"#,
        "…\n[showing lines 1–50 of 2000; continue with offset=51]",
        true,
    );
    h.call("w", "file_write", r#"{"path":"big.py","content":"…"}"#, "Wrote big.py: +1 −1 lines", true);
    h.call(
        "tail",
        "file_read",
        r#"{"path":"big.py","offset":900,"limit":51}"#,
        "…\n[showing lines 900–950 of 2000; continue with offset=951]",
        true,
    );
    assert_eq!(h.decisions(), kinds(&[("head", ReplacementKind::StaleWarning)]), "lines 1–50 were not re-read");
    h.call(
        "whole",
        "file_read",
        r#"{"path":"big.py","offset":1,"limit":5000}"#,
        "…\n[showing lines 1–2000 of 2000; end of file]",
        true,
    );
    // The late read was made after the write: it is not stale, only the early one is.
    assert_eq!(h.decisions(), kinds(&[("head", ReplacementKind::StaleRead)]));
}

#[test]
fn grep_of_one_file_is_subsumed_by_a_later_full_read_without_a_write_between() {
    let mut h = History::new();
    h.call("g", "grep", r#"{"pattern":"fn","path":"src/a.rs"}"#, "src/a.rs:1:fn a() {}\nsrc/a.rs:9:fn b() {}", true);
    h.call("gdir", "grep", r#"{"pattern":"fn","path":"src"}"#, "src/a.rs:1:fn a() {}\nsrc/b.rs:2:fn c() {}", true);
    h.call("r", "file_read", r#"{"path":"src/a.rs"}"#, "     1\tfn a() {}", true);
    assert_eq!(h.decisions(), kinds(&[("g", ReplacementKind::SubsumedGrep)]));
    let text = subsumed_grep("src/a.rs");
    assert_eq!(text, "[Superseded -- content included in later file_read of src/a.rs]");
}

#[test]
fn grep_before_a_write_is_not_subsumed_by_the_read_after_it() {
    let mut h = History::new();
    h.call("g", "grep", r#"{"pattern":"fn","path":"a.rs"}"#, "a.rs:1:fn a() {}", true);
    h.call("w", "file_edit", r#"{"path":"a.rs","old_string":"a","new_string":"b"}"#, "Edited a.rs", true);
    h.call("r", "file_read", r#"{"path":"a.rs"}"#, "     1\tfn b() {}", true);
    assert!(!h.decisions().contains_key("g"));
}

#[test]
fn deciding_is_deterministic_and_idempotent() {
    let build = || {
        let mut h = History::new();
        h.call("a", "glob", r#"{"pattern":"*.rs"}"#, "a.rs", true);
        h.call("b", "glob", r#"{"pattern":"*.rs"}"#, "a.rs", true);
        h.call("r", "file_read", r#"{"path":"a.rs"}"#, "x", true);
        h.call("w", "file_write", r#"{"path":"a.rs","content":"y"}"#, "Wrote a.rs", true);
        h.call("r2", "file_read", r#"{"path":"a.rs"}"#, "y", true);
        h
    };
    let h = build();
    assert_eq!(h.decisions(), build().decisions());
    // Once applied, nothing is left to apply.
    let applied: BTreeMap<String, Replacement> =
        h.index.unapplied(&BTreeMap::new()).map(|(id, _, r)| (id.to_string(), r.clone())).collect();
    assert_eq!(h.index.unapplied(&applied).count(), 0);
}
