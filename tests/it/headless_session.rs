//! A whole coding session run headless through the real binary, on both wires: every tool, the
//! edits on disk, and what reached the provider.

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_lines, json_result, last_result, text, tool_names, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

fn coding_session() -> Script {
    Script::new()
        .turn(
            Turn::tools(vec![
                MockCall::new("glob", json!({"pattern": "**/*.rs"})),
                MockCall::new("grep", json!({"pattern": "a - b", "glob": "*.rs"})),
            ])
            .with_text("Let me find the function."),
        )
        .turn(Turn::tool("file_read", json!({"path": "src/lib.rs"})))
        .turn(Turn::tool("file_edit", json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})))
        .turn(Turn::tool("bash", json!({"command": "grep -c 'a + b' src/lib.rs; echo checked >> checks.log"})))
        .turn(Turn::tool("file_write", json!({"path": "NOTES.md", "content": "add() adds now.\n"})))
        .turn(Turn::text("Fixed `add` in src/lib.rs: it subtracted."))
}

async fn runs_a_whole_session(api: Api) {
    let sandbox = Sandbox::new();
    sandbox.write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n");
    let mock = MockLlm::start(coding_session()).await;

    let out = sandbox.run(api, &mock, &["-p", "add() is wrong, fix it", "--yes", "--output-format", "json"]).await;

    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["result"], "Fixed `add` in src/lib.rs: it subtracted.");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["turns"], 6);
    assert_eq!(result["mode"], "edit");
    assert_eq!(result["usage"]["requests"], 6);
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(result["context"]["last_request_tokens"].as_u64().unwrap() > 0);
    for key in [
        "truncations",
        "dedup_replacements",
        "pruned_results",
        "compactions",
        "trimmed_messages",
        "compaction_failures",
    ] {
        assert!(result["context"][key].is_u64(), "context.{key} missing");
    }
    assert_eq!(result["denied_tool_calls"], 0);

    assert_eq!(sandbox.read("src/lib.rs"), "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    assert_eq!(sandbox.read("NOTES.md"), "add() adds now.\n");
    assert_eq!(sandbox.read("checks.log"), "checked\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    assert!(mock.problems().is_empty(), "invalid requests: {:#?}", mock.problems());
    assert!(requests.iter().all(|r| r.body["stream"] == true));
    assert_eq!(
        tool_names(&requests[0]),
        [
            "file_read",
            "glob",
            "grep",
            "file_write",
            "file_edit",
            "bash",
            "bash_output",
            "bash_stop",
            "memory_save",
            "memory_search",
            "web_fetch",
            "task",
            "todo"
        ]
    );

    // Each result reached the model in the next request, answering its call.
    let first = tool_results(&requests[1]);
    assert_eq!(first.len(), 2, "both parallel calls answered together");
    assert_eq!(first[0].1, "src/lib.rs");
    assert_eq!(first[1].1, "src/lib.rs:2:    a - b");
    assert!(last_result(&requests[2]).contains("     2\t    a - b"));
    assert!(last_result(&requests[3]).starts_with("Edited src/lib.rs: +1 −1 lines"));
    assert_eq!(last_result(&requests[4]), "1\n[exit code 0]");
    assert_eq!(last_result(&requests[5]), "Created NOTES.md (1 line)");
}

#[tokio::test]
async fn whole_session_on_the_anthropic_wire() {
    runs_a_whole_session(Api::Anthropic).await;
}

#[tokio::test]
async fn whole_session_on_the_openai_wire() {
    runs_a_whole_session(Api::OpenAi).await;
}

#[tokio::test]
async fn stream_json_reports_deltas_calls_results_context_and_the_result() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "hello\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})).with_text("Reading."))
            .turn(Turn::text("It says hello.")),
    )
    .await;
    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "what does a.txt say", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let delta_text: String =
        lines.iter().filter(|l| l["type"] == "assistant_delta").map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(delta_text, "Reading.It says hello.");
    let call = lines.iter().find(|l| l["type"] == "tool_call").unwrap();
    assert_eq!((call["name"].as_str(), &call["arguments"]), (Some("file_read"), &json!({"path": "a.txt"})));
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["content"], "     1\thello");
    assert_eq!(types.iter().filter(|t| **t == "context").count(), 2);
    let last = lines.last().unwrap();
    assert_eq!((last["type"].as_str(), last["result"].as_str()), (Some("result"), Some("It says hello.")));
    // The final object has the json format's keys, in the contract's order, after "type".
    let keys: Vec<&str> = last.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "type",
            "session_id",
            "result",
            "is_error",
            "turns",
            "mode",
            "model",
            "usage",
            "context",
            "denied_tool_calls",
            "cache",
            "cost_usd"
        ]
    );
}

#[tokio::test]
async fn text_output_is_the_answer_alone() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("Just the answer."))).await;
    let out = sandbox.run(Api::OpenAi, &mock, &["-p", "hi"]).await;
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "Just the answer.\n");
}

#[tokio::test]
async fn prompt_can_come_from_stdin() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", "-"]);
    cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use tokio::io::AsyncWriteExt;
    child.stdin.take().unwrap().write_all(b"a prompt from a pipe\n").await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success());
    assert!(crate::support::cairn::user_texts(&mock.requests()[0]).iter().any(|t| t.contains("a prompt from a pipe")));
}

#[tokio::test]
async fn max_turns_stops_the_loop_and_says_how_to_continue() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("glob", json!({"pattern": "*"})))
            .turn(Turn::tool("glob", json!({"pattern": "**/*"})))
            .turn(Turn::text("never reached")),
    )
    .await;
    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "look around", "--max-turns", "2", "--output-format", "json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let result = json_result(&out);
    assert_eq!(result["is_error"], true);
    assert!(result["result"].as_str().unwrap().contains("--max-turns 2"));
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn ctrl_c_keeps_the_partial_answer_marked_and_exits_1() {
    let sandbox = Sandbox::new();
    let long = "word ".repeat(400);
    let mock = MockLlm::start(Script::new().turn(Turn::text(long)).chunk_delay_ms(100)).await;
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", "talk", "--output-format", "stream-json"]);
    cmd.stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    use tokio::io::AsyncBufReadExt;
    let mut first = String::new();
    while !first.contains("assistant_delta") {
        first.clear();
        assert!(stdout.read_line(&mut first).await.unwrap() > 0, "no delta before the end");
    }
    // SAFETY: sending a signal to our own child process by its pid.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut rest).await.unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(1));
    let last: serde_json::Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(last["is_error"], true);
    assert!(last["result"].as_str().unwrap().ends_with("[interrupted]"), "{last}");
    let stored: String = sandbox
        .database()
        .query_row("SELECT content FROM messages WHERE role = 'assistant'", [], |r| r.get(0))
        .unwrap();
    assert!(stored.contains("word word") && stored.contains("[interrupted by the user]"), "{stored}");
}
