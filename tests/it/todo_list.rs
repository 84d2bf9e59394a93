//! The `todo` task list through the real binary: sent as the last block of every request, after
//! the last cache breakpoint (so updating it costs no cached prefix), kept through a compaction
//! and a `--resume`, and reported in stream-json.

use serde_json::{Value, json};

use crate::support::aux_calls::AuxCall;
use crate::support::cache_check::{per_request, prompt_in_session, share};
use crate::support::cairn::{Api, Sandbox, text};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};

const NOTE: &str = "[cairn] Your task list";

fn todo(items: &[(&str, &str, &str)]) -> Turn {
    let items: Vec<Value> = items.iter().map(|(id, t, s)| json!({"id": id, "text": t, "status": s})).collect();
    Turn::tool("todo", json!({"items": items}))
}

/// The last block of the last message, and whether any block after the last `cache_control`
/// marker of the request is something other than that block.
fn last_block(req: &RecordedRequest) -> (String, bool) {
    let messages = req.body["messages"].as_array().expect("messages");
    let blocks: Vec<&Value> = messages.iter().flat_map(|m| m["content"].as_array().into_iter().flatten()).collect();
    let last = blocks.last().map(|b| b["text"].as_str().unwrap_or_default().to_string()).unwrap_or_default();
    let marked = blocks.iter().rposition(|b| b.get("cache_control").is_some());
    let only_tail_after = marked.is_none_or(|i| i + 2 == blocks.len());
    (last, only_tail_after)
}

/// What the model does with the session's prompt `i`: every third prompt (the first included) it
/// updates the list, reads the module asked about and answers; the others read and answer.
fn replies_to_prompt(i: usize) -> Vec<Turn> {
    let read = Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")}));
    let answer = Turn::text(format!("src/m{i}.rs defines item_{i}_0 to item_{i}_39."));
    if i.is_multiple_of(3) {
        let list =
            todo(&[("1", &format!("read the modules ({i} of 20)"), "in_progress"), ("2", "summarise them", "pending")]);
        vec![list, read, answer]
    } else {
        vec![read, answer]
    }
}

/// A 20-turn session: 20 prompts to one session, each a run of the binary of its own
/// (`--session` from the second on), against one mock whose simulated Anthropic cache lives
/// across the runs. Every request of the session counts, the first included.
#[tokio::test]
async fn the_list_rides_after_the_last_breakpoint_and_keeps_the_cache_share_at_95_percent() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().simulate_cache();
    for i in 0..20 {
        let body: String = (0..40).map(|l| format!("pub fn item_{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        for turn in replies_to_prompt(i) {
            script = script.turn(turn);
        }
    }
    let mock = MockLlm::start(script).await;
    let mut session: Option<String> = None;
    let mut requests: Vec<(u64, u64)> = Vec::new();
    let mut updates = 0;
    for i in 0..20 {
        let prompt = format!("what is in src/m{i}.rs?");
        let lines = prompt_in_session(&sandbox, Api::Anthropic, &mock, &mut session, &prompt, &[]).await;
        let turn = per_request(&lines);
        assert_eq!(turn.len(), replies_to_prompt(i).len(), "prompt {i}: its tool loop and answer");
        requests.extend(turn);
        // stream-json: the list the run starts with, then a line per update.
        let todo_events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "todo").collect();
        let updated = usize::from(i.is_multiple_of(3));
        assert_eq!(todo_events.len(), 1 + updated, "prompt {i}: {todo_events:#?}");
        if i == 0 {
            assert_eq!(todo_events[0]["items"], json!([]), "no list before the model makes one");
        } else {
            let shown = todo_events[0]["items"][0]["text"].as_str().unwrap_or_default();
            assert_eq!(
                shown,
                format!("read the modules ({} of 20)", (i - 1) / 3 * 3),
                "prompt {i} starts with the stored list"
            );
        }
        updates += updated;
    }
    assert_eq!(updates, 7);
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let recorded = mock.requests();
    assert_eq!(recorded.len(), requests.len(), "every request the mock saw is counted");
    assert!(!recorded[0].body.to_string().contains(NOTE), "no list before the model makes one");
    for (i, req) in recorded.iter().enumerate().skip(1) {
        let (last, only_tail_after) = last_block(req);
        assert!(last.starts_with(NOTE), "request {}: the list is the last block: {last}", i + 1);
        assert!(only_tail_after, "request {}: nothing but the list after the last breakpoint", i + 1);
        assert!(req.cache_markers() <= 4);
    }
    let (last, _) = last_block(recorded.last().unwrap());
    assert!(last.contains("read the modules (18 of 20)") && last.contains("summarise them"), "{last}");
    let whole = share(&requests);
    eprintln!("cache share with list updates, {} requests of 20 prompts: {whole:.4}", requests.len());
    assert!(whole >= 0.95, "whole-session cache share {whole:.3} with list updates: {requests:?}");
}

fn is_summary(req: &RecordedRequest) -> bool {
    AuxCall::of(req).is_some()
}

#[tokio::test]
async fn the_list_survives_a_compaction_and_a_resume() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().context_window(32_000).responder(|req| {
        is_summary(req)
            .then(|| Reply::Turn(Turn::text("## Goal\nReview the logs.\n## Done — do not repeat\n- read several logs")))
    });
    script = script.turn(todo(&[("1", "review the logs", "in_progress"), ("1a", "first half", "done")]));
    for i in 0..12 {
        let log: String = (0..340).map(|n| format!("run {i} step {n:04} status=ok detail=nothing-to-see\n")).collect();
        sandbox.write(&format!("logs/run_{i:02}.log"), &log);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/run_{i:02}.log")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("Reviewed."))).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "review the logs", "--output-format", "json", "--context-window", "32000"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let result = crate::support::cairn::json_result(&out);
    assert!(result["context"]["compactions"].as_u64().unwrap() >= 1, "{}", result["context"]);
    let agent: Vec<RecordedRequest> = mock.requests().into_iter().filter(|r| !is_summary(r)).collect();
    assert_eq!(agent.len(), 14);
    for req in &agent[1..] {
        assert!(last_block(req).0.contains("- [~] 1: review the logs"), "every request after the update");
    }

    mock.push(Turn::text("Still reviewing."));
    let resumed =
        sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "where are we?", "--output-format", "json"]).await;
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let last = mock.requests().into_iter().rfind(|r| !is_summary(r)).unwrap();
    let (block, _) = last_block(&last);
    assert!(block.contains("- [~] 1: review the logs") && block.contains("first half"), "{block}");
}
