//! Custom slash commands, skills, hooks and web_fetch end to end: the real binary against the
//! mock model, with the user's files in the project (Claude Code's and Kontekst's layouts),
//! hooks as real shell commands, and a real HTTP server on loopback for web_fetch.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_lines, text, tool_names, tool_results, user_texts};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn results(out: &std::process::Output) -> Vec<Value> {
    json_lines(out).into_iter().filter(|l| l["type"] == "tool_result").collect()
}

fn notices(out: &std::process::Output) -> Vec<String> {
    json_lines(out)
        .into_iter()
        .filter(|l| l["type"] == "notice")
        .map(|l| l["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn system_text(req: &crate::support::mock_llm::RecordedRequest) -> String {
    req.body["system"].to_string()
}

#[tokio::test]
async fn a_claude_command_file_runs_as_slash_fix_with_its_arguments() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".claude/commands/fix.md",
        "---\ndescription: Fix an issue by number\nargument-hint: [issue] [area]\n---\nFix issue #$ARGUMENTS now.\nThe issue is $1, the area is \"$2\".\n",
    );
    let mock = MockLlm::start(Script::new().turn(Turn::text("fixed"))).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "/fix 42 \"the parser\"", "--trust", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = user_texts(&mock.requests()[0]).join("\n");
    assert!(sent.contains("Fix issue #42 \"the parser\" now."), "{sent}");
    assert!(sent.contains("The issue is 42, the area is \"the parser\"."), "quote-aware $1 $2: {sent}");

    // Listed by /help (and so by completion, which reads the same list).
    let help = sandbox.run(Api::Anthropic, &mock, &["-p", "/help"]).await;
    assert!(help.status.success(), "{}", text(&help.stderr));
    assert!(text(&help.stdout).contains("/fix [issue] [area]  Fix an issue by number"), "{}", text(&help.stdout));
    // An unknown command is an error that says where to look, and nothing is sent.
    let unknown = sandbox.run(Api::Anthropic, &mock, &["-p", "/fxi 1"]).await;
    assert!(!unknown.status.success());
    assert!(text(&unknown.stderr).contains("unknown command /fxi"), "{}", text(&unknown.stderr));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn skills_are_listed_by_description_and_loaded_only_when_called() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".claude/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release of this project\n---\nRELEASE-STEPS: bump the version, then read checklist.md.\n",
    );
    sandbox.write(".claude/skills/release/checklist.md", "CHECKLIST-ITEM: tag it\n");
    sandbox.write(
        ".cairn/skills/lint/SKILL.md",
        "+++\nname = \"lint\"\ndescription = \"Run the linters the Kontekst way\"\n+++\nLINT-STEPS: cargo clippy\n",
    );
    let checklist = sandbox.root().join(".claude/skills/release/checklist.md");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("skill", json!({"name": "release"})))
            .turn(Turn::tool("file_read", json!({"path": checklist.to_str().unwrap()})))
            .turn(Turn::text("released")),
    )
    .await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "make a release", "--trust", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    let system = system_text(&requests[0]);
    assert!(system.contains("Cut a release of this project") && system.contains("Run the linters the Kontekst way"));
    assert!(!system.contains("RELEASE-STEPS") && !system.contains("LINT-STEPS"), "bodies load on demand: {system}");
    assert!(tool_names(&requests[0]).contains(&"skill".to_string()));
    let loaded = &tool_results(&requests[1])[0].1;
    assert!(loaded.contains("RELEASE-STEPS") && loaded.contains("checklist.md"), "{loaded}");
    let read = &tool_results(&requests[2])[1];
    assert!(!read.2 && read.1.contains("CHECKLIST-ITEM"), "a skill's files are readable: {read:?}");
}

const DENY_RM: &str = r#"
[[hooks.PreToolUse]]
matcher = "bash(rm *)"
command = "cat > /dev/null; echo '{\"decision\": \"deny\", \"reason\": \"no deleting in this repo\"}'"
"#;

#[tokio::test]
async fn a_pre_tool_use_hook_denies_rm_with_its_reason_headless() {
    let sandbox = Sandbox::with_config(DENY_RM);
    sandbox.write("keep.txt", "precious\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                MockCall::new("bash", json!({"command": "rm -f keep.txt"})),
                MockCall::new("bash", json!({"command": "echo untouched"})),
            ]))
            .turn(Turn::text("ok")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "clean up", "--yes", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = results(&out);
    assert_eq!(results[0]["is_error"], true, "{results:#?}");
    assert!(results[0]["content"].as_str().unwrap().contains("no deleting in this repo"), "{results:#?}");
    assert!(results[1]["content"].as_str().unwrap().contains("untouched"), "the matcher left echo alone");
    assert!(sandbox.exists("keep.txt"), "--yes did not override the hook");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_hook_denies_rm_with_its_reason_in_the_tui() {
    let sandbox = Sandbox::with_config(DENY_RM);
    sandbox.write("keep.txt", "precious\n");
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("bash", json!({"command": "rm -f keep.txt"}))).turn(Turn::text("Left it.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("clean up");
        screen.send("\r");
        let done = screen.wait("the turn to end", |s| s.contains("Left it."));
        // Said once, on the call's own lines, which name the hook.
        assert_eq!(done.matches("no deleting in this repo").count(), 1, "{done}");
        assert!(done.contains("↳ denied by PreToolUse hook `cat > /dev/null;"), "{done}");
        assert!(!done.contains("Allow bash?"), "a denied call never asks: {done}");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert!(sandbox.exists("keep.txt"));
}

#[tokio::test]
async fn user_prompt_submit_context_reaches_the_request_and_a_hanging_hook_is_killed() {
    let sandbox = Sandbox::with_config(
        r#"
[[hooks.UserPromptSubmit]]
command = "cat > /dev/null; echo '{\"additional_context\": \"TICKET-123 is the current ticket\"}'"

[[hooks.UserPromptSubmit]]
command = "sleep 41.5"
timeout_ms = 300
"#,
    );
    let mock = MockLlm::start(Script::new().turn(Turn::text("noted"))).await;
    let started = Instant::now();
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "what now?", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    let sent = user_texts(&mock.requests()[0]).join("\n");
    assert!(sent.contains("what now?") && sent.contains("TICKET-123 is the current ticket"), "{sent}");
    let said = notices(&out);
    assert!(said.iter().any(|n| n.contains("sleep 41.5") && n.contains("300 ms")), "{said:?}");
    let alive = std::process::Command::new("pgrep").args(["-f", "sleep 41.5"]).output().unwrap();
    assert!(!alive.status.success(), "the hook's process outlived its timeout");
}

/// A web server on loopback: `/page` is a small HTML page, `/big` a long one.
async fn web_server() -> std::net::SocketAddr {
    let page = "<html><head><title>T</title><script>var x = 1;</script></head><body><h1>Release notes</h1><p>Now with <b>bold</b> claims and <a href=\"https://example.com/docs\">docs</a>.</p></body></html>";
    let big: String =
        (0..8_000).map(|i| format!("<p>Paragraph {i} of a very long page about nothing much.</p>")).collect();
    let big = format!("<html><body>{big}</body></html>");
    let app = axum::Router::new()
        .route("/page", axum::routing::get(move || async move { axum::response::Html(page) }))
        .route("/big", axum::routing::get(move || async move { axum::response::Html(big) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

#[tokio::test]
async fn web_fetch_returns_markdown_and_spills_past_the_cap() {
    let addr = web_server().await;
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("web_fetch", json!({"url": format!("http://{addr}/page")})))
            .turn(Turn::tool("web_fetch", json!({"url": format!("http://{addr}/big")})))
            .turn(Turn::text("read")),
    )
    .await;
    let allow = "web_fetch(127.0.0.1)";
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "read the notes", "--allow", allow, "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    let page = &tool_results(&requests[1])[0].1;
    assert!(page.contains("# Release notes"), "{page}");
    assert!(page.contains("**bold**") && page.contains("[docs](https://example.com/docs)"), "{page}");
    assert!(!page.contains("var x"), "scripts are dropped: {page}");
    let big = &tool_results(&requests[2])[1].1;
    assert!(big.len() <= 52_000, "{} bytes sent", big.len());
    assert!(big.contains("Paragraph 0 of"), "{}", &big[..300]);
    let saved: Vec<_> =
        sandbox.home_files().into_iter().filter(|p| p.components().any(|c| c.as_os_str() == "truncations")).collect();
    let whole = saved.iter().map(|p| std::fs::read_to_string(p).unwrap()).find(|t| t.contains("Paragraph 7999 of"));
    assert!(whole.is_some(), "the whole page is on disk: {saved:?}");
}

#[tokio::test]
async fn a_command_includes_files_and_the_output_of_the_commands_its_allowed_tools_allow() {
    let sandbox = Sandbox::new();
    sandbox.write("notes.txt", "NOTES-CONTENT: ship on friday\n");
    sandbox.write(
        ".cairn/commands/status.md",
        "---\ndescription: Status report\nallowed-tools: Bash(echo:*)\n---\nBranch state: !`echo SHELL-SAID-$((40+2))`\nUnapproved: !`touch made.txt`\nRead @notes.txt and report on $ARGUMENTS.\n",
    );
    let mock = MockLlm::start(Script::new().turn(Turn::text("reported"))).await;
    // Headless without --yes: the allowed `echo` runs, the `touch` is not approved.
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "/status the release", "--trust", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = user_texts(&mock.requests()[0]).join("\n");
    // What the command printed, and nothing about how it ended when it went well.
    assert!(sent.contains("Branch state: SHELL-SAID-42\nUnapproved:"), "{sent}");
    assert!(!sent.contains("[exit code"), "{sent}");
    assert!(sent.contains("Unapproved: [not run:"), "{sent}");
    assert!(!sandbox.exists("made.txt"));
    assert!(sent.contains("report on the release") && sent.contains("NOTES-CONTENT: ship on friday"), "{sent}");
}

#[tokio::test]
async fn a_pre_tool_use_hook_rewrites_the_arguments_and_a_post_tool_use_hook_adds_to_the_result() {
    let sandbox = Sandbox::with_config(
        r#"
[[hooks.PreToolUse]]
matcher = "bash"
command = "cat > /dev/null; echo '{\"updated_input\": {\"command\": \"echo rewritten by the hook\"}}'"

[[hooks.PostToolUse]]
matcher = "bash"
command = "cat > /dev/null; echo '{\"additional_context\": \"POST-HOOK-NOTE\"}'"
"#,
    );
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("bash", json!({"command": "echo original"}))).turn(Turn::text("ok")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "run it", "--yes", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = &tool_results(&mock.requests()[1])[0].1;
    assert!(sent.contains("rewritten by the hook") && !sent.contains("original"), "{sent}");
    assert!(sent.contains("POST-HOOK-NOTE"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_on_a_custom_command_leaves_a_space_before_its_arguments() {
    let sandbox = Sandbox::new();
    sandbox.write(".claude/commands/fix.md", "Fix the failing test $ARGUMENTS.\n");
    let mock = MockLlm::start(Script::new().turn(Turn::text("fixed it"))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--trust"]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("/fi");
        screen.wait("the command suggested", |s| s.contains("/fix"));
        screen.send("\t");
        screen.type_text("test_mean");
        screen.wait("the completed command", |s| s.contains("/fix test_mean"));
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("fixed it"));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let sent = user_texts(&mock.requests()[0]).join("\n");
    assert!(sent.contains("Fix the failing test test_mean."), "{sent}");
}
