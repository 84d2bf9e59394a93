//! The `todo` task list through the real binary: sent as the last block of every request, after
//! the last cache breakpoint (so updating it costs no cached prefix), kept through a compaction
//! and a `--resume`, and reported in stream-json.

use serde_json::{Value, json};

use crate::support::cache_check::{per_request, share};
use crate::support::cairn::{Api, Sandbox, json_lines, text};
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

#[tokio::test]
async fn the_list_rides_after_the_last_breakpoint_and_keeps_the_cache_share_at_95_percent() {
    let sandbox = Sandbox::new();
    let mut script = Script::new()
        .simulate_cache()
        .turn(todo(&[("1", "read the modules", "in_progress"), ("2", "summarise them", "pending")]));
    // Nineteen more requests: reads, with the list updated every fourth.
    for i in 0..18 {
        let body: String = (0..12).map(|l| format!("fn item_{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        script = if i % 4 == 3 {
            script.turn(todo(&[
                ("1", &format!("read the modules ({} of 18)", i + 1), "in_progress"),
                ("2", "summarise them", "pending"),
            ]))
        } else {
            script.turn(Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")})))
        };
    }
    let mock = MockLlm::start(script.turn(Turn::text("Read them all."))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "read every module", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let requests = mock.requests();
    assert_eq!(requests.len(), 20);
    assert!(!requests[0].body.to_string().contains(NOTE), "no list before the model makes one");
    for (i, req) in requests.iter().enumerate().skip(1) {
        let (last, only_tail_after) = last_block(req);
        assert!(last.starts_with(NOTE), "request {}: the list is the last block: {last}", i + 1);
        assert!(only_tail_after, "request {}: nothing but the list after the last breakpoint", i + 1);
        assert!(req.cache_markers() <= 4);
    }
    let (last, _) = last_block(&requests[19]);
    assert!(last.contains("read the modules (16 of 18)") && last.contains("summarise them"), "{last}");
    let lines = json_lines(&out);
    let todo_events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "todo").collect();
    assert_eq!(todo_events.len(), 6, "the list the session starts with, then a line per update: {todo_events:#?}");
    assert_eq!(todo_events[0]["items"], json!([]));
    assert_eq!(todo_events[1]["items"][0]["status"], "in_progress");
    assert_eq!(todo_events[5]["counts"], json!({"pending": 1, "in_progress": 1, "done": 0}));
    let per = per_request(&lines);
    let steady = share(&per[2..]);
    eprintln!("steady-state cache share with list updates: {steady:.4}");
    assert!(steady >= 0.95, "steady-state cache share {steady:.3} with list updates: {per:?}");
}

fn is_summary(req: &RecordedRequest) -> bool {
    let body = req.body.to_string();
    body.contains("You are summarising part of a conversation")
        || body.contains("summarising one stretch of a coding session")
        || body.contains("pick out what is worth remembering")
}

#[tokio::test]
async fn the_list_survives_a_compaction_and_a_resume() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().context_window(32_000).responder(|req| {
        is_summary(req).then(|| {
            Reply::Turn(Turn::text(if req.body.to_string().contains("pick out what is worth remembering") {
                r#"{"memories": []}"#
            } else {
                "## Goal\nReview the logs.\n## Done — do not repeat\n- read several logs"
            }))
        })
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
