use super::*;
use crate::config::{ContextConfig, Prices};
use crate::context::budget::ContextBudget;
use crate::context::cost::CostModel;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

/// A task statement of its own, about `topic`.
fn task(topic: &str) -> String {
    format!(
        "The {topic} subsystem needs attention before the release. Investigate the {topic} module \
         thoroughly: read every {topic} source under {topic}/, explain how incoming {topic} requests flow \
         through the dispatching layer, which invariants the {topic} layer keeps, where {topic} \
         configuration is parsed and validated, how {topic} errors propagate to callers, what the {topic} \
         tests cover and miss, which public interfaces other teams depend on, and propose a concrete \
         refactoring plan for {topic} with risks, ordering, verification steps, benchmarks, migration notes \
         and rollback."
    )
}

fn source(topic: &str, i: usize) -> String {
    (0..120).map(|n| format!("fn {topic}_{i}_{n}() -> u32 {{ /* {topic} handler step {n} */ {n} }}\n")).collect()
}

struct Day {
    p: Pipeline,
    seq: i64,
}

impl Day {
    fn new() -> Day {
        let mut p = Pipeline::new(ContextConfig::default());
        let sonnet = Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 };
        p.set_cost_model(CostModel::from_prices(&sonnet, true));
        p.set_summary_in_place(true);
        Day { p, seq: 0 }
    }

    fn push(&mut self, m: Message) {
        self.seq += 1;
        self.p.append(self.seq, m);
    }

    /// A task: its statement, `reads` file reads with their results, and an answer.
    fn task(&mut self, topic: &str, reads: usize) {
        self.push(Message::user(task(topic)));
        for i in 0..reads {
            let id = format!("{topic}{i}");
            let mut m = Message::assistant("");
            m.content.push(Block::ToolCall(ToolCall::new(
                &id,
                "file_read",
                format!(r#"{{"path":"{topic}/f{i}.rs"}}"#),
            )));
            self.push(m);
            self.push(Message::tool(ToolResult::ok(&id, "file_read", source(topic, i))));
        }
        self.push(Message::assistant(format!("The {topic} review is done.")));
    }

    fn input(&self) -> PreflightInput {
        PreflightInput {
            budget: ContextBudget::new(200_000, self.p.config()),
            overhead: 6_000,
            now: 1_000_000,
            compaction_running: false,
            compaction_allowed: true,
        }
    }
}

#[test]
fn a_request_of_its_own_unlike_the_work_before_it_is_new_work() {
    let mut day = Day::new();
    day.task("parser", 3);
    day.push(Message::user(task("storage")));
    let w = day.p.new_work().unwrap();
    assert!(w.terms >= 40 && w.novelty >= 0.35, "{w:?}");
    assert!(day.p.turns_to_new_work());
}

#[test]
fn a_short_correction_or_a_follow_up_on_the_same_files_continues_the_work() {
    let mut day = Day::new();
    day.task("parser", 3);
    day.push(Message::user("Please always provide exactly one action, found 2 actions."));
    assert!(!day.p.turns_to_new_work(), "{:?}", day.p.new_work());
    let mut day = Day::new();
    day.task("parser", 3);
    // A long follow-up: it names what the work read.
    let follow_up: String = (0..3)
        .map(|i| {
            let steps: String = (1..14).map(|n| format!("parser_{i}_{n} ")).collect();
            format!("In parser/f{i}.rs the handler step functions {steps}return the wrong step; ")
        })
        .collect::<String>()
        + "fix every parser handler step in those files and report each one you changed.";
    day.push(Message::user(follow_up));
    let w = day.p.new_work().unwrap();
    assert!(w.terms >= 40 && w.novelty < 0.35, "{w:?}");
    assert!(!day.p.turns_to_new_work());
}

#[test]
fn finished_work_leaves_only_when_the_saving_wins_clearly() {
    // One short task before: not worth a summary call yet.
    let mut day = Day::new();
    day.task("parser", 3);
    day.push(Message::user(task("storage")));
    let input = day.input();
    let tokens = day.p.estimate(input.overhead, 200_000);
    assert!(!day.p.finished_work_pays(&input, tokens));
    let pre = day.p.preflight(&input);
    assert!(pre.compaction.is_none() && !pre.finished_work);
    // Three long tasks before: every later request would read them again.
    let mut day = Day::new();
    for topic in ["parser", "storage", "network"] {
        day.task(topic, 14);
    }
    day.push(Message::user(task("renderer")));
    let input = day.input();
    let pre = day.p.preflight(&input);
    assert_eq!(pre.compaction, Some(Urgency::Background), "{pre:?}");
    assert!(pre.finished_work && pre.level < BudgetLevel::Warning, "below the warning threshold: {pre:?}");
    let plan = day.p.plan_finished_work().unwrap();
    assert!(plan.finished && plan.carried.is_empty());
    assert_eq!(plan.tail_first.text(), task("renderer"), "the new request stays");
    // Not in the middle of a turn.
    day.push(Message::assistant("Starting."));
    assert!(day.p.new_work().is_none());
}

#[test]
fn after_finished_work_left_the_next_new_task_lets_its_own_leave_too() {
    let mut day = Day::new();
    for topic in ["parser", "storage", "network"] {
        day.task(topic, 14);
    }
    day.push(Message::user(task("renderer")));
    let input = day.input();
    let plan = day.p.plan_finished_work().unwrap();
    let before = day.p.estimate(input.overhead, 200_000);
    day.p.apply_compaction(&plan, "## Goal\nreview subsystems".into(), &input, before);
    let raw = day.p.raw_tokens(input.overhead, 200_000);
    day.p.report_usage(raw, raw);
    for i in 0..14 {
        let id = format!("renderer{i}");
        let mut m = Message::assistant("");
        m.content.push(Block::ToolCall(ToolCall::new(&id, "file_read", format!(r#"{{"path":"renderer/f{i}.rs"}}"#))));
        day.push(m);
        day.push(Message::tool(ToolResult::ok(&id, "file_read", source("renderer", i))));
        let raw = day.p.raw_tokens(input.overhead, 200_000);
        day.p.report_usage(raw, raw);
    }
    day.push(Message::assistant("The renderer review is done."));
    day.push(Message::user(task("scheduler")));
    let w = day.p.new_work();
    let input = day.input();
    let pre = day.p.preflight(&input);
    assert!(pre.finished_work, "{w:?} {pre:?}");
}
