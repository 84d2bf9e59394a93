//! The context pipeline end to end: a long session inside a small window, the user's goal
//! surviving compactions, `/compact` by hand, all through the real binary against a mock that
//! refuses any request larger than its window.

use serde_json::{Value, json};

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cairn::{Api, Sandbox, json_result, text, user_texts};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};

const GOAL: &str = "GOAL: review every log under logs/ and report the failures. CONSTRAINTS: never edit files in logs/; answer in English; keep the report under ten lines.";

fn is_compaction(req: &RecordedRequest) -> bool {
    AuxCall::of(req) == Some(AuxCall::Compaction)
}

/// A mock model with `window` tokens that answers summarisation requests with a numbered
/// summary ("summary #1", …), a line for each segment it is asked about and one memory, and
/// everything else from the queue.
fn script_with_summaries(window: u64) -> Script {
    let count = std::sync::atomic::AtomicUsize::new(0);
    Script::new().context_window(window).responder(move |req| {
        is_compaction(req).then(|| {
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let trailing = trailing_sections(
                req,
                "Read several logs; all steps ok.",
                r#"{"memories": [{"type": "project", "title": "Log format", "content": "Logs under logs/ are one status line per step"}]}"#,
            );
            Reply::Turn(Turn::text(format!(
                "## Goal\nReview the logs.\n## Done — do not repeat\n- read several logs (summary #{n}){trailing}"
            )))
        })
    })
}

fn log_file(i: usize, lines: usize) -> String {
    (0..lines)
        .map(|n| {
            format!("2026-11-22T10:{:02}:{:02} run {i} step {n:04} status=ok detail=nothing-to-see\n", n % 60, n % 60)
        })
        .collect()
}

fn tool_names_of(req: &RecordedRequest) -> Vec<String> {
    crate::support::cairn::tool_names(req)
}

fn agent_requests(mock: &MockLlm) -> Vec<RecordedRequest> {
    mock.requests().into_iter().filter(|r| !is_compaction(r)).collect()
}

#[tokio::test]
async fn twenty_large_results_finish_inside_a_32k_window() {
    let sandbox = Sandbox::new();
    let mut script = script_with_summaries(32_000);
    for i in 0..20 {
        // ~26 KB (~6.5k tokens) each, ~130k tokens in all.
        sandbox.write(&format!("logs/run_{i:02}.log"), &log_file(i, 340));
        let turn = if i % 2 == 0 {
            Turn::tool("bash", json!({"command": format!("cat logs/run_{i:02}.log")}))
        } else {
            Turn::tool("file_read", json!({"path": format!("logs/run_{i:02}.log")}))
        };
        script = script.turn(turn);
    }
    let mock = MockLlm::start(script.turn(Turn::text("All twenty logs reviewed: no failures."))).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", GOAL, "--yes", "--output-format", "json", "--context-window", "32000"])
        .await;
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["result"], "All twenty logs reviewed: no failures.");
    assert_eq!(result["turns"], 21);
    let context = &result["context"];
    assert!(context["compactions"].as_u64().unwrap() >= 1, "{context}");
    assert!(context["truncations"].as_u64().unwrap() >= 1, "{context}");
    assert_eq!(result["usage"]["requests"].as_u64().unwrap(), mock.requests().len() as u64, "every call is counted");
    assert_eq!(context["window"], 32_000);
    // No request over the window (the mock refuses and records those), none with an orphaned
    // or unanswered tool pair.
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    assert!(mock.requests().iter().any(is_compaction));

    // Every truncated output is on disk, byte for byte what the tool produced.
    let conn = sandbox.database();
    let mut stmt = conn.prepare("SELECT call_id, output FROM tool_results").unwrap();
    let outputs: Vec<(String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    let spilled: Vec<std::path::PathBuf> =
        std::fs::read_dir(sandbox.home.path().join("truncations")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!spilled.is_empty());
    for path in &spilled {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (_, full) =
            outputs.iter().find(|(call, _)| name.ends_with(call.as_str())).expect("a spill file per truncated call");
        assert_eq!(&std::fs::read_to_string(path).unwrap(), full, "{name}");
    }
    let cat_output = outputs.iter().find(|(_, o)| o.starts_with("2026-11-22T10:00:00 run 0 ")).unwrap();
    assert_eq!(cat_output.1, format!("{}[exit code 0]", log_file(0, 340)));
    // The user's goal reached every request after a compaction.
    for req in agent_requests(&mock) {
        assert!(req.body.to_string().contains("never edit files in logs/"), "the goal is in every request");
    }
}

#[tokio::test]
async fn the_first_prompt_survives_one_two_and_five_compactions() {
    let sandbox = Sandbox::new();
    let mut script = script_with_summaries(22_000);
    for i in 0..60 {
        sandbox.write(&format!("logs/run_{i:02}.log"), &log_file(i, 110));
        script = script.turn(Turn::tool("bash", json!({"command": format!("cat logs/run_{i:02}.log")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("Done."))).await;
    let out = sandbox
        .run(Api::OpenAi, &mock, &["-p", GOAL, "--yes", "--output-format", "json", "--context-window", "22000"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let summaries = mock.requests().iter().filter(|r| is_compaction(r)).count();
    assert!(summaries >= 5, "{summaries} summariser calls");
    // Compactions run in the background: a request carries summary #n once the n-th has been
    // applied. Requests after the first, second and fifth must still hold the goal verbatim.
    let agent = agent_requests(&mock);
    for n in [1, 2, 5] {
        let marker = format!("(summary #{n})");
        let after: Vec<&RecordedRequest> = agent.iter().filter(|r| r.body.to_string().contains(&marker)).collect();
        assert!(!after.is_empty(), "summary #{n} was sent");
        for req in after {
            let sent = req.body.to_string();
            assert!(
                sent.contains("never edit files in logs/; answer in English; keep the report under ten lines"),
                "after compaction {n}"
            );
            assert!(!sent.contains("run 0 step 0000"), "the oldest output is gone after compaction {n}");
        }
    }
    let result = json_result(&out);
    assert!(result["context"]["compactions"].as_u64().unwrap() >= 5);
    // The result counts every call the provider saw, a compaction still running when the last
    // answer came included.
    assert_eq!(result["usage"]["requests"].as_u64().unwrap(), mock.requests().len() as u64, "{result}");
    assert_eq!(result["context"]["compactions"].as_u64().unwrap(), summaries as u64, "{result}");
}

#[tokio::test]
async fn compact_by_hand_then_a_new_prompt_keeps_the_goal_and_survives_a_restart() {
    let sandbox = Sandbox::new();
    let mut script = script_with_summaries(200_000);
    for i in 0..6 {
        sandbox.write(&format!("logs/run_{i:02}.log"), &log_file(i, 200));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/run_{i:02}.log")})));
    }
    let mock =
        MockLlm::start(script.turn(Turn::text("Read six logs.")).turn(Turn::text("Continuing with the report."))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", GOAL, "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();

    let before = mock.requests().len();
    let compacted =
        sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "/compact", "--output-format", "json"]).await;
    assert!(compacted.status.success(), "{}", text(&compacted.stdout));
    let result = json_result(&compacted);
    assert_eq!(result["context"]["compactions"], 1, "{result}");
    assert!(result["result"].as_str().unwrap().starts_with("compacted "), "{result}");
    // The summariser's one call: summary, segment lines and memories together.
    let calls = mock.requests()[before..].to_vec();
    assert_eq!(calls.len(), 1, "one auxiliary call per compaction");
    assert!(calls.iter().any(is_compaction), "the summariser was called");
    assert_eq!(result["usage"]["requests"].as_u64().unwrap(), calls.len() as u64, "every call is counted");
    // A summary is no memory: it is kept in the compaction log, and `cairn memories` lists none.
    let logged: String = sandbox.database().query_row("SELECT summary FROM compactions", [], |r| r.get(0)).unwrap();
    assert!(logged.contains("Review the logs."), "the summary is in the compaction log: {logged}");
    let listed = sandbox.bare_command(&["memories", "--json"]).output().await.unwrap();
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let memories: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let summaries: Vec<&Value> = memories
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["type"] == "compaction" || m["title"].as_str().is_some_and(|t| t.starts_with("Summary:")))
        .collect();
    assert!(summaries.is_empty(), "no summary is listed as a memory: {summaries:#?}");

    // A new process (the compaction was committed, not held in memory) and a new prompt.
    let next = sandbox
        .run(Api::Anthropic, &mock, &["--session", &id, "-p", "now write the report", "--output-format", "json"])
        .await;
    assert!(next.status.success(), "{}", text(&next.stderr));
    let last = agent_requests(&mock).pop().unwrap();
    let sent = last.body.to_string();
    assert!(sent.contains(GOAL.split(" CONSTRAINTS").next().unwrap()), "the goal, verbatim");
    assert!(sent.contains("Review the logs."), "the summary");
    assert!(!sent.contains("run 0 step 0000"), "the compacted outputs are not sent again");
    assert_eq!(user_texts(&last).last().map(String::as_str), Some("now write the report"));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

/// A compaction after the session's last counted request (here `/compact`; and again once a
/// rewind has taken back the turn counted since), then a new process: the context figure is
/// the compacted history's, not that request's count from before the compaction.
#[tokio::test]
async fn after_a_compaction_by_hand_a_resumed_session_counts_the_compacted_history() {
    let sandbox = Sandbox::new();
    let mut script = script_with_summaries(200_000);
    for i in 0..6 {
        sandbox.write(&format!("logs/run_{i:02}.log"), &log_file(i, 400));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/run_{i:02}.log")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("Read six logs.")).turn(Turn::text("Noted."))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", GOAL, "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let before = json_result(&first)["context"]["last_request_tokens"].as_u64().unwrap();
    let compacted =
        sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/compact", "--output-format", "json"]).await;
    assert_eq!(json_result(&compacted)["context"]["compactions"], 1);
    let shown_total = || async {
        let shown =
            sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/context", "--output-format", "json"]).await;
        let context: serde_json::Value =
            serde_json::from_str(json_result(&shown)["result"].as_str().unwrap()).expect("the /context breakdown");
        context["total"].as_u64().unwrap()
    };
    let total = shown_total().await;
    assert!(total < before * 2 / 3, "{total} tokens shown after compacting a {before}-token history");

    // A turn counted after the compaction, then taken back: the last counted request is again
    // the one from before it.
    let next =
        sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "anything else?", "--output-format", "json"]).await;
    assert!(next.status.success(), "{}", text(&next.stderr));
    let rewound = sandbox.run(Api::Anthropic, &mock, &["rewind", &id, "--to", "2", "--conversation"]).await;
    assert!(rewound.status.success(), "{}", text(&rewound.stderr));
    let total = shown_total().await;
    assert!(total < before * 2 / 3, "{total} tokens shown after a rewind to the compacted {before}-token history");
}

/// The path a truncation notice in the request's last tool result points at.
fn spill_path(req: &RecordedRequest) -> Option<String> {
    let last = crate::support::cairn::last_result(req);
    let start = last.find("full output saved to ")? + "full output saved to ".len();
    Some(last[start..].split(';').next()?.to_string())
}

#[tokio::test]
async fn a_saved_output_can_be_read_back_even_in_plan_mode_and_is_never_saved_again() {
    let sandbox = Sandbox::new();
    // 3,000 lines of 40 characters: over both limits.
    let big: String = (0..3_000).map(|n| format!("line {n:05} of the long build log ......\n")).collect();
    sandbox.write("build.log", &big);
    let script = Script::new().responder(|req| {
        let texts = crate::support::cairn::tool_results(req);
        match texts.len() {
            0 => Some(Reply::Turn(Turn::tool("grep", json!({"pattern": "line 0299", "path": "build.log"})))),
            _ if texts.len() == 1 && !texts[0].1.contains("truncated") => {
                Some(Reply::Turn(Turn::tool("file_read", json!({"path": "build.log"}))))
            }
            _ => match spill_path(req) {
                // Read the saved output back, the whole of it at once.
                Some(path) if texts.len() == 2 => {
                    Some(Reply::Turn(Turn::tool("file_read", json!({"path": path, "offset": 1, "limit": 3000}))))
                }
                _ => Some(Reply::Turn(Turn::text("Read it."))),
            },
        }
    });
    let mock = MockLlm::start(script).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "look at build.log", "--mode", "plan", "--output-format", "json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "grep, read, read of the saved output, answer");
    let read_back = crate::support::cairn::last_result(&requests[3]);
    assert!(!read_back.contains("not run") && !read_back.contains("outside the project"), "{read_back:.300}");
    assert!(read_back.contains("read a narrower range with file_read offset/limit"), "cut again, but not saved again");
    assert!(!read_back.contains("full output saved to"));
    let saved = std::fs::read_dir(sandbox.home.path().join("truncations")).unwrap().count();
    assert_eq!(saved, 1, "one saved output, no loop");
    assert_eq!(json_result(&out)["context"]["truncations"], 2);
}

#[tokio::test]
async fn segments_of_compacted_history_come_back_as_an_outline() {
    let sandbox = Sandbox::new();
    let mut script = script_with_summaries(32_000);
    let topics = ["parser", "database", "frontend"];
    for topic in topics {
        for i in 0..6 {
            let body: String = (0..160).map(|n| format!("{topic} module {topic} line {n}: {topic} detail\n")).collect();
            sandbox.write(&format!("{topic}/f{i}.txt"), &body);
            script = script.turn(Turn::tool("file_read", json!({"path": format!("{topic}/f{i}.txt")})));
        }
    }
    script = script.turn(Turn::text("Reviewed three areas."));
    // The next prompt reads on until another compaction: the outline of what the first one
    // hid reaches the continuation message when it is rewritten anyway, not before.
    for i in 0..8 {
        let body: String = (0..160).map(|n| format!("tests module line {n} of file {i}: all green\n")).collect();
        sandbox.write(&format!("tests/t{i}.txt"), &body);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("tests/t{i}.txt")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("Yes."))).await;
    let first = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &[
                "-p",
                "review the parser, database and frontend",
                "--yes",
                "--output-format",
                "json",
                "--context-window",
                "32000",
            ],
        )
        .await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let result = json_result(&first);
    assert!(result["context"]["compactions"].as_u64().unwrap() >= 1);
    let id = result["session_id"].as_str().unwrap().to_string();
    let conn = sandbox.database();
    let (segments, summarized): (i64, i64) = conn
        .query_row("SELECT COUNT(*), COUNT(summary) FROM segments WHERE level = 0", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert!(segments >= 2, "{segments} segments");
    assert!(summarized >= 1, "hidden segments were summarised");
    // The segments a compaction hid got their lines from that compaction's own call, which read
    // the conversation in place: the outputs whole, as the request before it sent them.
    let compactions: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_compaction).collect();
    assert!(compactions.iter().any(|c| !crate::support::aux_calls::named_stretches(c).is_empty()));
    for c in &compactions {
        let body = c.body.to_string();
        assert!(body.contains(" detail"), "the outputs, whole, in the conversation read in place");
        assert!(!tool_names_of(c).is_empty(), "with the session's tools, as the request before it");
    }
    let next = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &[
                "--session",
                &id,
                "-p",
                "anything left?",
                "--yes",
                "--output-format",
                "json",
                "--context-window",
                "32000",
            ],
        )
        .await;
    assert!(next.status.success(), "{}", text(&next.stderr));
    assert!(json_result(&next)["context"]["compactions"].as_u64().unwrap() >= 1);
    let last = agent_requests(&mock).pop().unwrap().body.to_string();
    assert!(last.contains("## Earlier in this session, by topic"), "the outline is in the continuation");
    assert!(last.contains("Read several logs; all steps ok."));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

/// A mock whose compaction replies stop at `max_tokens` for the first `cut` calls (their text
/// ends mid-section, as a real cut does) and are whole after that.
fn script_with_cut_summaries(cut: usize) -> Script {
    let count = std::sync::atomic::AtomicUsize::new(0);
    Script::new().context_window(200_000).responder(move |req| {
        is_compaction(req).then(|| {
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if n <= cut {
                Reply::Turn(Turn {
                    text: "## Goal\nReview the logs (cut reply).\n## Done — do not rep".into(),
                    stop: Some("max_tokens".into()),
                    ..Turn::default()
                })
            } else {
                Reply::Turn(Turn::text(
                    "## Goal\nReview the logs (whole reply).\n## Done — do not repeat\n- read six logs",
                ))
            }
        })
    })
}

async fn six_logs_then_compact(script: Script) -> (Sandbox, MockLlm, serde_json::Value) {
    let sandbox = Sandbox::new();
    let mut script = script;
    for i in 0..6 {
        sandbox.write(&format!("logs/run_{i:02}.log"), &log_file(i, 200));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/run_{i:02}.log")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("Read six logs."))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", GOAL, "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let compacted =
        sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "/compact", "--output-format", "json"]).await;
    let result = json_result(&compacted);
    (sandbox, mock, result)
}

fn stored_summaries(sandbox: &Sandbox) -> Vec<String> {
    let db = sandbox.database();
    let mut stmt = db.prepare("SELECT summary FROM compactions").unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap).collect()
}

#[tokio::test]
async fn a_summary_cut_at_its_length_limit_is_asked_again_and_only_the_whole_one_is_stored() {
    let (sandbox, mock, result) = six_logs_then_compact(script_with_cut_summaries(1)).await;
    assert_eq!(result["context"]["compactions"], 1, "{result}");
    let calls: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_compaction).collect();
    assert_eq!(calls.len(), 2, "the cut reply is asked again once");
    let limit = |r: &RecordedRequest| r.body["max_tokens"].as_u64().unwrap();
    assert!(limit(&calls[1]) >= limit(&calls[0]), "the second call has at least as much room");
    let summaries = stored_summaries(&sandbox);
    assert!(summaries.iter().any(|s| s.contains("(whole reply)")), "{summaries:?}");
    assert!(summaries.iter().all(|s| !s.contains("(cut reply)")), "a cut summary is never stored: {summaries:?}");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn a_summary_cut_twice_fails_the_compaction_and_stores_nothing() {
    let (sandbox, mock, result) = six_logs_then_compact(script_with_cut_summaries(usize::MAX)).await;
    assert_eq!(result["context"]["compactions"], 0, "{result}");
    let said = result.to_string();
    assert!(said.contains("cut off at the length limit"), "the user is told why: {said}");
    assert!(stored_summaries(&sandbox).is_empty(), "nothing cut is stored");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
