//! Modes are enforced by the dispatcher, whatever the model asks: plan mode changes nothing,
//! ask mode sends no tools, and headless runs without --yes deny what needs approval.

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text, tool_names, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

fn writes_and_commands() -> Turn {
    Turn::tools(vec![
        MockCall::new("file_write", json!({"path": "new.txt", "content": "x"})),
        MockCall::new("file_edit", json!({"path": "keep.txt", "old_string": "original", "new_string": "changed"})),
        MockCall::new("bash", json!({"command": "touch ran.txt"})),
        MockCall::new("file_read", json!({"path": "keep.txt"})),
    ])
}

async fn plan_mode_changes_no_file(api: Api) {
    let sandbox = Sandbox::new();
    sandbox.write("keep.txt", "original\n");
    let mock = MockLlm::start(Script::new().turn(writes_and_commands()).turn(Turn::text("Here is the plan."))).await;
    // Even --yes cannot open plan mode's read-only gate.
    let out = sandbox.run(api, &mock, &["-p", "plan it", "--mode", "plan", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sandbox.read("keep.txt"), "original\n");
    assert!(!sandbox.exists("new.txt") && !sandbox.exists("ran.txt"));
    let requests = mock.requests();
    assert_eq!(
        tool_names(&requests[0]),
        ["file_read", "glob", "grep", "bash", "memory_save", "memory_search", "web_fetch", "task", "todo"]
    );
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 4);
    for (_, content, _) in &results[..3] {
        assert!(content.contains("plan mode"), "{content}");
    }
    assert_eq!(results[3].1, "     1\toriginal", "reads still work in plan mode");
    assert_eq!(json_result(&out)["mode"], "plan");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn plan_mode_changes_no_file_on_anthropic() {
    plan_mode_changes_no_file(Api::Anthropic).await;
}

#[tokio::test]
async fn plan_mode_changes_no_file_on_openai() {
    plan_mode_changes_no_file(Api::OpenAi).await;
}

#[tokio::test]
async fn ask_mode_sends_no_tools_and_refuses_a_call_anyway() {
    let sandbox = Sandbox::new();
    sandbox.write("keep.txt", "original\n");
    let mock = MockLlm::start(Script::new().turn(writes_and_commands()).turn(Turn::text("An answer."))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "question", "--mode", "ask", "--yes"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert!(requests[0].body.get("tools").is_none(), "no tools key at all: {}", requests[0].body);
    assert!(tool_results(&requests[1]).iter().all(|(_, c, _)| c.contains("ask mode")));
    assert_eq!(sandbox.read("keep.txt"), "original\n");
    assert!(!sandbox.exists("new.txt") && !sandbox.exists("ran.txt"));
}

#[tokio::test]
async fn headless_without_yes_denies_what_needs_approval_and_counts_it() {
    let sandbox = Sandbox::new();
    sandbox.write("keep.txt", "original\n");
    let mock = MockLlm::start(Script::new().turn(writes_and_commands()).turn(Turn::text("Could not write."))).await;
    let out = sandbox.run(Api::OpenAi, &mock, &["-p", "change it", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["denied_tool_calls"], 3);
    assert_eq!(result["is_error"], false);
    assert_eq!(sandbox.read("keep.txt"), "original\n");
    assert!(!sandbox.exists("new.txt") && !sandbox.exists("ran.txt"));
    let results = tool_results(&mock.requests()[1]);
    assert!(results[0].1.contains("without --yes"), "{}", results[0].1);
    assert_eq!(results[3].1, "     1\toriginal");
}

#[tokio::test]
async fn paths_outside_the_project_are_refused_in_plan_and_denied_headless() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "top secret\n").unwrap();
    let path = secret.display().to_string();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": path})))
            .turn(Turn::text("no"))
            .turn(Turn::tool("file_read", json!({"path": "../".repeat(30) + path.trim_start_matches('/')})))
            .turn(Turn::text("no")),
    )
    .await;
    let plan = sandbox.run(Api::Anthropic, &mock, &["-p", "read it", "--mode", "plan"]).await;
    assert!(plan.status.success());
    let edit = sandbox.run(Api::Anthropic, &mock, &["-p", "read it"]).await;
    assert!(edit.status.success());
    let requests = mock.requests();
    let refused = crate::support::cairn::last_result(&requests[1]);
    assert!(refused.contains("outside the project"), "{refused}");
    let denied = crate::support::cairn::last_result(&requests[3]);
    assert!(denied.contains("without --yes") && denied.contains("outside the project"), "{denied}");
    assert!(!requests.iter().any(|r| r.body.to_string().contains("top secret")));
}

#[tokio::test]
async fn mode_can_be_switched_by_a_headless_slash_command_and_sticks() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("hello")).turn(Turn::text("planned"))).await;
    let first = json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "json"]).await);
    let id = first["session_id"].as_str().unwrap();
    let switched =
        sandbox.run(Api::Anthropic, &mock, &["--session", id, "-p", "/mode plan", "--output-format", "json"]).await;
    assert!(switched.status.success(), "{}", text(&switched.stderr));
    assert_eq!(json_result(&switched)["mode"], "plan");
    let next = json_result(
        &sandbox.run(Api::Anthropic, &mock, &["--session", id, "-p", "go", "--output-format", "json"]).await,
    );
    assert_eq!(next["mode"], "plan");
    assert_eq!(
        tool_names(&mock.requests()[1]),
        ["file_read", "glob", "grep", "bash", "memory_save", "memory_search", "web_fetch", "task", "todo"]
    );
}
