//! What a new user meets in the first hour (issue 10): sessions that exist from their first
//! message, `--resume`/`-c` naming the session last used, cost at the catalog's prices,
//! `cairn usage`, `@path` attachments, `/model` checked against what is known, a prompt on the
//! command line, and `cairn export | head` ending quietly. The screen's parts are in
//! `first_day_screen.rs`.

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text, user_texts};
use crate::support::mock_llm::{MockLlm, MockUsage, Script, Turn};
use crate::support::pty::Screen;

fn sessions(sandbox: &Sandbox) -> Vec<(String, i64)> {
    let db = sandbox.database();
    let mut stmt = db
        .prepare(
            "SELECT s.id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s ORDER BY s.rowid",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Quit the interface with /quit and return what it printed after leaving the screen.
fn quit(screen: &mut Screen) -> String {
    screen.type_text("/quit");
    screen.send("\r");
    assert!(screen.wait_exit().success());
    std::thread::sleep(std::time::Duration::from_millis(200));
    screen.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launching_and_quitting_stores_no_session_and_resume_continues_the_last_one_used() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("first answer")).turn(Turn::text("second answer"))).await;
    let older =
        json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "older talk", "--output-format", "json"]).await);
    let newer =
        json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "newer talk", "--output-format", "json"]).await);
    let (older, newer) = (older["session_id"].as_str().unwrap().to_string(), newer["session_id"].as_str().unwrap());
    assert_eq!(sessions(&sandbox).len(), 2);

    // Opened and left without a word: nothing is stored, and nothing is offered to resume.
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    let left = tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
        quit(&mut screen)
    });
    assert!(!left.contains("continue it with"), "nothing to continue:\n{left}");
    assert_eq!(sessions(&sandbox).len(), 2, "no empty session was stored");

    // -c (the alias of --resume) opens the last conversation, not an empty one.
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["-c"]));
    let left = tokio::task::block_in_place(|| {
        screen.wait("the newer session", |s| s.contains("resumed session") && s.contains("newer talk"));
        // Switching to the older one makes it the one the user was last in.
        screen.type_text(&format!("/resume {older}"));
        screen.send("\r");
        screen.wait("the older session", |s| s.contains("older talk") && !s.contains("newer talk"));
        quit(&mut screen)
    });
    assert!(left.contains(&format!("session {older} saved; continue it with")), "{left}");
    assert!(!left.contains(newer), "{left}");
    let resumed =
        json_result(&sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "again", "--output-format", "json"]).await);
    assert_eq!(resumed["session_id"], older.as_str(), "--resume continues the session last opened");
    assert!(sessions(&sandbox).iter().all(|(_, messages)| *messages > 0), "{:?}", sessions(&sandbox));
}

#[tokio::test]
async fn headless_cost_matches_the_catalog_prices_of_the_reported_usage() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "alpha\n");
    let first = MockUsage {
        input_tokens: 120_000,
        output_tokens: 2_000,
        cache_read_input_tokens: 300_000,
        cache_creation_input_tokens: 40_000,
    };
    let second = MockUsage {
        input_tokens: 1_500,
        output_tokens: 700,
        cache_read_input_tokens: 460_000,
        cache_creation_input_tokens: 0,
    };
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})).with_usage(first))
            .turn(Turn::text("It says alpha.").with_usage(second)),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "read a.txt", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["model"], "claude-sonnet-4-5");
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache reads, $3.75 five-minute cache writes
    // per million tokens.
    let price = |u: MockUsage| {
        (u.input_tokens as f64 * 3.0
            + u.output_tokens as f64 * 15.0
            + u.cache_read_input_tokens as f64 * 0.30
            + u.cache_creation_input_tokens as f64 * 3.75)
            / 1e6
    };
    let expected = price(first) + price(second);
    let cost = result["cost_usd"].as_f64().expect("a number for a catalog model");
    assert!((cost - expected).abs() < 0.005, "cost_usd {cost} against {expected}");
    assert_eq!(format!("{cost:.2}"), format!("{expected:.2}"), "to the cent");

    // A model without a price reports null, never a made-up zero.
    let local = MockLlm::start(Script::new().turn(Turn::text("hi"))).await;
    let out = sandbox
        .bare_command(&["-p", "hi", "--model", "qwen2.5-coder:7b", "--output-format", "json"])
        .env("OPENAI_BASE_URL", local.openai_base_url())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(json_result(&out)["cost_usd"].is_null(), "{}", text(&out.stdout));

    // `cairn usage --json` lists the day's sessions with the same money.
    let usage = sandbox.bare_command(&["usage", "--json"]).output().await.unwrap();
    assert!(usage.status.success(), "{}", text(&usage.stderr));
    let report: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    let today = &report["days"][0];
    let listed: Vec<&str> = today["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), 2, "{report}");
    assert!(listed.contains(&result["session_id"].as_str().unwrap()));
    assert!((today["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-6, "{report}");
    assert_eq!(today["projects"][0]["root"], sandbox.root().display().to_string());
    let plain = sandbox.bare_command(&["usage"]).output().await.unwrap();
    assert!(text(&plain.stdout).contains(&format!("${expected:.2}")), "{}", text(&plain.stdout));
}

#[tokio::test]
async fn an_at_path_attaches_the_file_so_an_edit_can_follow_at_once() {
    let sandbox = Sandbox::new();
    sandbox.write("src/cart.rs", "fn total() -> u32 {\n    1\n}\n");
    sandbox.write("docs/a.md", "a\n");
    sandbox.write("docs/b.md", "b\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool(
                "file_edit",
                json!({"path": "src/cart.rs", "old_string": "    1\n", "new_string": "    2\n"}),
            ))
            .turn(Turn::text("Changed.")),
    )
    .await;
    let out = sandbox
        .run(
            Api::Anthropic,
            &mock,
            &[
                "-p",
                "make @src/cart.rs return 2; the docs are in @docs/, not @missing.rs",
                "--yes",
                "--output-format",
                "stream-json",
            ],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = &mock.requests()[0];
    let texts = user_texts(first);
    assert_eq!(texts[0], "make @src/cart.rs return 2; the docs are in @docs/, not @missing.rs");
    assert!(texts[1].contains("src/cart.rs") && texts[1].contains("     1\tfn total() -> u32 {"), "{texts:?}");
    assert!(texts[2].contains("docs/a.md") && texts[2].contains("docs/b.md"), "the folder is listed: {texts:?}");
    assert_eq!(texts.len(), 3, "a mention of nothing attaches nothing");
    assert_eq!(sandbox.read("src/cart.rs"), "fn total() -> u32 {\n    2\n}\n", "edited without a file_read first");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let attached = crate::support::cairn::json_lines(&out).into_iter().find(|l| l["type"] == "attached").unwrap();
    assert_eq!(attached["items"][0]["path"], "src/cart.rs");
    assert_eq!(attached["items"][1]["path"], "docs/");
}

#[tokio::test]
async fn model_names_are_checked_and_the_list_says_what_there_is() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().models(&["mock-model", "claude-haiku-4-5"])).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "/model claude-sonet-4-5"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(said.contains("no model \"claude-sonet-4-5\"") && said.contains("mock-model"), "{said}");
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "/model mock-model"]).await;
    assert!(out.status.success(), "the provider lists it: {}", text(&out.stderr));
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "/model"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let haiku = list["models"].as_array().unwrap().iter().find(|m| m["name"] == "claude-haiku-4-5").unwrap();
    assert_eq!((haiku["listed"].as_bool(), haiku["window"].as_u64()), (Some(true), Some(200_000)));
    assert_eq!(haiku["prices"]["input"], 1.0);
}

#[tokio::test]
async fn export_into_a_closed_pipe_ends_quietly() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("many words ".repeat(20_000)))).await;
    let out = json_result(&sandbox.run(Api::Anthropic, &mock, &["-p", "talk", "--output-format", "json"]).await);
    let id = out["session_id"].as_str().unwrap();
    let cairn = env!("CARGO_BIN_EXE_cairn");
    let piped = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{cairn}' export {id} | head -c 10 >/dev/null"))
        .env("CAIRN_HOME", sandbox.home.path())
        .current_dir(sandbox.project.path())
        .output()
        .await
        .unwrap();
    assert_eq!(text(&piped.stderr), "", "no broken-pipe error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_on_the_command_line_opens_the_interface_with_it_sent() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("The test is fixed."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["fix the test"]));
    tokio::task::block_in_place(|| {
        let shown = screen.wait("the answer", |s| s.contains("The test is fixed."));
        assert!(shown.contains("› fix the test"), "{shown}");
        quit(&mut screen);
    });
    assert_eq!(user_texts(&mock.requests()[0]), ["fix the test"]);
    let typo = sandbox.bare_command(&["sesions"]).output().await.unwrap();
    assert_eq!(typo.status.code(), Some(2));
    assert!(text(&typo.stderr).contains("cairn sessions"), "{}", text(&typo.stderr));
}
