//! `cairn mcp-serve` called by cairn's own MCP client: the outer cairn (headless) has the inner
//! one as a stdio MCP server in its config; both talk to the same mock model, which tells their
//! requests apart by the tools they offer. One prompt, one continuation of the same session, the
//! answer and the session id returned each time, and a call the inner session's rules refuse
//! named in the result with its reason. And a client that takes elicitations (rmcp's client
//! side) answering cairn's approvals: one accepted, one declined.

use std::collections::VecDeque;
use std::sync::Mutex;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text, tool_names, tool_results, user_texts};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Script, Turn};

const ASK: &str = "What does notes.txt say?";
const FOLLOW: &str = "Delete it.";
const OUTER: &str = "ask cairn about the notes";

/// The session id the inner cairn put on its result's last line.
fn session_of(result: &str) -> Option<String> {
    let rest = result.split("[cairn session ").nth(1)?;
    Some(rest.split_whitespace().next()?.to_string())
}

/// The outer agent: ask, continue the session it was given, finish.
fn outer(req: &RecordedRequest) -> Turn {
    let results = tool_results(req);
    match results.len() {
        0 => Turn::tool("mcp__cairn__prompt", json!({"prompt": ASK})),
        1 => match session_of(&results[0].1) {
            Some(id) => Turn::tool("mcp__cairn__continue", json!({"prompt": FOLLOW, "session_id": id})),
            None => Turn::text(format!("no session id in: {}", results[0].1)),
        },
        _ => Turn::text("cairn answered twice."),
    }
}

/// The inner agent: reads the notes, then is asked to delete them and may not.
fn inner(req: &RecordedRequest) -> Turn {
    let results = tool_results(req).len();
    let followed = user_texts(req).iter().any(|t| t.contains(FOLLOW));
    match (followed, results) {
        (false, 0) => Turn::tool("file_read", json!({"path": "notes.txt"})),
        (false, _) => Turn::text("It says alpha."),
        (true, 1) => Turn::tool("bash", json!({"command": "rm notes.txt"})),
        (true, _) => Turn::text("I may not delete it here."),
    }
}

#[tokio::test]
async fn cairn_calls_cairn_over_mcp_prompt_then_continue_in_the_same_session() {
    // The inner cairn has a home of its own (its sessions, and no MCP server of its own).
    let inner_home = Sandbox::new();
    let sandbox = Sandbox::with_config(&format!(
        // The key is passed on explicitly: cairn gives no provider key to the servers it starts.
        "[mcp_servers.cairn]\ncommand = \"{}\"\nargs = [\"mcp-serve\"]\nenv = {{ CAIRN_HOME = \"{}\", ANTHROPIC_API_KEY = \"${{ANTHROPIC_API_KEY}}\" }}\n",
        env!("CARGO_BIN_EXE_cairn"),
        inner_home.home.path().display()
    ));
    sandbox.write("notes.txt", "alpha\n");
    let mock = MockLlm::start(Script::new().responder(|req| {
        let is_outer = user_texts(req).iter().any(|t| t.contains(OUTER));
        Some(if is_outer { outer(req) } else { inner(req) }.into())
    }))
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", OUTER, "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "cairn answered twice.", "{}", text(&out.stdout));

    let requests = mock.requests();
    let outer_requests: Vec<&RecordedRequest> =
        requests.iter().filter(|r| user_texts(r).iter().any(|t| t.contains(OUTER))).collect();
    assert!(tool_names(outer_requests[0]).iter().any(|n| n == "mcp__cairn__continue"), "both tools offered");
    assert_eq!(outer_requests.len(), 3, "the outer agent: ask, continue, finish");
    let results = tool_results(outer_requests[2]);
    let (first, second) = (&results[0].1, &results[1].1);
    assert!(first.starts_with("It says alpha."), "{first}");
    let session = session_of(first).expect("the first answer names its session");
    assert_eq!(session_of(second).as_deref(), Some(session.as_str()), "{second}");
    assert!(second.starts_with("I may not delete it here."), "{second}");
    assert!(second.contains("[not run: bash $ rm notes.txt"), "the refused call and why: {second}");
    assert_eq!(sandbox.read("notes.txt"), "alpha\n");

    // The continuation ran in the first session: the model saw the first exchange.
    let followed = requests
        .iter()
        .filter(|r| !user_texts(r).iter().any(|t| t.contains(OUTER)))
        .find(|r| user_texts(r).iter().any(|t| t.contains(FOLLOW)))
        .expect("the inner agent was asked to follow up");
    let seen = serde_json::to_string(followed.messages()).unwrap();
    assert!(seen.contains(ASK) && seen.contains("It says alpha."), "{seen}");
    // What the inner model was told of the refused call is true of mcp-serve: its client cannot
    // ask (cairn's MCP client takes no elicitation), only the rules and --allow decide there.
    let refused = requests
        .iter()
        .filter(|r| !user_texts(r).iter().any(|t| t.contains(OUTER)))
        .find_map(|r| tool_results(r).into_iter().find(|(_, text, _)| text.contains("`bash`")))
        .expect("the inner model was told of the refused command")
        .1;
    assert!(refused.contains("serving another agent over MCP") && refused.contains("--allow"), "{refused}");
    assert!(!refused.contains("--yes") && !refused.contains("headless"), "{refused}");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

/// An MCP client that takes elicitations, as Claude Code does: it answers cairn's questions
/// from a queue (accept with "once", or decline) and keeps what it was asked.
struct Asking {
    answers: Mutex<VecDeque<bool>>,
    asked: Mutex<Vec<String>>,
}

impl ClientHandler for Asking {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            panic!("cairn asked with a URL: {request:?}")
        };
        self.asked.lock().unwrap().push(message);
        let accept = self.answers.lock().unwrap().pop_front().expect("a question the test did not expect");
        Ok(if accept {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": "once"}))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("asking-client", "1.0"))
    }
}

#[tokio::test]
async fn a_client_that_takes_elicitations_approves_one_command_and_declines_the_next() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "touch accepted.txt"})))
            .turn(Turn::tool("bash", json!({"command": "touch declined.txt"})))
            .turn(Turn::text("One ran; the other was declined.")),
    )
    .await;
    let client = Asking { answers: Mutex::new(VecDeque::from([true, false])), asked: Mutex::default() };
    let server = sandbox.command(Api::Anthropic, &mock, &["mcp-serve"]);
    let running = client.serve(TokioChildProcess::new(server).unwrap()).await.unwrap();
    let arguments = json!({"prompt": "touch both files"}).as_object().cloned().unwrap();
    let result = running.call_tool(CallToolRequestParams::new("prompt").with_arguments(arguments)).await.unwrap();
    let asked = running.service().asked.lock().unwrap().clone();
    running.cancel().await.unwrap();

    // Each command was asked about in the client; only the accepted one ran.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].contains("touch accepted.txt") && asked[1].contains("touch declined.txt"), "{asked:?}");
    assert!(sandbox.exists("accepted.txt"), "the accepted command did not run");
    assert!(!sandbox.exists("declined.txt"), "the declined command ran");
    // The inner model was told who declined, where; the answer names the call and why.
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let told = &tool_results(&requests[2])[1].1;
    assert!(
        told.contains(
            "The user denied this `bash` call. Their reason: they declined cairn's question in asking-client"
        ),
        "{told}"
    );
    let answer: String = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(answer.starts_with("One ran; the other was declined."), "{answer}");
    assert!(answer.contains("[not run: bash $ touch declined.txt — The user denied this `bash` call"), "{answer}");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

#[tokio::test]
async fn an_untrusted_folder_that_would_run_something_is_refused_before_anything_starts() {
    let out_dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new();
    let canary = out_dir.path().join("session-start");
    sandbox
        .write(".cairn/settings.toml", &format!("[[hooks.SessionStart]]\ncommand = \"touch {}\"\n", canary.display()));
    let mock = MockLlm::start(Script::new()).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["mcp-serve"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("is not a trusted folder") && stderr.contains("SessionStart: touch"), "{stderr}");
    assert!(stderr.contains("--trust"), "{stderr}");
    assert!(!canary.exists(), "the hook ran");
    assert!(mock.requests().is_empty());
}
