//! Headless runs stopped from outside (SIGTERM from a supervisor, SIGHUP from a closing
//! terminal) end like Ctrl+C: the running command's whole process group is killed, what was
//! finished is stored, the result is printed marked interrupted, and the exit code is 1.
//! Processes a command left running in the background are listed at exit and ended.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// True while any process of group `group` runs (zombies, which nobody may reap here, do not).
fn group_alive(group: i32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { return false };
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
        fields[2].parse::<i32>() == Ok(group) && fields[0] != "Z"
    })
}

fn process_alive(pid: i32) -> bool {
    // A zombie still answers kill(0); its state in /proc says it is gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
        Err(_) => false,
    }
}

/// The number in `rel` once the command has written it.
async fn wait_for_pid(sandbox: &Sandbox, rel: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(s) = std::fs::read_to_string(sandbox.project.path().join(rel))
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the command never wrote {rel}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A command with three children, all in its process group, that would run five minutes.
const BUSY: &str = "sleep 300 & sleep 300 & (sleep 300; true) & echo $$ > shell.pid; sleep 300";

async fn stopped_by(signal: libc::c_int, format: &str) -> (Sandbox, MockLlm, std::process::Output, i32) {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": BUSY})).with_text("Running it."))
            .turn(Turn::text("never asked for")),
    )
    .await;
    let child = sandbox
        .command(Api::Anthropic, &mock, &["-p", "run the job", "--yes", "--output-format", format])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let group = wait_for_pid(&sandbox, "shell.pid").await;
    assert!(group_alive(group));
    // SAFETY: a signal to our own child by its pid.
    unsafe { libc::kill(child.id().unwrap() as i32, signal) };
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("cairn did not end after the signal")
        .unwrap();
    (sandbox, mock, out, group)
}

#[tokio::test]
async fn sigterm_kills_the_running_command_prints_the_result_and_keeps_the_messages() {
    let (sandbox, mock, out, group) = stopped_by(libc::SIGTERM, "json").await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(!group_alive(group), "processes of the command outlived cairn");
    let result = json_result(&out);
    assert_eq!(result["is_error"], true);
    assert!(result["result"].as_str().unwrap().ends_with("[interrupted]"), "{result}");
    assert_eq!(mock.requests().len(), 1, "no request after the stop");
    // The assistant's tool call and the command's (interrupted) result are both stored.
    let db = sandbox.database();
    let stored: Vec<(String, String)> = db
        .prepare("SELECT role, content FROM messages ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let all = format!("{stored:?}");
    assert!(all.contains("run the job") && all.contains("Running it."), "{all}");
    assert!(all.contains("[interrupted by the user]"), "the interrupted command's output is stored: {all}");
}

#[tokio::test]
async fn sighup_ends_like_an_interrupt_in_text_output() {
    let (_sandbox, _mock, out, group) = stopped_by(libc::SIGHUP, "text").await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(!group_alive(group), "processes of the command outlived cairn");
    assert!(text(&out.stderr).contains("[interrupted]"), "{}", text(&out.stderr));
}

async fn leaves_a_server_behind(config: &str) -> (std::process::Output, i32) {
    let sandbox = Sandbox::with_config(config);
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "sleep 300 > /dev/null 2>&1 & echo $! > server.pid"})))
            .turn(Turn::text("Started the server.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "start the server", "--yes"]).await;
    let pid = std::fs::read_to_string(sandbox.project.path().join("server.pid")).unwrap().trim().parse().unwrap();
    (out, pid)
}

#[tokio::test]
async fn background_processes_left_by_a_command_are_listed_and_ended_at_exit() {
    let (out, pid) = leaves_a_server_behind("").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Started the server.");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("were still running and were ended") && stderr.contains("sleep 300"), "{stderr}");
    assert!(!process_alive(pid), "the background process outlived cairn");
}

#[tokio::test]
async fn background_processes_are_kept_when_configured_and_still_listed() {
    let (out, pid) = leaves_a_server_behind("[tools]\nbash_keep_background = true\n").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let kept = process_alive(pid);
    // SAFETY: ending the process this test had cairn start.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(kept, "bash_keep_background = true, yet the process was ended");
    assert!(stderr.contains("are still running") && stderr.contains("sleep 300"), "{stderr}");
}
