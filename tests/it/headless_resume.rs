//! Sessions across runs: continuing with --session and --resume, listing, exporting, and
//! refusing ids that do not exist here.

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text, user_texts};
use crate::support::mock_llm::{MockLlm, Script, Turn};

#[tokio::test]
async fn session_flag_continues_with_the_whole_earlier_history() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "alpha\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})))
            .turn(Turn::text("It holds alpha."))
            .turn(Turn::text("You asked what a.txt holds.")),
    )
    .await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "what is in a.txt?", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();

    let second = sandbox
        .run(Api::Anthropic, &mock, &["--session", &id, "-p", "what did I ask?", "--output-format", "json"])
        .await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(json_result(&second)["session_id"], id.as_str());

    let requests = mock.requests();
    let resumed = &requests[2];
    let roles: Vec<&str> = resumed.messages().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(user_texts(resumed), ["what is in a.txt?", "what did I ask?"]);
    assert!(resumed.body.to_string().contains("It holds alpha."));
    assert!(resumed.body.to_string().contains("     1\\talpha"), "the earlier tool result is sent again");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    let list = sandbox.bare_command(&["sessions", "--json"]).output().await.unwrap();
    assert!(list.status.success());
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["title"], "what is in a.txt?");
    assert_eq!(list[0]["message_count"], 6);
    assert!(list[0]["tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn resume_picks_the_latest_session_and_a_prefix_is_enough() {
    let sandbox = Sandbox::new();
    let mock =
        MockLlm::start(Script::new().turn(Turn::text("one")).turn(Turn::text("two")).turn(Turn::text("three"))).await;
    let first = json_result(&sandbox.run(Api::OpenAi, &mock, &["-p", "first", "--output-format", "json"]).await);
    let second = json_result(&sandbox.run(Api::OpenAi, &mock, &["-p", "second", "--output-format", "json"]).await);
    assert_ne!(first["session_id"], second["session_id"]);
    let resumed =
        json_result(&sandbox.run(Api::OpenAi, &mock, &["--resume", "-p", "third", "--output-format", "json"]).await);
    assert_eq!(resumed["session_id"], second["session_id"]);
    let prefix = &first["session_id"].as_str().unwrap()[..6];
    let by_prefix = sandbox.run(Api::OpenAi, &mock, &["--session", prefix, "-p", "x", "--output-format", "json"]).await;
    assert_eq!(json_result(&by_prefix)["session_id"], first["session_id"]);
}

#[tokio::test]
async fn unknown_session_exits_2_before_calling_the_model() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new()).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["--session", "0123456789ab", "-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no session 0123456789ab") && stderr.contains("cairn sessions"), "{stderr}");
    assert!(mock.requests().is_empty());
    let out = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no session to resume"));
}

#[tokio::test]
async fn a_session_of_another_project_is_refused_with_where_it_lives() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("hi"))).await;
    let id =
        json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "json"]).await)["session_id"]
            .as_str()
            .unwrap()
            .to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["--session", &id, "-p", "hi"]);
    cmd.current_dir(elsewhere.path());
    let out = cmd.output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("belongs to another project"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn export_prints_the_session_as_trajectory_jsonl_with_full_outputs() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "alpha\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})).with_text("Reading."))
            .turn(Turn::text("alpha.")),
    )
    .await;
    let id = json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "read a.txt", "--output-format", "json"]).await)
        ["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = sandbox.bare_command(&["export", &id]).output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let roles: Vec<&str> = lines.iter().map(|l| l["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    assert_eq!(lines[2]["tool_calls"][0]["name"], "file_read");
    assert_eq!(lines[2]["tool_calls"][0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(lines[3]["tool_call_id"], lines[2]["tool_calls"][0]["id"]);
    assert_eq!(lines[3]["content"], "     1\talpha");
    let unknown = sandbox.bare_command(&["export", "ffffffff"]).output().await.unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}
