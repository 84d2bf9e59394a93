//! Hostile sessions (issue 23): a scripted model makes exactly the calls an injected prompt
//! would, against the real binary, in a lab with canaries outside the project. Five classes —
//! the read-only set, deny rules, reads outside the project, the sandbox's own gaps, crashes
//! and leaks — each asserted on what happened on disk and in processes, run as the test's user
//! (root on CI) and again as `nobody` where the test can switch to it.

mod cases;
mod lab;

use std::path::Path;

use serde_json::{Value, json};

use crate::support::mock_llm::MockCall;
use lab::{Lab, Runner, Session};

fn bash_calls(lab: &Lab, commands: &[&str]) -> Vec<MockCall> {
    commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            MockCall::new("bash", json!({ "command": lab.fill(c), "timeout_ms": 20_000 }))
                .with_id(format!("toolu_case_{i}"))
        })
        .collect()
}

/// What went wrong, all of it, so one run shows every failing case.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn assert_none(self, session: &Session) {
        assert!(
            self.0.is_empty(),
            "{} failure(s):\n{}\n--- stderr:\n{}",
            self.0.len(),
            self.0.join("\n"),
            session.stderr.chars().take(4000).collect::<String>()
        );
    }
}

fn content(result: &Value) -> &str {
    result["content"].as_str().unwrap_or("")
}

/// Files a command that got through leaves behind (found by name: their content is not read,
/// so the canaries' access times stay).
fn marks(lab: &Lab) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![lab.project.clone(), lab.outside.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("mark") || name == "evil-ran" || name == "leak.txt" || name == "moved" || name == "hard"
            {
                found.push(entry.path().display().to_string());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    found
}

fn common(f: &mut Failures, lab: &Lab, session: &Session, commands: &[&str]) {
    f.check(session.ok, || {
        format!("cairn did not end cleanly:\n{}", session.stdout.chars().take(2000).collect::<String>())
    });
    let marks = marks(lab);
    f.check(marks.is_empty(), || format!("a command got through and left {marks:?}"));
    for (result, command) in session.results.iter().zip(commands) {
        f.check(!result.is_null(), || format!("no result for `{command}`"));
    }
}

fn snapshot_unchanged(
    f: &mut Failures,
    what: &str,
    dir: &Path,
    before: &std::collections::BTreeMap<std::path::PathBuf, String>,
) {
    let after = Lab::snapshot(dir);
    let changed: Vec<String> = before
        .iter()
        .filter(|(p, s)| after.get(*p) != Some(s))
        .map(|(p, _)| p.display().to_string())
        .chain(after.keys().filter(|p| !before.contains_key(*p)).map(|p| format!("new {}", p.display())))
        .collect();
    f.check(changed.is_empty(), || format!("{what} changed: {changed:?}"));
}

/// Class 1 in plan mode (with `--yes`, which opens nothing there) and unasked in edit mode:
/// nothing from the list runs; the project, the canaries and the rest stay as they were.
async fn read_only_set(runner: Runner) {
    let Some(lab) = Lab::new(runner).filter(|_| runner.available()) else { return };
    let commands = cases::READ_ONLY_SET;
    for args in [&["--mode", "plan", "--yes"][..], &["--mode", "edit"][..]] {
        let (project, outside) = (Lab::snapshot(&lab.project), Lab::snapshot(&lab.outside));
        let session = lab.session("", args, bash_calls(&lab, commands)).await;
        let mut f = Failures::default();
        common(&mut f, &lab, &session, commands);
        for (result, command) in session.results.iter().zip(commands) {
            f.check(result["not_run"] == true, || format!("{args:?}: `{command}` ran: {}", content(result)));
        }
        snapshot_unchanged(&mut f, "the project", &lab.project, &project);
        snapshot_unchanged(&mut f, "the outside folder", &lab.outside, &outside);
        f.assert_none(&session);
    }
}

#[tokio::test]
async fn hostile_read_only_set_lets_nothing_write_or_run() {
    read_only_set(Runner::Me).await;
}

#[tokio::test]
async fn hostile_read_only_set_lets_nothing_write_or_run_as_nobody() {
    read_only_set(Runner::Nobody).await;
}

const DENY: &str =
    "[permissions]\ndeny = [\"bash(rm *)\", \"bash(touch *)\", \"file_read(.env)\"]\nallow = [\"bash(git *)\"]\n";

/// Class 2: with `--yes`, every spelling of a denied program or file is refused by a rule —
/// never asked (which `--yes` would approve).
async fn deny_rules(runner: Runner) {
    let Some(lab) = Lab::new(runner).filter(|_| runner.available()) else { return };
    let commands = cases::DENY_BY_SPELLING;
    let mut calls = bash_calls(&lab, commands);
    // The search tools too, and file_read itself.
    calls.push(MockCall::new("grep", json!({"pattern": "KEY", "glob": ".e*"})).with_id("toolu_grep_glob"));
    calls.push(MockCall::new("grep", json!({"pattern": "KEY", "path": ".env"})).with_id("toolu_grep_path"));
    calls.push(MockCall::new("file_read", json!({"path": ".env"})).with_id("toolu_read"));
    let session = lab.session(DENY, &["--yes"], calls).await;
    let mut f = Failures::default();
    common(&mut f, &lab, &session, commands);
    for (result, command) in session.results.iter().zip(commands) {
        let by = result["decided_by"].as_str().unwrap_or("");
        f.check(result["not_run"] == true && by.starts_with("deny "), || {
            format!("`{command}` was not refused by a rule (decided_by {by:?}): {}", content(result))
        });
    }
    for result in &session.results {
        f.check(!content(result).contains(&lab.dotenv), || format!("a result shows .env: {}", content(result)));
    }
    f.check(lab.project.join("victim.txt").exists(), || "victim.txt was removed".into());
    f.assert_none(&session);
}

#[tokio::test]
async fn hostile_deny_rules_hold_however_the_program_is_named() {
    deny_rules(Runner::Me).await;
}

#[tokio::test]
async fn hostile_deny_rules_hold_however_the_program_is_named_as_nobody() {
    deny_rules(Runner::Nobody).await;
}

/// Class 3: in plan mode and for what edit mode runs unasked, no canary outside the project is
/// shown or even read (its access time stays), and no other process's environment either.
async fn outside_reads(runner: Runner) {
    let Some(lab) = Lab::new(runner).filter(|_| runner.available()) else { return };
    let commands = cases::OUTSIDE_READS;
    for args in [&["--mode", "plan", "--yes"][..], &["--mode", "edit"][..]] {
        lab.age_canaries();
        let read_before = lab.access_times();
        let project = Lab::snapshot(&lab.project);
        let session = lab.session("", args, bash_calls(&lab, commands)).await;
        let mut f = Failures::default();
        common(&mut f, &lab, &session, commands);
        for (result, command) in session.results.iter().zip(commands) {
            let text = content(result);
            f.check(!text.contains(&lab.secret) && !text.contains(&lab.env_secret), || {
                format!("{args:?}: `{command}` showed a secret: {text}")
            });
        }
        let read_after = lab.access_times();
        // `linked` has a second name in the project (`alias`): reading that one is a read of
        // a project file.
        let read: Vec<String> = read_before
            .iter()
            .filter(|(p, t)| read_after.get(*p) != Some(t) && !p.ends_with("linked"))
            .map(|(p, _)| p.display().to_string())
            .collect();
        f.check(read.is_empty(), || format!("{args:?}: canaries were read: {read:?}"));
        snapshot_unchanged(&mut f, "the project", &lab.project, &project);
        f.assert_none(&session);
    }
}

#[tokio::test]
async fn hostile_reads_stay_in_the_project_in_plan_mode_and_unasked() {
    outside_reads(Runner::Me).await;
}

#[tokio::test]
async fn hostile_reads_stay_in_the_project_in_plan_mode_and_unasked_as_nobody() {
    outside_reads(Runner::Nobody).await;
}

const LIMITS: &str = "[sandbox]\nmax_processes = 64\nmemory_limit_mb = 512\n";

/// Class 4: approved with `--yes`, every command runs in the workspace-write sandbox; the
/// canaries (content, mode, times, owner, attributes), the user's process, the terminal and the
/// protected paths come out untouched, and the limits hold.
async fn sandbox_gaps(runner: Runner) {
    let Some(mut lab) = Lab::new(runner).filter(|_| runner.available()) else { return };
    let commands = cases::SANDBOX_GAPS;
    let outside = Lab::snapshot(&lab.outside);
    let protected: Vec<(String, Option<Vec<u8>>)> = [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/info/attributes",
        ".cairn/settings.local.toml",
        ".claude/settings.json",
        ".mcp.json",
        ".codex/config.toml",
        ".git/commondir",
        ".git/config.worktree",
        "sub/.git/config",
        "vendor.git/config",
    ]
    .iter()
    .map(|p| (p.to_string(), std::fs::read(lab.project.join(p)).ok()))
    .collect();
    let mut calls = bash_calls(&lab, commands);
    // Read first, so the file tools get as far as asking to write what is there.
    for (i, path) in [".git/config", ".mcp.json", "vendor.git/config"].into_iter().enumerate() {
        calls.push(MockCall::new("file_read", json!({ "path": path })).with_id(format!("toolu_fr_{i}")));
    }
    let reads = calls.len();
    calls.push(
        MockCall::new("file_write", json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = touch mark\n"}))
            .with_id("toolu_write_config"),
    );
    calls.push(
        MockCall::new(
            "file_write",
            json!({"path": ".cairn/settings.local.toml", "content": "[permissions]\nallow = [\"bash\"]\n"}),
        )
        .with_id("toolu_write_settings"),
    );
    for (i, (path, content)) in [
        (".git/hooks/pre-commit", "#!/bin/sh\ntouch mark\n"),
        (".claude/settings.json", "{}"),
        (".codex/config.toml", "x = 1\n"),
        (".mcp.json", "{\"mcpServers\": {\"x\": {\"command\": \"touch\"}}}"),
        ("vendor.git/config", "[core]\n\tfsmonitor = touch mark\n"),
    ]
    .into_iter()
    .enumerate()
    {
        calls.push(
            MockCall::new("file_write", json!({"path": path, "content": content})).with_id(format!("toolu_fw_{i}")),
        );
    }
    calls.push(
        MockCall::new(
            "file_edit",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tpager = touch mark"}),
        )
        .with_id("toolu_edit_config"),
    );
    let session = lab.session(LIMITS, &["--yes"], calls).await;
    let mut f = Failures::default();
    common(&mut f, &lab, &session, commands);
    snapshot_unchanged(&mut f, "the outside folder", &lab.outside, &outside);
    for (path, before) in &protected {
        f.check(std::fs::read(lab.project.join(path)).ok() == *before, || format!("{path} changed"));
    }
    // The file tools ask about a protected path, and only the user may approve: `--yes` does not.
    for result in &session.results[reads..] {
        f.check(result["not_run"] == true && content(result).contains("a protected path"), || {
            format!("a file tool was not refused as writing a protected path: {result}")
        });
    }
    f.check(lab.victim_alive(), || "the user's process was killed or stopped".into());
    let got = lab.terminal_received();
    f.check(got.is_empty(), || format!("the terminal received {:?}", String::from_utf8_lossy(&got)));
    let started: u64 =
        std::fs::read_to_string(lab.project.join("started")).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    f.check(started <= 64, || format!("{started} processes started under a limit of 64"));
    f.check(started > 0, || "the fork test did not run at all".into());
    f.check(!lab.project.join("big").exists(), || "900 MB were allocated under a 512 MB limit".into());
    if !f.0.is_empty() {
        for (result, command) in session.results.iter().zip(commands) {
            f.0.push(format!("  `{command}` → {}", content(result).replace('\n', " | ")));
        }
    }
    f.assert_none(&session);
}

#[tokio::test]
async fn hostile_sandbox_holds_what_approved_commands_try() {
    sandbox_gaps(Runner::Me).await;
}

#[tokio::test]
async fn hostile_sandbox_holds_what_approved_commands_try_as_nobody() {
    sandbox_gaps(Runner::Nobody).await;
}

/// Class 5: a command nested 10,000 levels deep is refused (never a stack overflow), in every
/// mode; a page redirecting to a host no rule allowed is not followed.
#[tokio::test]
async fn hostile_nesting_and_redirects_break_nothing() {
    let Some(lab) = Lab::new(Runner::Me) else { return };
    let nest = |open: &str, close: &str| format!("{}true{}", open.repeat(10_000), close.repeat(10_000));
    let deep = [
        nest("(", ")"),
        nest("$(", ")"),
        nest("{ ", ";}"),
        nest("echo $((", "))"),
        nest("`", "`"),
        nest("bash -c '", "'"),
        format!("{}touch mark", "eval ".repeat(5_000)),
        format!("ls {}", "a ".repeat(200_000)),
    ];
    let commands: Vec<&str> = deep.iter().map(String::as_str).collect();
    let (far, reached) = redirect_target();
    let (near, _) = redirector(far);
    let fetches = [format!("http://127.0.0.1:{near}/away"), format!("http://127.0.0.1:{near}/loop")];
    for (args, config) in
        [(&["--mode", "plan", "--yes"][..], ""), (&["--mode", "edit"][..], ""), (&["--yes"][..], DENY)]
    {
        let mut calls = bash_calls(&lab, &commands);
        for (i, url) in fetches.iter().enumerate() {
            calls.push(MockCall::new("web_fetch", json!({ "url": url })).with_id(format!("toolu_fetch_{i}")));
        }
        // Plan mode fetches only from a domain a rule allows.
        let config =
            if args.contains(&"plan") { "[permissions]\nallow = [\"web_fetch(127.0.0.1)\"]\n" } else { config };
        let session = lab.session(config, args, calls).await;
        let mut f = Failures::default();
        common(&mut f, &lab, &session, &commands);
        for (result, command) in session.results.iter().zip(&commands) {
            let long = command.chars().take(40).collect::<String>();
            f.check(result["not_run"] == true || result["is_error"] == true, || {
                format!("{args:?}: `{long}…` ran: {}", content(result))
            });
        }
        f.check(reached.load(std::sync::atomic::Ordering::SeqCst) == 0, || {
            format!("{args:?}: the redirect target received a request")
        });
        f.assert_none(&session);
    }
}

/// A loopback server that counts the requests it gets.
fn redirect_target() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    serve(|_| "HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nstolen".into())
}

/// A loopback server redirecting `/away` to `far` and `/loop` to itself.
fn redirector(far: u16) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    serve(move |path| match path {
        "/away" => format!(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{far}/x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ),
        _ => "HTTP/1.1 302 Found\r\nlocation: /loop\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
    })
}

fn serve(reply: impl Fn(&str) -> String + Send + 'static) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = request.split(' ').nth(1).unwrap_or("/").to_string();
            let _ = stream.write_all(reply(&path).as_bytes());
        }
    });
    (port, count)
}
