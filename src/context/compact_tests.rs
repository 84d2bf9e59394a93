use std::sync::Mutex;

use super::*;
use crate::context::budget::ContextBudget;
use crate::context::ledger::Ledger;
use crate::context::state::ContextState;
use crate::context::summary::summarize;
use crate::context::transcript::transcript_piece;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

fn ledger_with_turns(turns: usize, output: usize) -> Ledger {
    let mut l = Ledger::new(3.2);
    let mut seq = 0;
    for t in 0..turns {
        seq += 1;
        l.push(seq, Message::user(format!("instruction {t}")));
        let mut a = Message::assistant("working");
        a.content.push(Block::ToolCall(ToolCall::new(format!("c{t}"), "bash", r#"{"command":"make"}"#)));
        seq += 1;
        l.push(seq, a);
        seq += 1;
        l.push(seq, Message::tool(ToolResult::ok(format!("c{t}"), "bash", "o\n".repeat(output))));
        seq += 1;
        l.push(seq, Message::assistant(format!("done {t}")));
    }
    l
}

fn tokens(l: &Ledger) -> Vec<u64> {
    l.entries().iter().map(|e| e.tokens).collect()
}

#[test]
fn the_tail_never_splits_a_group_and_keeps_the_latest_exchange() {
    let l = ledger_with_turns(20, 2_000);
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let plan = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    let entries = l.entries();
    let tail_start = l.index_of(plan.through_seq).unwrap() + 1;
    assert!(entries[tail_start].starts_unit(), "the tail starts at a user or assistant message");
    let tail = &entries[tail_start..];
    assert!(tail.len() >= config.compaction_min_tail_messages);
    assert!(tail.iter().any(|e| e.message.text() == "done 19"), "the latest reply is in the tail");
    assert!(tail.iter().any(|e| e.message.text() == "instruction 19"), "so is the latest user message");
    assert_eq!(plan.carried.first().map(|c| c.1.as_str()), Some("instruction 0"));
    assert!(plan.messages.len() + tail.len() == entries.len());
}

#[test]
fn the_turn_minimum_yields_to_the_budget_in_one_huge_turn() {
    // One user turn with many big tool groups: the tail is bounded by tokens, and the user's
    // message is carried instead of blocking the compaction.
    let mut l = Ledger::new(3.2);
    l.push(1, Message::user("do the whole migration"));
    let mut seq = 1;
    for n in 0..30 {
        let mut a = Message::assistant("");
        a.content.push(Block::ToolCall(ToolCall::new(format!("c{n}"), "bash", "{}")));
        seq += 1;
        l.push(seq, a);
        seq += 1;
        l.push(seq, Message::tool(ToolResult::ok(format!("c{n}"), "bash", "o\n".repeat(3_000))));
    }
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let plan = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    assert_eq!(plan.carried, vec![(1, "do the whole migration".to_string())]);
    assert!(plan.messages.len() > 40, "most of the turn is summarised: {}", plan.messages.len());
}

#[test]
fn past_twice_the_tail_budget_only_the_latest_group_stays_whole() {
    // Big results: the four latest messages would be twice the tail budget and more; the latest
    // group alone stays verbatim, the large result before it is summarised.
    let mut l = Ledger::new(3.2);
    l.push(1, Message::user("read the logs"));
    for n in 0..8 {
        let mut a = Message::assistant(format!("reading log {n}"));
        a.content.push(Block::ToolCall(ToolCall::new(format!("c{n}"), "file_read", "{}")));
        l.push(2 + 2 * n, a);
        l.push(3 + 2 * n, Message::tool(ToolResult::ok(format!("c{n}"), "file_read", "l\n".repeat(3_000))));
    }
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let plan = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    assert_eq!(plan.through_seq, 15, "the tail is the last call and its result");
    assert_eq!(plan.tail_first.tool_calls().next().map(|c| c.id.as_str()), Some("c7"));
    // Small results: the four latest messages fit, and stay.
    let l = ledger_with_turns(20, 20);
    let small = super::plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    let tail = l.entries().iter().filter(|e| e.seq > small.through_seq).count();
    assert!(tail >= config.compaction_min_tail_messages, "{tail}");
}

struct FakeSummarizer {
    window: u64,
    calls: Mutex<Vec<String>>,
    /// Reject inputs longer than this many characters as too long.
    reject_over: usize,
}

impl Summarizer for FakeSummarizer {
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        _max: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            assert_eq!(system, COMPACTION_PROMPT);
            if user.len() > self.reject_over {
                return Err(SummaryError::TooLong);
            }
            let mut calls = self.calls.lock().unwrap();
            calls.push(user.to_string());
            Ok(format!("## Goal\nsummary after call {}", calls.len()))
        })
    }

    fn window(&self) -> u64 {
        self.window
    }
}

#[tokio::test]
async fn input_twice_the_window_compacts_in_chunks_against_a_strict_model() {
    let l = ledger_with_turns(120, 1_500);
    let config = ContextConfig::default();
    let budget = ContextBudget::new(16_384, &config);
    let mut plan = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    assert!(plan.summarised_tokens > 2 * 16_384, "{}", plan.summarised_tokens);
    // Ask for every result whole: only the window limits what one call reads.
    plan.input_ratio = 1_000.0;
    // The model rejects anything over ~half what our estimate thinks fits.
    let s = FakeSummarizer { window: 16_384, calls: Mutex::new(Vec::new()), reject_over: 20_000 };
    let progress = |_: u32, _: u32| {};
    let summary = summarize(&plan, &s, 3.2, &progress).await.unwrap();
    let calls = s.calls.lock().unwrap();
    assert!(calls.len() >= 2, "{} calls", calls.len());
    assert!(calls.iter().all(|c| c.len() <= 20_000));
    assert!(calls[1].contains("summary after call 1"), "each chunk updates the running summary");
    assert!(summary.contains(&format!("summary after call {}", calls.len())));
    assert!(calls[0].contains("instruction 0"), "oldest first");
}

#[tokio::test]
async fn a_later_compaction_updates_the_whole_previous_summary() {
    let l = ledger_with_turns(12, 2_000);
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let previous = "## Goal\nport the parser\n## Constraints & Preferences\n- never touch vendor/".to_string();
    let state = ContextState {
        summary: Some(crate::context::state::SummaryState { text: previous.clone(), through_seq: 8, generation: 1 }),
        ..Default::default()
    };
    let plan = plan(&l, &state, &config, &budget, &tokens(&l), false).unwrap();
    assert_eq!(plan.generation, 2);
    assert!(
        plan.messages.iter().all(|m| m.text() != "instruction 0"),
        "already summarised messages are not sent again"
    );
    let s = FakeSummarizer { window: 32_000, calls: Mutex::new(Vec::new()), reject_over: usize::MAX };
    summarize(&plan, &s, 3.2, &|_, _| {}).await.unwrap();
    let call = &s.calls.lock().unwrap()[0];
    assert!(call.contains(&previous), "the previous summary is passed whole");
    assert!(call.contains("move items from In Progress to Done"));
}

#[test]
fn secrets_do_not_reach_the_summariser() {
    let m = Message::tool(ToolResult::ok("c", "bash", "AWS_SECRET_ACCESS_KEY=abcd1234abcd1234abcd\nok"));
    let piece = transcript_piece(&m);
    assert!(!piece.contains("abcd1234abcd1234abcd"), "{piece}");
}

#[test]
fn summary_budget_follows_the_seed_and_fits_small_windows() {
    let share = ContextConfig::default().summary_window_share;
    assert_eq!(summary_budget(100_000, 200_000, share), 7_000);
    assert_eq!(summary_budget(5_000, 200_000, share), 2_000);
    assert_eq!(summary_budget(1_000_000, 1_000_000, share), 12_000);
    assert_eq!(summary_budget(50_000, 8_192, share), 286);
}

#[test]
fn a_manual_compaction_sizes_its_tail_to_the_conversation() {
    let l = ledger_with_turns(3, 500);
    let config = ContextConfig::default();
    let budget = ContextBudget::new(200_000, &config);
    assert!(
        plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).is_none(),
        "auto: all fits in the tail"
    );
    let manual = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), true).expect("manual: compacts now");
    assert_eq!(manual.carried[0].1, "instruction 0");
}

#[test]
fn a_large_result_that_would_cross_the_tail_budget_is_summarised_not_kept_whole() {
    // Small recent exchanges, and before them one result larger than the whole tail budget:
    // once the minimums hold, the tail stops before it instead of keeping it verbatim (it would
    // be read on every request until the next compaction).
    let mut l = Ledger::new(3.2);
    l.push(1, Message::user("fix the build"));
    let mut seq = 1;
    let group = |l: &mut Ledger, seq: &mut i64, id: &str, out: String| {
        let mut a = Message::assistant("");
        a.content.push(Block::ToolCall(ToolCall::new(id, "bash", "{}")));
        *seq += 1;
        l.push(*seq, a);
        *seq += 1;
        l.push(*seq, Message::tool(ToolResult::ok(id, "bash", out)));
    };
    for n in 0..10 {
        group(&mut l, &mut seq, &format!("a{n}"), "o\n".repeat(2_000));
    }
    group(&mut l, &mut seq, "big", "x\n".repeat(8_000));
    for n in 0..6 {
        group(&mut l, &mut seq, &format!("b{n}"), "ok\n".repeat(100));
    }
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let tail_budget = (budget.auto_compact as f64 * config.compaction_tail_share) as u64;
    let t = tokens(&l);
    let plan = plan(&l, &ContextState::default(), &config, &budget, &t, false).unwrap();
    let tail_start = l.index_of(plan.through_seq).unwrap() + 1;
    let kept: u64 = t[tail_start..].iter().sum();
    assert!(kept <= tail_budget, "tail {kept} tokens over its budget {tail_budget}");
    assert!(t[..tail_start].iter().any(|&n| n >= 4_000), "the large result is summarised");
    assert!(l.entries().len() - tail_start >= config.compaction_min_tail_messages);
}

#[test]
fn a_request_that_stops_just_before_the_tail_is_read_in_place_whole() {
    // One long turn of calls: the tail opens with one of the model's calls.
    let mut l = Ledger::new(3.2);
    l.push(1, Message::user("fix the build"));
    for i in 0..12 {
        let mut a = Message::assistant(format!("step {i}"));
        a.content.push(Block::ToolCall(ToolCall::new(format!("c{i}"), "bash", r#"{"command":"make"}"#)));
        l.push(2 + 2 * i, a);
        l.push(3 + 2 * i, Message::tool(ToolResult::ok(format!("c{i}"), "bash", "o\n".repeat(2_000))));
    }
    let config = ContextConfig::default();
    let budget = ContextBudget::new(32_000, &config);
    let plan = plan(&l, &ContextState::default(), &config, &budget, &tokens(&l), false).unwrap();
    let entries = l.entries();
    let at = entries.iter().position(|e| e.seq == plan.through_seq).unwrap() + 1;
    assert_eq!(plan.tail_first.role, crate::conversation::Role::Assistant);
    let messages = |range: std::ops::Range<usize>| -> Vec<Arc<Message>> {
        entries[range].iter().map(|e| e.message.clone()).collect()
    };
    // A request holding the tail reads in place from it.
    assert_eq!(plan.reads_in(&messages(0..entries.len())), Some(at));
    // The request the tail's first call answered stops just before it: all it holds is
    // summarised.
    assert_eq!(plan.reads_in(&messages(0..at)), Some(at));
    // A request that stops earlier does not hold all that is summarised.
    assert_eq!(plan.reads_in(&messages(0..at - 2)), None);
    // Nor does one when the tail opens with the user's message.
    let plan = CompactionPlan { tail_first: Arc::new(Message::user("and the tests")), ..plan };
    assert_eq!(plan.reads_in(&messages(0..at)), None);
}
