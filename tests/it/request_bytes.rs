//! What reaches the provider, byte for byte: every request of sessions that use every part a
//! request is built from — the frozen memory block and session recall, instruction files (one
//! edited between two requests), a skill, the task list and the mode in the request's tail, a
//! subagent, a compaction by hand that reads the request in place, ask and plan mode, both
//! wires — against a snapshot, with the mock's cache figures for each request and the
//! `/context` figures at the end. Only the temporary folders and the date are replaced.
//!
//! A change to how requests are assembled must leave this snapshot as it is; a change meant to
//! alter what is sent shows here as a diff to read (`INSTA_UPDATE=always` writes the new one).

use serde_json::{Value, json};

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cache_check::per_request;
use crate::support::cairn::{Api, Sandbox, json_lines, json_result, text};
use crate::support::fake_llama::{self, TOKENIZE_LOG_ENV};
use crate::support::mock_llm::{MockCall, MockLlm, RecordedRequest, Reply, Script, Turn};

/// The run's temporary folders and today's date, as placeholders.
fn normalise(sandbox: &Sandbox, text: &str) -> String {
    let mut out = text.to_string();
    let project = sandbox.project.path();
    let home = sandbox.home.path();
    for (path, name) in [
        (sandbox.root(), "<project>"),
        (project.to_path_buf(), "<project>"),
        (home.canonicalize().unwrap(), "<home>"),
        (home.to_path_buf(), "<home>"),
    ] {
        out = out.replace(&path.display().to_string(), name);
    }
    out.replace(&chrono::Local::now().date_naive().format("%Y-%m-%d").to_string(), "<date>")
}

/// Each request in full, pretty-printed; a system prompt or tool list the same as an earlier
/// request's is named as such (compared byte for byte) instead of repeated.
fn dump(sandbox: &Sandbox, requests: &[RecordedRequest]) -> String {
    let mut out = String::new();
    // (key, the part as sent, the request it was first sent in)
    let mut seen: Vec<(&str, String, usize)> = Vec::new();
    for (i, req) in requests.iter().enumerate() {
        let mut body = req.body.clone();
        out.push_str(&format!("== request {} ({:?} {})\n", i + 1, req.wire, req.path));
        for key in ["system", "tools"] {
            let Some(part) = body.get(key) else { continue };
            let part = serde_json::to_string_pretty(part).unwrap();
            match seen.iter().find(|(k, p, _)| *k == key && *p == part) {
                Some((_, _, first)) => out.push_str(&format!("{key}: the same as request {first}'s\n")),
                None => {
                    out.push_str(&format!("{key}:\n{}\n", normalise(sandbox, &part)));
                    seen.push((key, part, i + 1));
                }
            }
            body.as_object_mut().unwrap().remove(key);
        }
        out.push_str(&format!("rest:\n{}\n", normalise(sandbox, &serde_json::to_string_pretty(&body).unwrap())));
    }
    out
}

/// A summary for a compaction call, a line for each stretch it names and one memory.
fn summaries() -> impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static {
    |req| {
        (AuxCall::of(req) == Some(AuxCall::Compaction)).then(|| {
            let trailing = trailing_sections(
                req,
                "Tidied src/lib.rs.",
                r#"{"memories": [{"type": "project", "title": "Lint", "content": "The project lints with make lint"}]}"#,
            );
            Reply::Turn(Turn::text(format!("## Goal\nTidy src/lib.rs.\n## Done — do not repeat\n- tidied it{trailing}")))
        })
    }
}

fn figures(lines: &[Value]) -> String {
    per_request(lines).iter().map(|(total, read)| format!("sent {total}, read from cache {read}\n")).collect()
}

#[tokio::test]
async fn every_request_reaches_the_provider_byte_for_byte_as_before() {
    let sandbox = Sandbox::new();
    sandbox.write("AGENTS.md", "Run `make lint` before finishing.\n");
    sandbox.write(
        ".cairn/skills/lint/SKILL.md",
        "---\nname: lint\ndescription: Run the linters the project's way\n---\nLINT-STEPS: make lint\n",
    );
    sandbox.write("src/lib.rs", "pub fn tidy_me() -> u32 {\n    1\n}\n");
    sandbox.write("src/main.rs", "fn main() { println!(\"{}\", tidy_me()); }\n");
    let items = |first: &str| {
        json!({"items": [
            {"id": "1", "text": "read src/lib.rs", "status": first},
            {"id": "2", "text": "tidy it", "status": "pending"},
        ]})
    };
    let script = Script::new()
        .simulate_cache()
        .responder(summaries())
        .turn(Turn::tool(
            "memory_save",
            json!({"type": "user", "title": "Indentation", "content": "The user wants tabs, never spaces."}),
        ))
        .turn(Turn::text("Noted."))
        .turn(Turn::tool("todo", items("in_progress")))
        .turn(Turn::tool("file_read", json!({"path": "src/lib.rs"})))
        .turn(Turn::tools(vec![MockCall::new(
            "task",
            json!({"description": "find users of tidy_me", "prompt": "List every call of tidy_me as path:line.", "agent_type": "explore"}),
        )]))
        .route(
            "find users of tidy_me",
            [
                Turn::tool("grep", json!({"pattern": "tidy_me"})).into(),
                Turn::text("REPORT: tidy_me is called in src/main.rs:1.").into(),
            ],
        )
        .turn(Turn::tools(vec![
            MockCall::new("bash", json!({"command": "echo 'Never touch generated/.' >> AGENTS.md"})),
            MockCall::new("todo", items("done")),
        ]))
        .turn(Turn::text("Tidied."))
        .turn(Turn::text("Nothing is left to do."));
    let mock = MockLlm::start(script).await;

    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "remember that I want tabs", "--trust", "--yes"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second =
        sandbox.run(Api::Anthropic, &mock, &["-p", "tidy src/lib.rs", "--yes", "--output-format", "stream-json"]).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    let second = json_lines(&second);
    let id = second.last().unwrap()["session_id"].as_str().unwrap().to_string();
    let compacted =
        sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "/compact", "--output-format", "json"]).await;
    assert!(compacted.status.success(), "{}", text(&compacted.stderr));
    assert_eq!(json_result(&compacted)["context"]["compactions"], 1);
    let asked = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &["--session", &id, "-p", "anything left?", "--mode", "ask", "--output-format", "stream-json"],
        )
        .await;
    assert!(asked.status.success(), "{}", text(&asked.stderr));
    let asked = json_lines(&asked);
    let context = sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "/context"]).await;
    assert!(context.status.success(), "{}", text(&context.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    let requests = mock.requests();
    assert_eq!(requests.len(), 11, "two, six (two of them the subagent's), the summary, one");
    let report = format!(
        "{}\n== cache figures of the second session\n{}\n== cache figures after the compaction\n{}\n== /context\n{}\n",
        dump(&sandbox, &requests),
        figures(&second),
        figures(&asked),
        normalise(&sandbox, &text(&context.stdout)),
    );
    insta::assert_snapshot!("anthropic_session", report);
}

#[tokio::test]
async fn a_plan_mode_session_reaches_an_openai_endpoint_byte_for_byte_as_before() {
    let sandbox = Sandbox::new();
    sandbox.write("AGENTS.md", "Answer in one line.\n");
    sandbox.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("file_read", json!({"path": "src/lib.rs"}))).turn(Turn::text("It returns 42.")),
    )
    .await;
    let out = sandbox
        .run(
            Api::OpenAi,
            &mock,
            &["-p", "what does answer return?", "--mode", "plan", "--trust", "--output-format", "stream-json"],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let report = format!("{}\n== cache figures\n{}", dump(&sandbox, &mock.requests()), figures(&json_lines(&out)));
    insta::assert_snapshot!("openai_plan_session", report);
}

/// On a llama-server, cairn counts what a request carries with the server's tokenizer before
/// the pre-flight: the texts it asks to count, the figures the session reports after each
/// request and `/context`'s exact parts are all read from the request being built.
#[tokio::test]
async fn what_a_local_server_is_asked_to_count_and_the_figures_it_gives_are_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let script = fake_llama::server_script(dir.path());
    let model = fake_llama::model(dir.path(), "tiny-coder.gguf", "weights");
    let sandbox = Sandbox::with_config(&format!(
        "[local]\nserver = \"{}\"\nctx = 8192\ntokenize_timeout_ms = 60000\n",
        script.display()
    ));
    sandbox.write("AGENTS.md", "Count words the way the server does.\n");
    let log = dir.path().join("tokenize.log");
    let model = model.display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["--local", model.as_str(), "--trust"];
        all.extend(args);
        let mut cmd = sandbox.bare_command(&all);
        cmd.env(TOKENIZE_LOG_ENV, &log);
        cmd
    };
    let first = run(&["-p", "please count these seven words exactly", "--output-format", "stream-json"])
        .output()
        .await
        .unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = run(&["-c", "-p", "and these four too", "--output-format", "stream-json"]).output().await.unwrap();
    assert!(second.status.success(), "{}", text(&second.stderr));
    let context = run(&["-c", "-p", "/context"]).output().await.unwrap();
    assert!(context.status.success(), "{}", text(&context.stderr));
    let status = |out: &std::process::Output| -> String {
        json_lines(out)
            .iter()
            .filter(|l| l["type"] == "context")
            .map(|l| format!("{}\n", json!({"usage": l["usage"], "context": l["context"]})))
            .collect()
    };
    let report = format!(
        "== texts per /tokenize request\n{}\n== figures after each request\n{}{}\n== /context\n{}\n",
        std::fs::read_to_string(&log).unwrap(),
        status(&first),
        status(&second),
        normalise(&sandbox, &text(&context.stdout)),
    );
    insta::assert_snapshot!("local_server_counts", report);
}

/// A compaction that lands while a request is prepared rebuilds the memory block for the
/// conversation as it is then: the request it lands before is built on the new head, not on
/// the one assembled before it landed.
#[tokio::test]
async fn a_request_prepared_while_a_compaction_lands_carries_the_memory_block_it_rebuilt() {
    let sandbox = Sandbox::with_config("[memory]\nmax_injected = 1\n");
    let memory = |title: &str, content: &str| {
        Turn::tool("memory_save", json!({"type": "user", "title": title, "content": content}))
    };
    let mut script = Script::new()
        .responder(|req| {
            (AuxCall::of(req) == Some(AuxCall::Compaction)).then(|| {
                let trailing = trailing_sections(req, "Read logs.", r#"{"memories": []}"#);
                Reply::Turn(Turn::text(format!(
                    "## Goal\nRead the beta logs.\n## Done — do not repeat\n- read some{trailing}"
                )))
            })
        })
        .turn(memory("Alpha format", "alpha files hold one record a line"))
        .turn(memory("Beta format", "beta logs hold one step a line"))
        .turn(Turn::text("Noted both."))
        .turn(Turn::text("Alpha files hold one record a line."));
    for i in 0..10 {
        let body: String = (0..300).map(|n| format!("beta step {i}-{n:03} status=ok\n")).collect();
        sandbox.write(&format!("logs/b{i}.log"), &body);
        script = script.turn(Turn::tool("file_read", json!({"path": format!("logs/b{i}.log")})));
    }
    let mock = MockLlm::start(script.turn(Turn::text("All beta steps are ok."))).await;
    let window = ["--context-window", "24000"];
    let saved = sandbox.run(Api::Anthropic, &mock, &["-p", "remember the two formats"]).await;
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    let mut args = vec!["-p", "explain the alpha format", "--output-format", "json"];
    args.extend(window);
    let first = sandbox.run(Api::Anthropic, &mock, &args).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let mut args = vec!["--session", &id, "-p", "now read every beta log", "--output-format", "json"];
    args.extend(window);
    let second = sandbox.run(Api::Anthropic, &mock, &args).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    let requests = mock.requests();
    let agent: Vec<&RecordedRequest> = requests.iter().filter(|r| AuxCall::of(r).is_none()).collect();
    let system = |r: &RecordedRequest| r.body["system"].to_string();
    let (alpha, beta) = ("- Alpha format: alpha files", "- Beta format: beta logs");
    assert!(system(agent[3]).contains(alpha) && !system(agent[3]).contains(beta), "frozen for the alpha question");
    let after: Vec<&&RecordedRequest> =
        agent.iter().filter(|r| r.body["messages"].to_string().contains("Read the beta logs.")).collect();
    assert!(!after.is_empty(), "a compaction landed before the last request ({} requests)", requests.len());
    for r in after {
        assert!(
            system(r).contains(beta) && !system(r).contains(alpha),
            "a request after the compaction carries the block it rebuilt: {}",
            system(r)
        );
    }
}
