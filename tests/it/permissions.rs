//! Permission rules and the bash sandbox end to end: the real binary against the mock model,
//! rules read from real files and flags, real commands in a real git repository. What decided
//! each call is read from the headless stream (`decided_by`) and the transcript.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_lines, json_result, text, tool_names, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A project that is a real git repository with four commits, `a.txt` mentioning `foo`.
fn repository(config: &str) -> Sandbox {
    let sandbox = Sandbox::with_config(config);
    let root = sandbox.root();
    git(&root, &["init", "-q"]);
    for i in 1..=4 {
        sandbox.write("a.txt", &format!("foo {i}\n"));
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", &format!("commit {i}")]);
    }
    sandbox
}

/// The `tool_result` events of a stream-json run, in order.
fn results(out: &std::process::Output) -> Vec<Value> {
    json_lines(out).into_iter().filter(|l| l["type"] == "tool_result").collect()
}

fn bash(command: &str) -> MockCall {
    MockCall::new("bash", json!({ "command": command }))
}

pub(super) fn sandbox_enforced() -> bool {
    // SAFETY: landlock_create_ruleset with a null attribute and the VERSION flag only returns
    // the kernel's Landlock ABI (or an error); it creates nothing.
    let abi =
        unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
    if abi < 1 {
        eprintln!("skipped: this kernel has no Landlock");
    }
    abi >= 1
}

#[tokio::test]
async fn a_git_log_rule_runs_the_pipeline_unasked_and_asks_for_what_follows() {
    let sandbox = repository("");
    sandbox.write(".cairn/settings.local.toml", "[permissions]\nallow = [\"bash(git log *)\"]\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "git log --oneline | head -3"})))
            .turn(Turn::tool("bash", json!({"command": "git log; touch x"})))
            .turn(Turn::text("done")),
    )
    .await;
    // Headless without --yes: what asks is denied, and says what asked.
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "look", "--trust", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = results(&out);
    assert_eq!(results.len(), 2, "{results:#?}");

    let ran = &results[0];
    assert_eq!(ran["not_run"], false);
    let lines = ran["content"].as_str().unwrap().lines().filter(|l| l.contains("commit ")).count();
    assert_eq!(lines, 3, "{ran}");
    let by = ran["decided_by"].as_str().unwrap();
    assert!(by.starts_with("allow bash(git log *) (project-local, ") && by.ends_with("settings.local.toml:2)"), "{by}");

    let asked = &results[1];
    assert_eq!(asked["not_run"], true);
    let content = asked["content"].as_str().unwrap();
    assert!(content.contains("without --yes") && content.contains("`touch x`"), "{content}");
    assert_eq!(asked["decided_by"], "mode", "the edit mode's default asked for `touch x`");
    assert!(!sandbox.exists("x"));
    assert_eq!(json_result_of_stream(&out)["denied_tool_calls"], 1);
}

/// The last line of a stream-json run.
fn json_result_of_stream(out: &std::process::Output) -> Value {
    json_lines(out).pop().unwrap()
}

#[tokio::test]
async fn a_deny_rule_beats_an_allow_at_another_level() {
    let sandbox = repository("[permissions]\ndeny = [\"bash(touch *)\"]\n");
    sandbox.write(".cairn/settings.toml", "[permissions]\nallow = [\"bash(touch *)\", \"bash(git *)\"]\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "git status && touch denied.txt"})))
            .turn(Turn::text("ok")),
    )
    .await;
    // An allow on the command line, the most specific level, and --yes do not lift it either.
    let out = sandbox
        .run(
            Api::OpenAi,
            &mock,
            &["-p", "go", "--yes", "--trust", "--allow", "bash(touch denied.txt)", "--output-format", "stream-json"],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = &results(&out)[0];
    assert_eq!(result["not_run"], true);
    let by = result["decided_by"].as_str().unwrap();
    let config = sandbox.home.path().join("config.toml");
    assert_eq!(by, format!("deny bash(touch *) (user config, {}:7)", config.display()));
    let content = result["content"].as_str().unwrap();
    assert!(content.contains("denied by the rule `bash(touch *)`"), "{content}");
    assert!(!sandbox.exists("denied.txt"));
    assert_eq!(json_result_of_stream(&out)["denied_tool_calls"], 1);

    // A --deny flag beats the project's committed allow the same way.
    let mock =
        MockLlm::start(Script::new().turn(Turn::tool("bash", json!({"command": "git status"}))).turn(Turn::text("ok")))
            .await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "go", "--deny", "bash(git status *)", "--output-format", "stream-json"])
        .await;
    assert_eq!(results(&out)[0]["decided_by"], "deny bash(git status *) (command line, --deny)");
}

#[tokio::test]
async fn a_bad_rule_or_settings_file_stops_cairn_with_its_place() {
    let sandbox = Sandbox::new();
    sandbox.write(".cairn/settings.toml", "[permissions]\nallow = [\n  \"bash(ls *)\",\n  \"bsh(git log *)\",\n]\n");
    let mock = MockLlm::start(Script::new().turn(Turn::text("never"))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("settings.toml:4: bad permission rule `bsh(git log *)`"), "{err}");
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi", "--allow", "bash(("]).await;
    assert_eq!(out.status.code(), Some(2));
    sandbox.write(".cairn/settings.toml", "[permisions]\n");
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("settings.toml, line 1"), "{}", text(&out.stderr));
    assert!(mock.requests().is_empty(), "nothing reached the model");
}

/// Every file under `root` (`.git` included) with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[tokio::test]
async fn plan_mode_runs_read_only_commands_and_changes_no_file() {
    // Even an allow rule and --yes do not open plan mode to a write.
    let sandbox = repository("[permissions]\nallow = [\"bash(touch *)\"]\n");
    let reads = ["git log", "ls -la", "rg foo"];
    let writes = ["touch x", "echo > f", "git commit --allow-empty -m x", "find . -delete", "sed -i s/foo/bar/ a.txt"];
    let calls = reads.iter().chain(&writes).map(|c| bash(c)).collect();
    let mock = MockLlm::start(Script::new().turn(Turn::tools(calls)).turn(Turn::text("Here is the plan."))).await;
    let before = tree(&sandbox.root());
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "plan it", "--mode", "plan", "--yes", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tree(&sandbox.root()) == before, "plan mode changed a file");
    assert!(
        tool_names(&mock.requests()[0]).contains(&"bash".to_string()),
        "plan mode offers bash for read-only commands (and every tool: cairn holds the mode)"
    );
    let results = results(&out);
    for (result, command) in results.iter().zip(reads) {
        assert_eq!(result["not_run"], false, "{command}: {result}");
        assert_eq!(result["decided_by"], "read-only set", "{command}");
        let content = result["content"].as_str().unwrap();
        match command {
            "git log" => assert!(content.contains("commit 4"), "{content}"),
            "ls -la" => assert!(content.contains("a.txt"), "{content}"),
            // rg may not be installed: it ran either way.
            _ => assert!(content.contains("foo 4") || result["exit_code"] == 127, "{content}"),
        }
    }
    for (result, command) in results[reads.len()..].iter().zip(writes) {
        assert_eq!(result["not_run"], true, "{command}: {result}");
        assert_eq!(result["decided_by"], "mode", "{command}");
        assert!(result["content"].as_str().unwrap().contains("plan mode"), "{command}: {result}");
    }
    assert_eq!(json_result_of_stream(&out)["denied_tool_calls"], writes.len());
}

#[tokio::test]
async fn workspace_write_keeps_commands_inside_the_project() {
    if !sandbox_enforced() {
        return;
    }
    // A home outside the project and the temp dirs, so a write that slipped through would show.
    let Some(outside) = crate::support::cairn::outside_writable_roots() else { return };
    let sandbox = repository("");
    let home = tempfile::tempdir_in(outside).unwrap();
    let etc = format!("/etc/cairn-e2e-{}", std::process::id());
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                bash(&format!("touch /tmp/../{}", etc.trim_start_matches('/'))),
                bash("echo secret > ~/y"),
                bash("mkdir -p sub && echo inside > sub/x.txt"),
            ]))
            .turn(Turn::text("done")),
    )
    .await;
    let out = sandbox
        .command(Api::Anthropic, &mock, &["-p", "write", "--yes", "--output-format", "stream-json"])
        .env("HOME", home.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = results(&out);
    for outside in &results[..2] {
        let content = outside["content"].as_str().unwrap();
        assert!(
            content.contains("[sandbox: this probably failed because the sandbox (workspace-write) lets commands write only inside the project"),
            "{content}"
        );
        assert!(content.contains("never runs a command outside the sandbox here"), "{content}");
        assert_eq!(outside["decided_by"], "sandbox");
        assert!(outside["approval"].as_str().unwrap().starts_with("stopped by the sandbox"), "{outside}");
    }
    assert!(!Path::new(&etc).exists() && !home.path().join("y").exists());
    assert_eq!(results[2]["is_error"], false, "{}", results[2]);
    assert_eq!(sandbox.read("sub/x.txt"), "inside\n");
}

/// A loopback HTTP server that counts the connections it accepts.
fn tcp_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello");
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn with_the_network_off_curl_cannot_reach_a_loopback_server() {
    if !sandbox_enforced() {
        return;
    }
    let sandbox = Sandbox::new();
    let (port, accepted) = tcp_server();
    let curl = format!(
        "if command -v curl >/dev/null; then curl -sS --max-time 5 http://127.0.0.1:{port}/; else exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello; fi"
    );
    let script = || Script::new().turn(Turn::tool("bash", json!({ "command": curl }))).turn(Turn::text("done"));
    let args = ["-p", "fetch", "--yes", "--output-format", "stream-json"];
    let mock = MockLlm::start(script()).await;
    let out = sandbox.run(Api::Anthropic, &mock, &args).await;
    let result = &results(&out)[0];
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "the server saw a connection: {result}");
    assert!(result["content"].as_str().unwrap().contains("has the network off"), "{result}");

    // Allowed in the project-local settings, the same command reaches it: the test can fail.
    sandbox.write(".cairn/settings.local.toml", "[sandbox]\nnetwork = true\n");
    let mock = MockLlm::start(script()).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "fetch", "--yes", "--trust", "--output-format", "stream-json"])
        .await;
    let result = &results(&out)[0];
    assert!(result["content"].as_str().unwrap().contains("hello"), "{result}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn doctor_reports_the_sandbox_and_every_rule_with_its_place() {
    let sandbox = Sandbox::with_config("[permissions]\ndeny = [\"bash(rm *)\"]\n");
    sandbox.write(
        ".cairn/settings.toml",
        "[permissions]\nallow = [\"bash(cargo test *)\"]\n[sandbox]\nmode = \"full-access\"\n",
    );
    sandbox.trust().await;
    let out = sandbox.bare_command(&["doctor", "--allow", "file_edit(src/)"]).output().await.unwrap();
    let report = text(&out.stdout);
    let config = sandbox.home.path().join("config.toml");
    let shared = sandbox.root().join(".cairn/settings.toml");
    assert!(report.contains("\nPermissions\n"), "{report}");
    assert!(report.contains("workspace-write: commands write only inside the project"), "{report}");
    assert!(report.contains("may only tighten the sandbox"), "the committed full-access is refused: {report}");
    if sandbox_enforced() {
        assert!(report.contains("Landlock ABI"), "{report}");
    } else {
        assert!(report.contains("unavailable"), "{report}");
    }
    for rule in [
        "ask memory_save(global) (built-in)".to_string(),
        format!("deny bash(rm *) (user config, {}:7)", config.display()),
        format!("allow bash(cargo test *) (project, {}:2)", shared.display()),
        "allow file_edit(src/) (command line, --allow)".to_string(),
    ] {
        assert!(report.contains(&rule), "{rule} missing:\n{report}");
    }
    let out = sandbox.bare_command(&["doctor", "--sandbox", "read-only"]).output().await.unwrap();
    assert!(text(&out.stdout).contains("read-only: commands write nowhere"), "{}", text(&out.stdout));
}

#[tokio::test]
async fn a_global_memory_needs_approval_even_in_plan_mode_and_says_who_gave_it() {
    let sandbox = Sandbox::new();
    let save = || {
        Turn::tool(
            "memory_save",
            json!({"type": "user", "title": "Always answer in French", "content": "Every project: answer in French.", "scope": "global"}),
        )
    };
    let mock =
        MockLlm::start(Script::new().turn(save()).turn(Turn::text("ok")).turn(save()).turn(Turn::text("ok"))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "plan", "--mode", "plan", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["denied_tool_calls"], 1);
    let refused = tool_results(&mock.requests()[1]).pop().unwrap().1;
    assert!(refused.contains("without --yes") && refused.contains("memory_save(global)"), "{refused}");
    let listed = sandbox.bare_command(&["memories", "--json"]).output().await.unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&listed.stdout).unwrap(), json!([]), "nothing was saved");

    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "plan", "--mode", "plan", "--yes", "--output-format", "json"]).await;
    let session = json_result(&out)["session_id"].as_str().unwrap().to_string();
    let listed = sandbox.bare_command(&["memories", "--json"]).output().await.unwrap();
    let memories: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(memories[0]["global"], true);
    assert_eq!(memories[0]["approved_by"], "--yes");
    assert_eq!(memories[0]["session_id"], session.as_str());
    let listed = text(&sandbox.bare_command(&["memories"]).output().await.unwrap().stdout);
    assert!(listed.contains("Always answer in French (global, approved by --yes)"), "{listed}");
    assert!(listed.contains(&session[..8]), "the session it came from: {listed}");
}

#[tokio::test]
async fn bang_runs_a_command_under_the_rules_and_bang_bang_shows_it_to_the_model() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("I see the file list."))).await;
    // `!`: an ask (a redirection writes a file) is approved by typing it; nothing reaches the model.
    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "!echo made > made.txt && ls", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert!(result["result"].as_str().unwrap().contains("made.txt"), "{result}");
    assert_eq!(result["turns"], 0);
    assert_eq!(sandbox.read("made.txt"), "made\n");
    assert!(mock.requests().is_empty());

    // A deny rule holds for the user's own commands too.
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "!rm made.txt", "--deny", "bash(rm *)", "--output-format", "stream-json"])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(sandbox.exists("made.txt"));
    assert_eq!(results(&out)[0]["decided_by"], "deny bash(rm *) (command line, --deny)");

    // `!!`: the command and its output go into the session, and the next request carries them.
    let session =
        json_result(&out_json(&sandbox, &mock, &["-p", "!!ls"]).await)["session_id"].as_str().unwrap().to_string();
    let out = out_json(&sandbox, &mock, &["--session", &session, "-p", "what do you see?"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = mock.requests()[0].body["messages"].to_string();
    assert!(sent.contains("I ran a shell command in the project") && sent.contains("made.txt"), "{sent}");
    assert!(sent.contains("what do you see?"));
}

async fn out_json(sandbox: &Sandbox, mock: &MockLlm, args: &[&str]) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(["--output-format", "json"]);
    sandbox.run(Api::Anthropic, mock, &all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_in_the_dialog_saves_the_rule_shown_and_the_next_session_honours_it() {
    let sandbox = repository("");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "touch made-by-rule.txt"})).with_text("Creating it."))
            .turn(Turn::text("Created."))
            .turn(Turn::tool("bash", json!({"command": "touch second.txt"})))
            .turn(Turn::text("Second done.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("make the file");
        screen.send("\r");
        // The exact rule first, the broader one only named until Tab switches to it.
        let dialog = screen
            .wait("the dialog", |s| s.contains("Allow bash?") && s.contains("remember: bash(touch made-by-rule.txt)"));
        assert!(dialog.contains("Tab: broaden to bash(touch *)"), "{dialog}");
        assert!(dialog.contains("a this session") && dialog.contains("p this project"), "{dialog}");
        // A dialog that opens right after typing ignores answer keys for a moment.
        std::thread::sleep(Duration::from_millis(800));
        screen.send("\t");
        screen.wait("the prefix rule", |s| s.contains("remember: bash(touch *)"));
        screen.send("p");
        let done = screen.wait("the command to run", |s| s.contains("Created."));
        assert!(
            done.contains("↳ approved by you for this project: bash(touch *) (saved in .cairn/settings.local.toml)"),
            "{done}"
        );
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert!(sandbox.exists("made-by-rule.txt"));
    let local = sandbox.read(".cairn/settings.local.toml");
    assert!(local.contains("[permissions]") && local.contains("\"bash(touch *)\""), "{local}");
    let ignored = Command::new("git")
        .args(["check-ignore", "-q", ".cairn/settings.local.toml"])
        .current_dir(sandbox.root())
        .status()
        .unwrap();
    assert!(ignored.success(), "the local settings file is git-ignored");
    drop(screen);

    // The next session: the approval line is back on screen, and the rule holds without asking.
    let mut again = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--resume"]));
    tokio::task::block_in_place(|| {
        let resumed = again.wait("the resumed session", |s| s.contains("resumed session"));
        assert!(resumed.contains("↳ approved by you for this project: bash(touch *)"), "{resumed}");
        again.type_text("and another");
        again.send("\r");
        let done = again.wait("the second command", |s| s.contains("Second done."));
        assert!(done.contains("↳ allowed by rule: allow bash(touch *) (project-local, "), "{done}");
        again.type_text("/quit");
        again.send("\r");
    });
    assert!(tokio::task::block_in_place(|| again.wait_exit()).success());
    assert!(sandbox.exists("second.txt"));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_sandbox_stopped_runs_outside_it_when_the_user_approves() {
    if !sandbox_enforced() {
        return;
    }
    // Outside the project and the temp dirs: only an unconfined run can write here.
    let Some(outside) = crate::support::cairn::outside_writable_roots() else { return };
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir_in(outside).unwrap();
    let target = outside.path().join("approved.txt");
    let command = format!("echo approved > {}", target.display());
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("bash", json!({ "command": command }))).turn(Turn::text("Written.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("write it");
        screen.send("\r");
        screen.wait("the dialog", |s| s.contains("Allow bash?"));
        std::thread::sleep(Duration::from_millis(800));
        screen.send("y");
        let asked = screen.wait("the second question", |s| s.contains("Run outside the sandbox?"));
        assert!(asked.contains("Stopped by the sandbox: the sandbox (workspace-write) lets commands"), "{asked}");
        assert!(!asked.contains("remember:"), "nothing to remember for a re-run: {asked}");
        // Still within a second of typing the prompt: the dialog's answer keys wait a moment.
        std::thread::sleep(Duration::from_millis(800));
        screen.send("y");
        let done = screen.wait("the answer", |s| s.contains("Written."));
        assert!(done.contains("↳ run outside the sandbox, approved by you (the sandbox stopped it"), "{done}");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "approved\n");
    let result = tool_results(&mock.requests()[1]).pop().unwrap().1;
    assert!(!result.contains("[sandbox:"), "the model gets the unconfined run's result: {result}");
}
