//! The session report (issue 29): `cairn report` of a session run headless against the mock
//! shows the numbers `/context` and the headless JSON give for it, holds no secret, fetches
//! nothing, and `/report` writes the same file from inside a session.

use serde_json::{Value, json};

use crate::support::aux_calls::AuxCall;
use crate::support::cairn::{Api, KEY, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Reply, Script, Turn};

const WINDOW: &str = "32000";
const READS: usize = 6;

fn log(i: usize) -> String {
    (0..170).map(|n| format!("2026-11-22T10:00:{:02} run {i} step {n:04} status=ok detail=nothing\n", n % 60)).collect()
}

/// Reads enough logs that a 32k window compacts once, and a short one; the summary carries the
/// API key, which the report must not.
fn script(sandbox: &Sandbox) -> Script {
    let mut script = Script::new().simulate_cache().context_window(32_000).responder(|req| {
        (AuxCall::of(req) == Some(AuxCall::Compaction)).then(|| {
            Reply::Turn(Turn::text(format!(
                "## Goal\nRead the logs.\n## Critical Context\n- the key in the environment is {KEY}\n## Done — do not repeat\n- read several logs"
            )))
        })
    });
    for i in 0..READS {
        sandbox.write(&format!("logs/{i}.log"), &log(i));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/{i}.log")})));
    }
    // A short read last: the compaction planned after the long ones starts once the model
    // answers with a call (one planned at a final answer would wait for the next prompt).
    sandbox.write("logs/index.txt", "0.log to 5.log\n");
    script.turn(Turn::tool("file_read", json!({"path": "logs/index.txt"}))).turn(Turn::text("All logs read."))
}

/// The text of the figure cell `id` of a report.
fn figure(html: &str, id: &str) -> String {
    let start = format!("id=\"fig-{id}\">");
    let at = html.find(&start).unwrap_or_else(|| panic!("no figure {id}")) + start.len();
    html[at..].split('<').next().unwrap_or_default().to_string()
}

fn count(v: &Value) -> String {
    let n = v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"));
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[tokio::test]
async fn the_report_of_a_session_shows_the_numbers_of_context_and_of_the_headless_json() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(script(&sandbox)).await;
    let run = sandbox
        .run(Api::Anthropic, &mock, &["-p", "read the logs", "--output-format", "json", "--context-window", WINDOW])
        .await;
    assert!(run.status.success(), "{}", text(&run.stderr));
    let result = json_result(&run);
    let id = result["session_id"].as_str().unwrap().to_string();
    assert_eq!(result["context"]["compactions"], 1, "{result}");
    let shown = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &["--session", &id, "-p", "/context", "--output-format", "json", "--context-window", WINDOW],
        )
        .await;
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let context: Value = serde_json::from_str(json_result(&shown)["result"].as_str().unwrap()).unwrap();

    let out_file = sandbox.home.path().join("report.html");
    let report = sandbox.run(Api::Anthropic, &mock, &["report", &id[..8], "--out", out_file.to_str().unwrap()]).await;
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert_eq!(text(&report.stdout).trim(), out_file.display().to_string(), "the path is printed");
    let html = std::fs::read_to_string(&out_file).unwrap();

    // The headless JSON's figures.
    let usage = &result["usage"];
    assert_eq!(figure(&html, "requests"), count(&usage["requests"]));
    assert_eq!(figure(&html, "input"), count(&usage["input_tokens"]));
    assert_eq!(figure(&html, "output"), count(&usage["output_tokens"]));
    assert_eq!(figure(&html, "cache-read"), count(&usage["cache_read_input_tokens"]));
    assert_eq!(figure(&html, "cache-write"), count(&usage["cache_creation_input_tokens"]));
    assert_eq!(figure(&html, "last-request"), count(&result["context"]["last_request_tokens"]));
    let cost = result["cost_usd"].as_f64().unwrap();
    assert_eq!(figure(&html, "cost"), format!("${cost:.4}"));
    for (fig, key) in [
        ("compactions", "compactions"),
        ("truncations", "truncations"),
        ("dedup", "dedup_replacements"),
        ("pruned", "pruned_results"),
        ("trimmed", "trimmed_messages"),
        ("compaction-failures", "compaction_failures"),
    ] {
        assert_eq!(figure(&html, fig), count(&result["context"][key]), "{fig}");
        // `/context` counts the same.
        assert_eq!(figure(&html, fig), count(&context["counters"][key]), "{fig} in /context");
    }
    // `/context`'s money and cache share.
    let session_usd = context["cost"]["session_usd"].as_f64().unwrap();
    assert_eq!(figure(&html, "cost"), format!("${session_usd:.4}"));
    let hit = context["cache"]["session_hit_rate"].as_f64().unwrap();
    assert_eq!(figure(&html, "hit-rate"), format!("{:.1} %", hit * 100.0));

    // The charts are there, with the compaction marked; nothing is fetched, no script runs,
    // and the key the summary carried is not in the file.
    assert!(html.contains("Context per agent request") && html.contains(">C</text>"), "the compaction is marked");
    assert!(html.contains("Prompt tokens per request") && html.contains("Cost over the session"));
    assert!(html.contains("auxiliary calls"), "the summary call has its own colour");
    assert!(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(!html.contains(KEY), "a secret reached the report");
    assert!(html.contains("Read the logs."), "the compaction's summary is shown");
}

#[tokio::test]
async fn slash_report_writes_the_session_held_and_says_where() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("Hello."))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "say hello", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let out = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/report"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let path = text(&out.stdout).trim().to_string();
    assert!(path.starts_with(&sandbox.home.path().join("reports").display().to_string()), "{path}");
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("say hello"), "the session's title");
    assert_eq!(figure(&html, "requests"), "1");
}

#[tokio::test]
async fn spend_since_a_day_and_bad_input() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("Hello."))).await;
    assert!(sandbox.run(Api::Anthropic, &mock, &["-p", "say hello"]).await.status.success());
    let out_file = sandbox.home.path().join("spend.html");
    let out = sandbox
        .run(Api::Anthropic, &mock, &["report", "--since", "2000-01-01", "--out", out_file.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&out_file).unwrap();
    assert!(html.contains("Spend per day and project") && html.contains(&sandbox.root().display().to_string()));
    assert_eq!(figure(&html, "requests"), "1");
    let bad = sandbox.run(Api::Anthropic, &mock, &["report", "--since", "yesterday"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("YYYY-MM-DD"), "{}", text(&bad.stderr));
    let none = sandbox.run(Api::Anthropic, &mock, &["report", "nosuchsession"]).await;
    assert_eq!(none.status.code(), Some(2), "{}", text(&none.stderr));
}
