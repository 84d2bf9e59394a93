//! Provider failures are retried to success without running any tool call twice; tool failures
//! go back to the model; a crash loses at most the message in flight; keys never reach disk.

use std::time::Duration;

use serde_json::json;

use crate::support::cairn::{Api, KEY, Sandbox, json_result, last_result, text, tool_results};
use crate::support::mock_llm::{Fault, MockCall, MockLlm, Script, Turn};

fn append_once() -> Turn {
    Turn::tool("bash", json!({"command": "echo ran >> count.txt"}))
}

async fn faults_are_retried_and_no_call_runs_twice(api: Api) {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            // The sandbox allows five attempts per request.
            .fault(Fault::Status { code: 429, retry_after: Some(0.01), body: None })
            .fault(Fault::ServerError)
            .fault(Fault::MalformedEvent)
            .fault(Fault::Truncated(append_once()))
            .turn(append_once())
            .fault(Fault::Overloaded)
            .fault(Fault::DropMidStream)
            .fault(Fault::Truncated(append_once()))
            .turn(Turn::text("Done once.")),
    )
    .await;
    let out = sandbox.run(api, &mock, &["-p", "append", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["result"], "Done once.");
    assert_eq!(result["turns"], 2, "two successful requests");
    assert_eq!(sandbox.read("count.txt"), "ran\n", "the command ran exactly once");
    let requests = mock.requests();
    assert_eq!(requests.len(), 9);
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    // Retries send the same request again; the one after the tool carries its single result.
    assert_eq!(requests[0].body, requests[2].body);
    assert_eq!(tool_results(&requests[8]).len(), 1);
}

#[tokio::test]
async fn anthropic_faults_are_retried_without_repeating_tools() {
    faults_are_retried_and_no_call_runs_twice(Api::Anthropic).await;
}

#[tokio::test]
async fn openai_faults_are_retried_without_repeating_tools() {
    faults_are_retried_and_no_call_runs_twice(Api::OpenAi).await;
}

#[tokio::test]
async fn retries_show_in_stream_json_and_giving_up_exits_1() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .fault(Fault::Overloaded)
            .fault(Fault::Overloaded)
            .fault(Fault::Overloaded)
            .fault(Fault::Overloaded)
            .fault(Fault::Overloaded),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "stream-json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let lines = crate::support::cairn::json_lines(&out);
    assert_eq!(lines.iter().filter(|l| l["type"] == "retry").count(), 4);
    let last = lines.last().unwrap();
    assert_eq!(last["is_error"], true);
    assert!(last["result"].as_str().unwrap().contains("gave up after 5 attempts"), "{last}");
}

#[tokio::test]
async fn tool_failures_and_unparsable_arguments_go_back_to_the_model() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "one\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                MockCall::new("file_edit", json!({"path": "a.txt", "old_string": "two", "new_string": "2"})),
                MockCall::new("file_read", json!("{\"path\": \"a.txt\"")),
                MockCall::new("no_such_tool", json!({})),
                MockCall::new("file_read", json!({"path": "missing.txt"})),
            ]))
            .turn(Turn::text("I see the problems.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "edit", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results.len(), 4);
    assert!(results.iter().all(|(_, _, is_error)| *is_error));
    assert!(results[0].1.contains("old_string not found"), "{}", results[0].1);
    assert!(results[1].1.contains("not valid JSON"), "{}", results[1].1);
    assert!(results[2].1.contains("no tool named `no_such_tool`") && results[2].1.contains("file_read"));
    assert!(results[3].1.contains("missing.txt does not exist"), "{}", results[3].1);
    assert_eq!(sandbox.read("a.txt"), "one\n");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn a_context_length_error_shrinks_the_context_and_retries_once() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().fault(Fault::ContextLength).turn(Turn::text("fits now"))).await;
    let out = sandbox.run(Api::OpenAi, &mock, &["-p", "hi", "--output-format", "json"]).await;
    let result = json_result(&out);
    assert_eq!(result["result"], "fits now", "{result}");
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn a_second_context_length_error_fails_the_run_with_a_clear_message() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().fault(Fault::ContextLength).fault(Fault::ContextLength)).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let result = json_result(&out);
    assert!(result["result"].as_str().unwrap().contains("context window"), "{result}");
    assert_eq!(mock.requests().len(), 2, "one retry, not a loop");
}

#[tokio::test]
async fn kill_9_mid_tool_keeps_every_finished_message_and_resumes_validly() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "sleep 30"})).with_text("Waiting a while."))
            .turn(Turn::text("Picked up again.")),
    )
    .await;
    let mut child = sandbox.command(Api::Anthropic, &mock, &["-p", "wait", "--yes"]).spawn().unwrap();
    // Wait until the assistant message with the call is committed, then kill without warning.
    let db = sandbox.home.path().join("cairn.db");
    let mut committed = false;
    for _ in 0..200 {
        if db.exists()
            && let Ok(conn) = rusqlite::Connection::open(&db)
            && conn
                .query_row("SELECT COUNT(*) FROM messages WHERE role = 'assistant'", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0)
                == 1
        {
            committed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(committed, "the assistant message was never committed");
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    let conn = sandbox.database();
    let (session, roles): (String, String) = conn
        .query_row(
            "SELECT session_id, GROUP_CONCAT(role, ',') FROM (SELECT session_id, role FROM messages ORDER BY seq)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(roles, "user,assistant");

    let out =
        sandbox.run(Api::Anthropic, &mock, &["--session", &session, "-p", "go on", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let resumed = &mock.requests()[1];
    assert!(mock.problems().is_empty(), "the resumed request is valid: {:#?}", mock.problems());
    let stub = last_result(resumed);
    assert!(stub.contains("interrupted before this call finished"), "{stub}");
}

#[tokio::test]
async fn the_api_key_never_reaches_cairn_home() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "env; echo \"key=$ANTHROPIC_API_KEY\""})))
            .turn(Turn::tool("file_write", json!({"path": "leak.txt", "content": format!("pasted {KEY}")})))
            .turn(Turn::text(format!("I saw {KEY} somewhere."))),
    )
    .await;
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", &format!("my key is {KEY}, keep it safe"), "--yes"]);
    cmd.env("CAIRN_LOG", "trace");
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The key went where it must (the request header) and nowhere into cairn's own files.
    assert_eq!(mock.requests()[0].header("x-api-key"), Some(KEY));
    let files = sandbox.home_files();
    assert!(files.iter().any(|f| f.extension().is_some_and(|e| e == "log")), "logging was on: {files:?}");
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in {}", file.display());
    }
    let bash = crate::support::cairn::tool_results(&mock.requests()[1]).pop().unwrap().1;
    assert!(!bash.contains(KEY) && bash.contains("key=\n"), "bash does not inherit provider keys: {bash}");
}
