//! A working day in one session: tasks one after another. When the user turns to new work, what
//! is finished leaves the view (when the cost model says it pays), summarised by one call that
//! reads the conversation in place; a fact from the first task's tool output asked for in the
//! sixth task reaches the answer's request through the recall tool.

use serde_json::json;

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cache_check::prompt_in_session;
use crate::support::cairn::{Api, Sandbox, tool_names};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};

const FACT: &str = "parser cache holds 4217 entries after warm-up";

/// A task statement of its own: many words, none about the work before it.
fn task(n: usize, topic: &str) -> String {
    format!(
        "Task {n}: the {topic} subsystem needs attention before the release. Investigate the {topic} module \
         thoroughly: read every {topic} source under {topic}/, explain how incoming {topic} requests flow \
         through the dispatching layer, which invariants the {topic} layer keeps, where {topic} \
         configuration is parsed and validated, how {topic} errors propagate to callers, what the {topic} \
         tests cover and miss, which public interfaces other teams depend on, and propose a concrete \
         refactoring plan for {topic} with risks, ordering, verification steps, benchmarks, migration notes \
         and rollback."
    )
}

/// A file of a task's topic; the first task's first file holds the fact in its middle.
fn source(topic: &str, i: usize, fact: bool) -> String {
    (0..120)
        .map(|n| match (n, fact) {
            (60, true) => format!("// {FACT}\n"),
            _ => format!("fn {topic}_{i}_{n}() -> u32 {{ /* {topic} handler step {n} */ {n} }}\n"),
        })
        .collect()
}

fn is_compaction(req: &RecordedRequest) -> bool {
    AuxCall::of(req) == Some(AuxCall::Compaction)
}

#[tokio::test]
async fn a_fact_from_the_first_task_reaches_the_sixth_after_finished_work_left() {
    let sandbox = Sandbox::new();
    let topics = ["parser", "storage", "network", "renderer", "scheduler"];
    let mut script = Script::new().context_window(200_000).responder(|req| {
        is_compaction(req).then(|| {
            let trailing = trailing_sections(req, "worked on one subsystem", r#"{"memories": []}"#);
            Reply::Turn(Turn::text(format!(
                "## Goal\nReview one subsystem after another.\n## Done — do not repeat\n- reviewed a subsystem{trailing}"
            )))
        })
    });
    for (t, topic) in topics.iter().enumerate() {
        for i in 0..14 {
            sandbox.write(&format!("{topic}/f{i}.rs"), &source(topic, i, t == 0 && i == 3));
            script = script.turn(Turn::tool("file_read", json!({"path": format!("{topic}/f{i}.rs")})));
        }
        script = script.turn(Turn::text(format!("The {topic} review is done.")));
    }
    // The sixth task asks for the fact; the model searches the session's earlier work.
    script = script
        .turn(Turn::tool("memory_search", json!({"query": "parser cache entries warm-up"})))
        .turn(Turn::text("The parser cache holds 4217 entries."));
    let mock = MockLlm::start(script).await;
    let mut session = None;
    let mut compactions_before = Vec::new();
    for (t, topic) in topics.iter().enumerate() {
        prompt_in_session(&sandbox, Api::Anthropic, &mock, &mut session, &task(t + 1, topic), &["--yes"]).await;
        compactions_before.push(mock.requests().iter().filter(|r| is_compaction(r)).count());
    }
    let question = "How many entries did the parser cache hold after warm-up, in the first task?";
    prompt_in_session(&sandbox, Api::Anthropic, &mock, &mut session, question, &["--yes"]).await;
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    let requests = mock.requests();
    let compactions: Vec<&RecordedRequest> = requests.iter().filter(|r| is_compaction(r)).collect();
    assert!(!compactions.is_empty(), "finished work left at some new task: {compactions_before:?}");
    for c in &compactions {
        // Read in place: the session's tools and messages, the instruction last.
        assert!(!tool_names(c).is_empty());
        assert!(c.body.to_string().contains("starts new work"), "a finished-work compaction: {compactions_before:?}");
    }
    let agent: Vec<&RecordedRequest> = requests.iter().filter(|r| !is_compaction(r)).collect();
    let answer = agent.last().unwrap().body.to_string();
    assert!(
        answer.contains(FACT),
        "the fact reached the answer's request: {}",
        crate::support::cairn::last_result(agent.last().unwrap())
    );
    // Before the question, the first task's outputs had long left the view.
    let before_question = agent[agent.len() - 3].body.to_string();
    assert!(before_question.contains("scheduler") && !before_question.contains("fn parser_"));
    // Later tasks do not carry the finished ones: no request holds more than two tasks' reads.
    let task_chars: usize =
        topics.iter().map(|t| (0..14).map(|i| source(t, i, false).len()).sum::<usize>()).max().unwrap();
    let peak = agent.iter().map(|r| r.body.to_string().len()).max().unwrap();
    assert!(peak < 3 * task_chars, "{peak} chars at most, tasks of {task_chars}: {compactions_before:?}");
}
