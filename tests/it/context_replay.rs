//! `cairn context replay`: a recorded session through the pipeline, reported and dumped.

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, text};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};

/// A session in the TRAJECTORY format: a goal, `n` big command outputs, a few broken lines
/// and one orphaned result.
fn recorded_session(n: usize) -> String {
    let mut lines = vec![
        json!({"role": "system", "content": "You are a coding agent."}).to_string(),
        json!({"role": "user", "content": "Make the test suite pass. Never change tests/fixtures/.", "timestamp": "2026-11-22T10:00:00Z"}).to_string(),
    ];
    for i in 0..n {
        lines.push(
            json!({"role": "assistant", "content": format!("Step {i}."), "tool_calls": [{"id": format!("c{i}"), "name": "execute_bash", "arguments": {"command": format!("pytest -k case{i}")}}]})
                .to_string(),
        );
        let output: String =
            (0..400).map(|l| format!("case{i} line {l}: ........................................ ok\n")).collect();
        lines.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "name": "execute_bash", "content": output, "source_tool": "x"}).to_string());
        if i == 3 {
            lines.push("{ this line is broken".to_string());
            lines.push(
                json!({"role": "tool", "tool_call_id": "nobody", "name": "bash", "content": "stray"}).to_string(),
            );
        }
    }
    lines.push(json!({"role": "assistant", "content": "All green."}).to_string());
    lines.join("\n")
}

#[tokio::test]
async fn replay_reports_every_request_and_dumps_them_offline() {
    let sandbox = Sandbox::new();
    let file = sandbox.project.path().join("session.jsonl");
    std::fs::write(&file, recorded_session(30)).unwrap();
    let dump = sandbox.project.path().join("dump");
    let out = sandbox
        .bare_command(&[
            "context",
            "replay",
            file.to_str().unwrap(),
            "--window",
            "32000",
            "--json",
            "--offline",
            "--dump",
            dump.to_str().unwrap(),
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let totals = &report["totals"];
    assert_eq!(totals["requests"], 31);
    assert_eq!(totals["violations"], 0);
    assert!(totals["compactions"].as_u64().unwrap() >= 1, "{totals}");
    assert!(totals["cost"].as_f64().unwrap() > 0.0);
    assert_eq!((report["skipped_lines"].as_u64(), report["orphans"].as_u64()), (Some(1), Some(1)));
    let requests = report["requests"].as_array().unwrap();
    assert!(requests.iter().all(|r| r["tokens"].as_u64().unwrap() <= 24_000), "every request fits");
    // Every request as it would be sent, and the auxiliary calls with their replies.
    let first: Vec<Value> = std::fs::read_to_string(dump.join("0001.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(first[0], json!({"role": "system", "content": "You are a coding agent."}));
    assert_eq!(first[1]["content"], "Make the test suite pass. Never change tests/fixtures/.");
    let aux: Vec<_> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-aux-"))
        .collect();
    assert!(!aux.is_empty());
    let aux_lines: Vec<Value> = std::fs::read_to_string(dump.join(&aux[0]))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(aux_lines.last().unwrap()["role"], "assistant", "the reply is the last line");
    // Read in place: the session's system prompt and messages, the instruction last.
    assert_eq!(aux_lines[0], first[0]);
    assert_eq!(aux_lines[1], first[1], "the conversation as the request before it sent it");
    let instruction = aux_lines[aux_lines.len() - 2]["content"].as_str().unwrap();
    assert!(instruction.contains("You are summarising part of a conversation"), "{instruction}");
    // A request after the compaction carries the goal verbatim.
    let last: String = std::fs::read_to_string(dump.join("0031.jsonl")).unwrap();
    assert!(last.contains("Never change tests/fixtures/."));
}

#[tokio::test]
async fn replay_sends_compactions_to_the_configured_provider() {
    let sandbox = Sandbox::new();
    let file = sandbox.project.path().join("session.jsonl");
    std::fs::write(&file, recorded_session(30)).unwrap();
    let mock = MockLlm::start(
        Script::new().responder(|_| Some(Reply::Turn(Turn::text("## Goal\nmake the suite pass (mock summary)")))),
    )
    .await;
    let out =
        sandbox.run(Api::Anthropic, &mock, &["context", "replay", file.to_str().unwrap(), "--window", "32000"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("summaries by claude-sonnet-4-5 via anthropic"), "{report}");
    assert!(report.contains("invariant violations: 0"));
    assert!(!mock.requests().is_empty(), "the summariser was called");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn a_one_message_request_reports_one_clip_and_a_plain_cost() {
    let sandbox = Sandbox::new();
    // One user message far over an 8k window, and the reply: one request, one message clipped.
    let huge: String = (0..3_000).map(|n| format!("line {n} of a pasted log\n")).collect();
    let file = sandbox.project.path().join("one.jsonl");
    let lines = [
        json!({"role": "user", "content": huge}).to_string(),
        json!({"role": "assistant", "content": "That log is long."}).to_string(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = sandbox
        .bare_command(&["context", "replay", file.to_str().unwrap(), "--window", "8192", "--summaries", "scripted"])
        .output()
        .await
        .unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    assert!(report.contains("clipped 1 message in what is sent"), "{report}");
    assert!(report.contains("totals: 1 requests"), "{report}");
    // No request at all: the cost is zero, not "-0.00".
    std::fs::write(&file, json!({"role": "user", "content": "hello"}).to_string()).unwrap();
    let out = sandbox
        .bare_command(&["context", "replay", file.to_str().unwrap(), "--summaries", "extractive"])
        .output()
        .await
        .unwrap();
    let report = text(&out.stdout);
    assert!(report.contains("cost $0.00 at"), "{report}");
    assert!(!report.contains("$-"), "{report}");
}

#[tokio::test]
async fn scripted_summaries_fill_the_length_asked_for_and_replay_counts_them() {
    let sandbox = Sandbox::new();
    let file = sandbox.project.path().join("session.jsonl");
    std::fs::write(&file, recorded_session(30)).unwrap();
    let dump = sandbox.project.path().join("dump");
    let out = sandbox
        .bare_command(&[
            "context",
            "replay",
            file.to_str().unwrap(),
            "--window",
            "32000",
            "--json",
            "--summaries",
            "scripted",
            "--dump",
            dump.to_str().unwrap(),
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let aux = report["aux"].as_array().unwrap();
    assert!(!aux.is_empty());
    // 3.5 % of a 32k window: 1,120 tokens, the length asked for (and priced).
    for a in aux {
        assert_eq!(a["output_tokens"], 1_124, "1,120 tokens and the message framing: {a}");
        assert!(a["max_tokens"].as_u64().unwrap() > 1_120, "room beyond the length asked for");
    }
    assert_eq!(report["totals"]["violations"], 0);
    assert_eq!(report["totals"]["aux_requests"].as_u64().unwrap() as usize, aux.len());
}

/// A replay whose summaries come over HTTP (`--summaries model`, the summariser the bench's
/// `SUMMARIES=http` runs: the mock answering as the scripted summariser does) makes the same
/// calls and prices the same as the scripted replay, and the strict mock finds nothing wrong
/// with any call (the tools its history's calls need are sent, at most four breakpoints, …).
#[tokio::test]
async fn a_replay_with_summaries_over_http_prices_as_the_scripted_one() {
    let sandbox = Sandbox::new();
    let file = sandbox.project.path().join("session.jsonl");
    std::fs::write(&file, recorded_session(60)).unwrap();
    let mock =
        MockLlm::start(Script::new().simulate_cache().responder(crate::support::mock_llm::summariser::reply)).await;
    let replay = |summaries: &'static str| {
        let mut args = vec!["context", "replay", file.to_str().unwrap(), "--window", "32000", "--json"];
        args.extend(["--summaries", summaries]);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let args = replay("model");
    let over_http = sandbox.run(Api::Anthropic, &mock, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert!(over_http.status.success(), "{}\n{}", text(&over_http.stdout), text(&over_http.stderr));
    let args = replay("scripted");
    let scripted = sandbox.bare_command(&args.iter().map(String::as_str).collect::<Vec<_>>()).output().await.unwrap();
    assert!(scripted.status.success(), "{}", text(&scripted.stderr));
    let (http, local): (Value, Value) =
        (serde_json::from_slice(&over_http.stdout).unwrap(), serde_json::from_slice(&scripted.stdout).unwrap());
    let (h, l) = (&http["totals"], &local["totals"]);
    assert!(l["compactions"].as_u64().unwrap() >= 2, "{l}");
    for key in ["requests", "compactions", "aux_requests", "violations", "tokens_sent", "aux_output_tokens"] {
        assert_eq!(h[key], l[key], "{key}: over HTTP {h} vs scripted {l}");
    }
    let (hc, lc) = (h["cost"].as_f64().unwrap(), l["cost"].as_f64().unwrap());
    assert!((hc / lc - 1.0).abs() < 0.001, "over HTTP ${hc:.4} vs scripted ${lc:.4}");
    assert_eq!(mock.requests().len() as u64, h["aux_requests"].as_u64().unwrap(), "every summary went over HTTP");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn an_unreadable_file_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let out = sandbox.bare_command(&["context", "replay", "/nonexistent.jsonl", "--offline"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read /nonexistent.jsonl"));
    let file = sandbox.project.path().join("junk.jsonl");
    std::fs::write(&file, "not json\nnor this\n").unwrap();
    let out = sandbox.bare_command(&["context", "replay", file.to_str().unwrap(), "--offline"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("holds no messages (2 lines could not be read)"), "{}", text(&out.stderr));
}

/// Every session of the shared corpus at 16k, 32k and 128k windows, with zero violations.
/// `cargo test --release -- --ignored corpus` (needs ../shared/corpus beside the repository).
#[tokio::test]
#[ignore = "needs ../shared/corpus; run with --ignored"]
async fn corpus_replays_without_violations() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let sandbox = Sandbox::new();
    let mut files: Vec<_> = ["miniswe", "openhands"]
        .iter()
        .flat_map(|d| std::fs::read_dir(corpus.join(d)).expect("the corpus").map(|e| e.unwrap().path()))
        .collect();
    files.sort();
    assert_eq!(files.len(), 100);
    for file in files {
        for window in ["16000", "32000", "128000"] {
            let out = sandbox
                .bare_command(&[
                    "context",
                    "replay",
                    file.to_str().unwrap(),
                    "--window",
                    window,
                    "--summaries",
                    "scripted",
                    "--json",
                ])
                .output()
                .await
                .unwrap();
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
            assert_eq!(report["totals"]["violations"], 0, "{} at {window}", file.display());
        }
    }
}

/// A compaction reply as long as the request asks ("at most about N tokens", 4 characters a
/// token): the length the replay's scripted summariser writes.
fn reply_of_the_length_asked(req: &crate::support::mock_llm::RecordedRequest) -> Option<Reply> {
    use crate::support::aux_calls::{AuxCall, trailing_sections};
    AuxCall::of(req)?;
    let body = req.body.to_string();
    let at = body.rfind("at most about ")? + "at most about ".len();
    let tokens: usize = body[at..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()?;
    let trailing = trailing_sections(req, "read some of the data files", r#"{"memories": []}"#);
    let text: String = "## Goal\nCheck every data file. ".repeat(tokens * 4 / 30 + 1);
    let cut = (tokens * 4).saturating_sub(trailing.len()).min(text.len());
    Some(Reply::Turn(Turn::text(format!("{}{trailing}", &text[..cut]))))
}

/// The price a replay of a session predicts is what the session cost live: a headless run
/// against a mock that caches and counts like a provider (compactions included, each read in
/// place), then `cairn export` of it replayed with scripted summaries — within 5 %.
#[tokio::test]
async fn a_replay_prices_a_headless_session_within_five_percent() {
    let sandbox = Sandbox::new();
    let mut script = Script::new().simulate_cache().context_window(32_000).responder(reply_of_the_length_asked);
    for i in 0..30 {
        let body: String = (0..60)
            .map(|n| format!("record {i:02}-{n:03} | status nominal | region west | batch complete\n"))
            .collect();
        sandbox.write(&format!("data/d{i:02}.txt"), &body);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("data/d{i:02}.txt")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("All thirty files are nominal."))).await;
    let goal = "Check every data file under data/ and tell me whether any batch is incomplete.";
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", goal, "--yes", "--output-format", "json", "--context-window", "32000"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let live: Value = crate::support::cairn::json_result(&out);
    assert!(live["context"]["compactions"].as_u64().unwrap() >= 2, "{live}");
    let live_cost = live["cost_usd"].as_f64().unwrap();
    let first = &mock.requests()[0];
    let tool_tokens = (first.body["tools"].to_string().len() / 4).to_string();

    let id = live["session_id"].as_str().unwrap();
    let exported = sandbox.bare_command(&["export", id]).output().await.unwrap();
    assert!(exported.status.success(), "{}", text(&exported.stderr));
    let file = sandbox.project.path().join("session.jsonl");
    std::fs::write(&file, &exported.stdout).unwrap();
    let replay = sandbox
        .bare_command(&[
            "context",
            "replay",
            file.to_str().unwrap(),
            "--window",
            "32000",
            "--summaries",
            "scripted",
            "--tool-tokens",
            &tool_tokens,
            "--json",
        ])
        .output()
        .await
        .unwrap();
    assert!(replay.status.success(), "{}\n{}", text(&replay.stdout), text(&replay.stderr));
    let report: Value = serde_json::from_slice(&replay.stdout).unwrap();
    let predicted = report["totals"]["cost"].as_f64().unwrap();
    let auxiliary = mock.requests().iter().filter(|r| crate::support::aux_calls::AuxCall::of(r).is_some()).count();
    assert_eq!(report["totals"]["aux_requests"].as_u64().unwrap() as usize, auxiliary, "the same auxiliary calls");
    let ratio = predicted / live_cost;
    eprintln!("replay ${predicted:.4} vs live ${live_cost:.4}: {ratio:.3}");
    assert!((0.95..=1.05).contains(&ratio), "replay ${predicted:.4} vs live ${live_cost:.4}: {ratio:.3}");

    // The same replay with its summaries over HTTP sends them as the live session does: the
    // conversation of the request the call follows, with the cache breakpoints it had (so the
    // call reads it from the cache), the same instruction after every breakpoint, the same
    // length limit and nothing else. (The replay's summary and protected facts are its own,
    // and its calibration — on the simulated tokenizer, not the mock's count of the JSON — may
    // plan a compaction a request later.)
    let summariser =
        MockLlm::start(Script::new().simulate_cache().responder(crate::support::mock_llm::summariser::reply)).await;
    let args = ["context", "replay", file.to_str().unwrap(), "--window", "32000", "--tool-tokens", &tool_tokens];
    let over_http =
        sandbox.run(Api::Anthropic, &summariser, &[&args[..], &["--json", "--summaries", "model"]].concat()).await;
    assert!(over_http.status.success(), "{}", text(&over_http.stderr));
    let requests = mock.requests();
    let live_calls: Vec<usize> =
        (0..requests.len()).filter(|&i| crate::support::aux_calls::AuxCall::of(&requests[i]).is_some()).collect();
    let replayed_calls = summariser.requests();
    assert_eq!(replayed_calls.len(), live_calls.len(), "the same summary calls");
    let instruction = |r: &RecordedRequest| {
        let last = r.messages().last().cloned().unwrap_or_default();
        last["content"].as_array().and_then(|b| b.last()).cloned().unwrap_or_default()
    };
    let keys =
        |r: &RecordedRequest| r.body.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    for (&at, replayed) in live_calls.iter().zip(&replayed_calls) {
        let live = &requests[at];
        // The live call reads the agent's request before it, byte for byte, breakpoints included.
        let before = &requests[at - 1];
        let n = before.messages().len();
        assert_eq!(live.messages()[..n - 1], before.messages()[..n - 1], "read in place");
        assert_eq!(live.cache_markers(), before.cache_markers(), "the request's breakpoints, and no more");
        let (li, ri) = (instruction(live), instruction(replayed));
        assert!(li.get("cache_control").is_none() && ri.get("cache_control").is_none(), "the instruction is last");
        let fixed = |v: &Value| v["text"].as_str().unwrap_or("").lines().take(40).map(String::from).collect::<Vec<_>>();
        assert!(fixed(&li)[0].starts_with("[cairn] Stop here"), "{li}");
        assert_eq!(fixed(&ri), fixed(&li), "the same instruction");
        assert_eq!(replayed.cache_markers(), live.cache_markers(), "the same breakpoints");
        assert_eq!(replayed.body["max_tokens"], live.body["max_tokens"]);
        assert_eq!(keys(replayed), keys(live), "the same parameters");
    }
    assert!(summariser.problems().is_empty(), "{:#?}", summariser.problems());
}
