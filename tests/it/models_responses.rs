//! OpenAI reasoning end to end: the Responses API carries a reasoning model's reasoning across
//! tool calls (encrypted, `store: false`), survives the same faults as the other wires without
//! running a tool twice, and chat completions sends `reasoning_effort`.

use serde_json::{Value, json};

use crate::support::cairn::{Api, KEY, Sandbox, json_result, text, tool_results};
use crate::support::mock_llm::{Fault, MockLlm, Script, Turn};

fn reasoning_loop(sandbox: &Sandbox) -> Script {
    sandbox.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    sandbox.write("src/main.rs", "fn main() {}\n");
    Script::new()
        .turn(Turn::tool("file_read", json!({"path": "src/lib.rs"})).with_thinking("Read lib.rs first."))
        .turn(Turn::tool("file_read", json!({"path": "src/main.rs"})).with_thinking("Now main.rs."))
        .turn(Turn::text("It returns 42.").with_thinking("Done."))
}

fn items<'a>(input: &'a [Value], kind: &str) -> Vec<&'a Value> {
    input.iter().filter(|i| i["type"] == kind).collect()
}

#[tokio::test]
async fn reasoning_items_are_carried_across_tool_calls_on_the_responses_api() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(reasoning_loop(&sandbox)).await;
    let out = sandbox
        .run(
            Api::OpenAiResponses,
            &mock,
            &["-p", "what is the answer?", "--thinking", "high", "--output-format", "json"],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "It returns 42.");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for req in &requests {
        assert_eq!(req.path, "/v1/responses");
        assert_eq!(req.body["store"], false);
        assert_eq!(req.body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(req.body["reasoning"], json!({"effort": "high", "summary": "auto"}));
        assert!(req.body["instructions"].as_str().is_some_and(|i| i.contains("cairn")));
    }
    // The second request sends the first step's reasoning back, right before its call; the
    // third sends both, the first byte for byte as before.
    let second = requests[1].messages();
    let reasoning = items(second, "reasoning");
    assert_eq!(reasoning.len(), 1);
    assert!(reasoning[0]["encrypted_content"].as_str().is_some_and(|e| !e.is_empty()));
    assert_eq!(reasoning[0]["summary"], json!([{"type": "summary_text", "text": "Read lib.rs first."}]));
    let at = second.iter().position(|i| i["type"] == "reasoning").unwrap();
    assert_eq!(second[at + 1]["type"], "function_call");
    let third = requests[2].messages();
    assert_eq!(items(third, "reasoning").len(), 2);
    assert_eq!(items(third, "reasoning")[0].to_string(), reasoning[0].to_string());
    assert_eq!(tool_results(&requests[2]).len(), 2);
}

/// `cairn ARGS` against the mock's OpenAI-compatible endpoint, with no model chosen for it.
fn openai_command(sandbox: &Sandbox, mock: &MockLlm, args: &[&str]) -> tokio::process::Command {
    let mut cmd = sandbox.bare_command(args);
    cmd.env("OPENAI_API_KEY", KEY).env("OPENAI_BASE_URL", mock.openai_base_url());
    cmd
}

#[tokio::test]
async fn chat_completions_sends_reasoning_effort_to_reasoning_models_only() {
    let sandbox = Sandbox::new();
    sandbox.write("notes.txt", "ship on Friday\n");
    // A tool loop on a reasoning model, then one request to a model that does not reason.
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "notes.txt"})).with_thinking("Read the notes first."))
            .turn(Turn::text("Friday.").with_thinking("They say Friday."))
            .turn(Turn::text("ok")),
    )
    .await;
    let out = openai_command(&sandbox, &mock, &["-p", "when?", "--model", "gpt-5.4", "--thinking", "medium"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = openai_command(&sandbox, &mock, &["-p", "hi", "--model", "gpt-4o", "--thinking", "medium"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path, "/v1/chat/completions", "a compatible endpoint stays on chat completions");
    for r in &requests[..2] {
        assert_eq!(r.body["reasoning_effort"], "medium", "every request of the loop asks for it");
    }
    assert!(requests[1].body.to_string().contains("ship on Friday"), "the loop went on with the result");
    // Chat-completions reasoning is shown, never sent back (DeepSeek refuses `reasoning_content`
    // in input messages).
    assert!(!requests[1].body.to_string().contains("Read the notes first."), "{}", requests[1].body);
    assert!(requests[2].body.get("reasoning_effort").is_none(), "gpt-4o does not reason");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

fn append_once() -> Turn {
    Turn::tool("bash", json!({"command": "echo ran >> count.txt"})).with_thinking("Append a line.")
}

#[tokio::test]
async fn responses_faults_are_retried_and_no_tool_runs_twice() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            // The sandbox allows five attempts per request.
            .fault(Fault::Status { code: 429, retry_after: Some(0.01), body: None })
            .fault(Fault::Overloaded)
            .fault(Fault::MalformedEvent)
            .fault(Fault::Truncated(append_once()))
            .turn(append_once())
            .fault(Fault::ErrorEvent)
            .fault(Fault::DropMidStream)
            .fault(Fault::Truncated(append_once()))
            .turn(Turn::text("Done once.")),
    )
    .await;
    let out = sandbox.run(Api::OpenAiResponses, &mock, &["-p", "append", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["result"], "Done once.");
    assert_eq!(result["turns"], 2, "two successful requests");
    assert_eq!(sandbox.read("count.txt"), "ran\n", "the command ran exactly once");
    let requests = mock.requests();
    assert_eq!(requests.len(), 9);
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    // Retries send the same request again; the one after the tool carries its single result
    // and the reasoning of the step that called it.
    assert_eq!(requests[0].body, requests[3].body);
    assert_eq!(tool_results(&requests[8]).len(), 1);
    assert_eq!(requests[8].messages().iter().filter(|i| i["type"] == "reasoning").count(), 1);
}
