//! Gigantic tool-call arguments (issue 17, failure 2): a 2 MB `file_write` or a 1 MB
//! `memory_save` is carried out whole, and sent back clipped — valid JSON with a note — from
//! the first request on, so no request overflows a window the mock enforces.

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Script, Turn};

/// The arguments of every tool call a request carries back, parsed, whatever the wire.
fn sent_arguments(req: &RecordedRequest) -> Vec<Value> {
    let mut out = Vec::new();
    for m in req.messages() {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let raw = call["function"]["arguments"].as_str().unwrap_or_default();
            out.push(serde_json::from_str(raw).unwrap_or_else(|e| panic!("arguments sent as invalid JSON ({e})")));
        }
        for block in m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_use") {
            out.push(block["input"].clone());
        }
    }
    out
}

async fn run_with(api: Api, call: Turn, sandbox: &Sandbox) -> (MockLlm, std::process::Output) {
    let mock = MockLlm::start(
        Script::new().context_window(32_000).turn(call).turn(Turn::text("Written.")).turn(Turn::text("Still here.")),
    )
    .await;
    let out = sandbox
        .run(api, &mock, &["-p", "write it", "--yes", "--output-format", "json", "--context-window", "32000"])
        .await;
    (mock, out)
}

#[tokio::test]
async fn a_two_megabyte_file_write_is_written_whole_and_sent_back_clipped() {
    let sandbox = Sandbox::new();
    let content: String = (0..40_000).map(|n| format!("row {n:06}: {}\n", "x".repeat(40))).collect();
    assert!(content.len() > 2_000_000);
    let (mock, out) =
        run_with(Api::Anthropic, Turn::tool("file_write", json!({"path": "big.txt", "content": content})), &sandbox)
            .await;
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "Written.");
    assert_eq!(sandbox.read("big.txt"), content, "the tool received every byte");
    assert!(mock.problems().is_empty(), "no request over the window: {:#?}", mock.problems());
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one try each: nothing was refused and retried");
    let args = sent_arguments(&requests[1]);
    let sent = args[0]["content"].as_str().unwrap();
    assert!(sent.len() < 10_000, "{} characters sent back", sent.len());
    assert!(sent.starts_with("row 000000: ") && sent.contains("more characters omitted to save context"));
    assert_eq!(args[0]["path"], "big.txt", "the short arguments are untouched");
}

#[tokio::test]
async fn a_one_megabyte_memory_save_fits_the_next_request_and_a_resume_sends_the_same() {
    let sandbox = Sandbox::new();
    let content = "the build needs libfoo 1.2 installed from source; ".repeat(21_000);
    assert!(content.len() > 1_000_000);
    let save = Turn::tool("memory_save", json!({"type": "project", "title": "Build notes", "content": content}));
    let (mock, out) = run_with(Api::OpenAi, save, &sandbox).await;
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let first = mock.requests()[1].body.to_string();
    assert!(first.len() < 60_000, "the request after the call is {} bytes", first.len());
    let args = sent_arguments(&mock.requests()[1]);
    assert!(args[0]["content"].as_str().unwrap().contains("more characters omitted to save context"));
    // Resuming sends the history exactly as the live session did.
    let id = json_result(&out)["session_id"].as_str().unwrap().to_string();
    let again =
        sandbox.run(Api::OpenAi, &mock, &["--session", &id, "-p", "still there?", "--output-format", "json"]).await;
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(sent_arguments(&mock.requests()[2]), args, "the same clipped arguments on resume");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
