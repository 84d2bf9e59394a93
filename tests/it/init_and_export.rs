//! What users of the peers expect (issue 24, item 10): `/init` writes the project's AGENTS.md
//! through the approval, and a session exports as a readable Markdown or HTML file — the real
//! binary against the mock model.

use std::time::Duration;

use serde_json::json;

use crate::support::cairn::{Api, KEY, Sandbox, json_result, text, user_texts};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn ready(screen: &Screen) {
    screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
}

/// `/init` sends the instructions with a survey of the project (its build and instruction
/// files, its layout), the transcript shows `/init`, and the model's AGENTS.md is written only
/// once the user approved the diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_surveys_the_project_and_writes_agents_md_through_the_approval() {
    let sandbox = Sandbox::new();
    sandbox.write("Cargo.toml", "[package]\nname = \"mean\"\nversion = \"0.1.0\"\n");
    sandbox.write("src/lib.rs", "pub fn mean(x: &[f64]) -> f64 { x.iter().sum::<f64>() / x.len() as f64 }\n");
    sandbox.write(".github/workflows/ci.yml", "on: push\njobs: {}\n");
    sandbox.write("CLAUDE.md", "Use 4 spaces.\n");
    let agents = "# AGENTS.md\n\n## Commands\n- `cargo test` runs every test\n";
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_write", json!({"path": "AGENTS.md", "content": agents})))
            .turn(Turn::text("Wrote AGENTS.md with the test command.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--trust"]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("/init");
        screen.send("\r");
        let dialog = screen.wait("the approval dialog", |s| s.contains("Allow file_write?"));
        assert!(dialog.contains("AGENTS.md") && dialog.contains("cargo test"), "the diff is shown:\n{dialog}");
        assert!(!sandbox.exists("AGENTS.md"), "nothing is written before the user approves");
        assert!(
            !dialog.contains("Write the project's AGENTS.md"),
            "the transcript shows /init, not the prompt:\n{dialog}"
        );
        std::thread::sleep(Duration::from_millis(800));
        screen.send("y");
        screen.wait("the turn to end", |s| s.contains("Wrote AGENTS.md with the test command."));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert_eq!(sandbox.read("AGENTS.md"), agents);
    let first = &mock.requests()[0];
    let prompt = user_texts(first).join("\n");
    assert!(prompt.starts_with("/init\n\nWrite the project's AGENTS.md"), "the instructions went out:\n{prompt}");
    assert!(prompt.contains("<project_survey>"), "{prompt}");
    assert!(prompt.contains("Instruction files: CLAUDE.md (14 B)"), "{prompt}");
    assert!(prompt.contains("Cargo.toml (") && prompt.contains(".github/workflows/ci.yml ("), "{prompt}");
    assert!(prompt.contains("src/ (1 file)"), "{prompt}");
    assert!(prompt.contains("AGENTS.md does not exist yet"), "{prompt}");
}

/// An AGENTS.md the user wrote is theirs: `/init` tells the model so and to edit it, and an
/// edit keeps what was there.
#[tokio::test]
async fn init_on_an_existing_agents_md_asks_for_an_edit_that_keeps_the_users_content() {
    let sandbox = Sandbox::new();
    sandbox.write("AGENTS.md", "# Our rules\n\nNever push to main.\n");
    sandbox.write("Makefile", "test:\n\tpython3 -m pytest\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "AGENTS.md"})))
            .turn(Turn::tool(
                "file_edit",
                json!({"path": "AGENTS.md", "old_string": "Never push to main.\n", "new_string": "Never push to main.\n\n## Commands\n- `make test`\n"}),
            ))
            .turn(Turn::text("Added the test command; your rules stay.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "/init", "--yes", "--trust", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "Added the test command; your rules stay.");
    let prompt = user_texts(&mock.requests()[0]).join("\n");
    assert!(prompt.contains("AGENTS.md exists: improve it with file_edit"), "{prompt}");
    assert!(prompt.contains("Makefile ("), "{prompt}");
    assert_eq!(sandbox.read("AGENTS.md"), "# Our rules\n\nNever push to main.\n\n## Commands\n- `make test`\n");
    let sessions = sandbox.run(Api::Anthropic, &mock, &["sessions", "--json"]).await;
    let sessions: serde_json::Value = serde_json::from_slice(&sessions.stdout).unwrap();
    assert_eq!(sessions[0]["title"], "/init", "the session is titled by the command, not its instructions");
}

/// A session with a key in a prompt, an edit and a command exports as Markdown and as HTML:
/// the conversation in order, calls folded, the diff coloured, the key redacted; the JSONL
/// export stays the default.
#[tokio::test]
async fn a_session_exports_as_markdown_and_html_with_its_key_redacted() {
    let sandbox = Sandbox::new();
    sandbox.write("mean.py", "def mean(x):\n    return sum(x) / len(x)\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "mean.py"})))
            .turn(Turn::tool(
                "file_edit",
                json!({"path": "mean.py", "old_string": "sum(x) / len(x)", "new_string": "sum(x) / max(len(x), 1)"}),
            ))
            .turn(Turn::tool("bash", json!({"command": "echo checked"})))
            .turn(Turn::text("Fixed: an empty list no longer divides by zero.")),
    )
    .await;
    let prompt = format!("fix mean for empty lists (my key is {KEY})");
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", &prompt, "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = json_result(&out)["session_id"].as_str().unwrap().to_string();

    let jsonl = sandbox.run(Api::Anthropic, &mock, &["export", &id]).await;
    let first: serde_json::Value = serde_json::from_str(text(&jsonl.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["role"], "system", "JSONL stays the default");

    let md = sandbox.run(Api::Anthropic, &mock, &["export", &id, "--format", "md"]).await;
    assert!(md.status.success(), "{}", text(&md.stderr));
    let md = text(&md.stdout);
    assert!(!md.contains(KEY), "the key is redacted:\n{md}");
    assert!(md.contains("fix mean for empty lists"), "{md}");
    assert!(md.contains("<details><summary>file_edit — mean.py"), "{md}");
    assert!(md.contains("+    return sum(x) / max(len(x), 1)"), "the diff is there:\n{md}");
    assert!(md.contains("<details><summary>bash — echo checked (exit 0"), "{md}");
    assert!(md.contains("Fixed: an empty list no longer divides by zero."));

    let file = sandbox.home.path().join("share/session.html");
    let html =
        sandbox.run(Api::Anthropic, &mock, &["export", &id, "--format", "html", "--out", file.to_str().unwrap()]).await;
    assert!(html.status.success(), "{}", text(&html.stderr));
    assert_eq!(text(&html.stdout).trim(), file.display().to_string(), "the path is printed");
    let page = std::fs::read_to_string(&file).unwrap();
    assert!(page.starts_with("<!doctype html>") && page.ends_with("</html>\n"));
    assert!(!page.contains(KEY) && !page.contains("<script") && !page.contains("src="), "{page}");
    assert_eq!(page.matches("<details class=\"call").count(), 3, "every call folded");
    assert!(page.contains("<span class=\"add\">+    return sum(x) / max(len(x), 1)</span>"), "{page}");

    let unknown = sandbox.run(Api::Anthropic, &mock, &["export", "zzzz", "--format", "html"]).await;
    assert_eq!(unknown.status.code(), Some(2), "an unknown session is bad input: {}", text(&unknown.stderr));
}

/// `/export` in the interface writes the file and says where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_export_writes_the_conversation_and_names_the_file() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("Hello there."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.type_text("say hello");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Hello there."));
        screen.type_text("/export md notes/chat.md");
        screen.send("\r");
        screen.wait("the notice", |s| s.contains("conversation exported:") && s.contains("chat.md"));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let md = sandbox.read("notes/chat.md");
    assert!(md.contains("## You") && md.contains("say hello") && md.contains("Hello there."), "{md}");
}
