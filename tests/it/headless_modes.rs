//! Modes are enforced by the dispatcher, whatever the model asks: plan mode changes nothing,
//! ask mode forbids tool calls (the mode line says so, and every call is refused), and headless
//! runs without --yes deny what needs approval. Every mode sends the same tools, system prompt
//! and tool choice; the mode is a line after the last cache breakpoint, so switching rewrites no
//! cached block.

use serde_json::json;

use crate::support::cache_check::{per_request, prompt_in_session};
use crate::support::cairn::{Api, Sandbox, json_result, text, tool_names, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, RecordedRequest, Script, Turn};

/// Every tool, in every mode.
const TOOLS: [&str; 13] = [
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
    "todo",
];

/// The text a request carries after its last message block: the mode line (Anthropic).
fn tail_text(req: &RecordedRequest) -> String {
    let last = req.messages().last().cloned().unwrap_or_default();
    last["content"].as_array().and_then(|b| b.last()).and_then(|b| b["text"].as_str()).unwrap_or("").to_string()
}

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
    assert_eq!(tool_names(&requests[0]), TOOLS, "the same tools as in edit mode: the dispatcher holds the mode");
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
async fn ask_mode_keeps_the_tools_and_the_tool_choice_and_refuses_every_call() {
    let sandbox = Sandbox::new();
    sandbox.write("keep.txt", "original\n");
    let mock = MockLlm::start(Script::new().turn(writes_and_commands()).turn(Turn::text("An answer."))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "question", "--mode", "ask", "--yes"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert_eq!(tool_names(&requests[0]), TOOLS);
    // The tool choice of every mode (none is sent): a change of it would drop the cached
    // messages. The mode line says no tools, and the dispatcher refuses every call.
    assert!(requests.iter().all(|r| r.body["tool_choice"].is_null()), "{:?}", requests[0].body["tool_choice"]);
    assert!(tail_text(&requests[0]).contains("ask mode"), "{}", tail_text(&requests[0]));
    assert!(tool_results(&requests[1]).iter().all(|(_, c, _)| c.contains("ask mode")));
    assert_eq!(sandbox.read("keep.txt"), "original\n");
    assert!(!sandbox.exists("new.txt") && !sandbox.exists("ran.txt"));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_in_ask_mode_is_stopped_after_three_replies() {
    let sandbox = Sandbox::new();
    let call = || Turn::tool("bash", json!({"command": "touch ran.txt"}));
    let mock =
        MockLlm::start(Script::new().turn(call()).turn(call()).turn(call()).turn(call()).turn(Turn::text("Never.")))
            .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "question", "--mode", "ask", "--output-format", "json"]).await;
    assert!(!out.status.success(), "the turn failed");
    let result = json_result(&out);
    assert_eq!(result["is_error"], true);
    let said = result["result"].as_str().unwrap_or_default();
    assert!(said.contains("3 replies in a row in ask mode") && said.contains("Shift+Tab"), "{said}");
    assert_eq!(mock.requests().len(), 3, "no fourth request after the third refusal");
    assert!(!sandbox.exists("ran.txt"));
    // A model that calls once, is refused and answers is not stopped.
    let mock = MockLlm::start(Script::new().turn(call()).turn(Turn::text("From what I know: no."))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "question", "--mode", "ask", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "From what I know: no.");
}

#[tokio::test]
async fn ask_mode_after_tool_calls_is_a_request_the_strict_api_accepts() {
    for api in [Api::Anthropic, Api::OpenAi, Api::OpenAiResponses] {
        let sandbox = Sandbox::new();
        sandbox.write("notes.txt", "the port is 8080\n");
        let mock = MockLlm::start(
            Script::new()
                .turn(Turn::tool("file_read", json!({"path": "notes.txt"})))
                .turn(Turn::text("Read it."))
                .turn(Turn::text("The port is 8080.")),
        )
        .await;
        let mut session = None;
        prompt_in_session(&sandbox, api, &mock, &mut session, "read notes.txt", &[]).await;
        // The history now holds a tool call and its result; ask mode sends it with the tools.
        prompt_in_session(&sandbox, api, &mock, &mut session, "which port?", &["--mode", "ask"]).await;
        let ask = mock.requests().pop().unwrap();
        assert!(ask.body.to_string().contains("the port is 8080"), "the tool result is in the history");
        assert!(!tool_names(&ask).is_empty(), "{api:?}: the tools are sent");
        assert!(mock.problems().is_empty(), "{api:?}: {:#?}", mock.problems());
    }
}

/// Edit → plan → ask → edit in one session, against a mock that caches as the provider does
/// (on Anthropic a change of `tool_choice` drops the cached messages): every request reads the
/// whole request before it from the cache, on every wire.
async fn switching_edit_plan_ask_edit_rewrites_no_cached_block(api: Api) {
    let sandbox = Sandbox::new();
    let body: String = (0..300).map(|l| format!("fn item_{l}() -> u32 {{ {l} }}\n")).collect();
    sandbox.write("src/lib.rs", &body);
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .turn(Turn::tool("file_read", json!({"path": "src/lib.rs"})))
            .turn(Turn::text("Read it."))
            .turn(Turn::text("Plan: rename item_1."))
            .turn(Turn::text("It returns 1."))
            .turn(Turn::tool("file_read", json!({"path": "src/lib.rs", "limit": 5})))
            .turn(Turn::text("Done.")),
    )
    .await;
    let mut session = None;
    let mut requests = Vec::new();
    for (prompt, mode) in
        [("read src/lib.rs", "edit"), ("plan a rename", "plan"), ("what does item_1 return?", "ask"), ("go", "edit")]
    {
        let lines = prompt_in_session(&sandbox, api, &mock, &mut session, prompt, &["--mode", mode]).await;
        requests.extend(per_request(&lines));
    }
    assert_eq!(requests.len(), 6, "{api:?}");
    assert!(requests[0].0 > 2_000, "a prefix worth caching: {requests:?}");
    // The mock counts blocks, its total counts the JSON around them too: a few tokens apart;
    // OpenAI's automatic cache reads in steps of 128 tokens.
    let slack = if api == Api::Anthropic { 64 } else { 128 + 64 };
    for (i, pair) in requests.windows(2).enumerate() {
        let ((previous, _), (_, read)) = (pair[0], pair[1]);
        assert!(
            read + slack >= previous,
            "{api:?}: request {} read {read} of the {previous} sent before: {requests:?}",
            i + 2
        );
    }
    let sent = mock.requests();
    if api == Api::Anthropic {
        let tails: Vec<String> = sent.iter().map(tail_text).collect();
        for (i, mode) in [(2, "plan"), (3, "ask")] {
            assert!(tails[i].contains(&format!("{mode} mode")), "request {}: {}", i + 1, tails[i]);
        }
        for i in [0, 4] {
            assert!(!tails[i].contains("[cairn: "), "edit mode is the default: no mode line: {}", tails[i]);
        }
    }
    assert!(sent.iter().all(|r| tool_names(r) == TOOLS && r.system() == sent[0].system()), "{api:?}");
    assert!(sent.iter().all(|r| r.body["tool_choice"] == sent[0].body["tool_choice"]), "{api:?}: one tool choice");
    assert!(mock.problems().is_empty(), "{api:?}: {:#?}", mock.problems());
}

#[tokio::test]
async fn switching_edit_plan_ask_edit_rewrites_no_cached_block_on_anthropic() {
    switching_edit_plan_ask_edit_rewrites_no_cached_block(Api::Anthropic).await;
}

#[tokio::test]
async fn switching_edit_plan_ask_edit_rewrites_no_cached_block_on_openai() {
    switching_edit_plan_ask_edit_rewrites_no_cached_block(Api::OpenAi).await;
}

#[tokio::test]
async fn switching_edit_plan_ask_edit_rewrites_no_cached_block_on_responses() {
    switching_edit_plan_ask_edit_rewrites_no_cached_block(Api::OpenAiResponses).await;
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
    assert_eq!(tool_names(&mock.requests()[1]), TOOLS);
    assert!(tail_text(&mock.requests()[1]).contains("plan mode"));
}
