//! Background commands (issue 24, item 10): `bash` with `background: true` starts a command
//! that keeps running and returns at once; `/ps` lists it, `/stop N` ends it, the model reads
//! it with `bash_output` and ends it with `bash_stop`; it ends with cairn — on exit, and on a
//! crash through its watchdog — and with a rewind of the turn that started it. What ran on the
//! machine is checked in `/proc`, not only on the screen.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_lines, text, tool_results};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// Processes whose command line holds `marker`: (pid, process group).
fn processes(marker: &str) -> Vec<(i32, i32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(pid) = name.parse::<i32>() else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // The watchdog's own command line names only the group, never the marker.
        if !cmdline.contains(marker) || cmdline.contains("cairn-watchdog") {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields[0] == "Z" {
            continue;
        }
        found.push((pid, fields[2].parse().unwrap()));
    }
    found
}

fn wait_until(what: &str, limit: Duration, ok: impl Fn() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn get(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.write_all(b"GET / HTTP/1.0\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    Some(reply)
}

/// A dev server started in the background: asked for like any command, running (it answers
/// HTTP) while the turn is over, counted in the status line, listed by `/ps` with its last
/// lines, ended by `/stop 1` — its whole process group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_server_runs_in_the_background_and_ps_lists_it_and_stop_ends_its_group() {
    let sandbox = Sandbox::with_config("[sandbox]\nnetwork = true\n");
    sandbox.write("index.html", "<h1>the project's page</h1>\n");
    let port = free_port();
    let command = format!("PYTHONUNBUFFERED=1 python3 -m http.server {port} --bind 127.0.0.1");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": command, "background": true})))
            .turn(Turn::text("The server runs on its port.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
        screen.type_text("start the dev server");
        screen.send("\r");
        let dialog = screen.wait("the approval dialog", |s| s.contains("Allow bash?"));
        assert!(
            dialog.contains("http.server") && dialog.contains("In the background: the call returns at once"),
            "{dialog}"
        );
        std::thread::sleep(Duration::from_millis(800));
        screen.send("y");
        screen.wait("the turn to end", |s| s.contains("The server runs on its port."));
        // Once the message of the approval has gone, the status line counts it.
        screen.wait("the count", |s| s.lines().last().is_some_and(|l| l.contains("⚙ 1 bg")));
    });
    let page = get(port).expect("the server answers after the turn is over");
    assert!(page.contains("the project's page"), "{page}");
    let running = processes(&format!("http.server {port}"));
    assert!(!running.is_empty(), "the server is a process of its own");
    let group = running[0].1;
    tokio::task::block_in_place(|| {
        screen.type_text("/ps");
        screen.send("\r");
        let listed = screen.wait("the list", |s| s.contains("Background commands: 1 running"));
        assert!(listed.contains("1  running") && listed.contains(&format!("http.server {port}")), "{listed}");
        assert!(listed.contains("\"GET / HTTP/1.0\" 200"), "its last lines are shown:\n{listed}");
        screen.type_text("/stop 1");
        screen.send("\r");
        let stopped = screen.wait("the stop", |s| s.contains("stopped background command 1 (stopped)"));
        assert!(!stopped.lines().last().unwrap_or_default().contains("bg"), "the count is gone:\n{stopped}");
    });
    wait_until("the server's group to end", Duration::from_secs(10), || {
        processes(&format!("http.server {port}")).is_empty()
    });
    assert!(get(port).is_none(), "nothing answers on the port any more");
    assert!(processes("").iter().all(|(_, g)| *g != group), "nothing of its group is left");
    tokio::task::block_in_place(|| {
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let first = tool_results(&mock.requests()[1]).pop().unwrap().1;
    assert!(first.contains("Started in the background as job 1"), "{first}");
}

/// The model reads the output from where it last read, from an offset and filtered, then
/// ends the job; headless, every step is a tool result, and cairn's exit ends what is left.
#[tokio::test]
async fn the_model_reads_and_stops_its_job_and_exit_ends_the_rest() {
    let sandbox = Sandbox::new();
    let watcher = "for i in 1 2 3; do echo line $i; done; echo ready; exec sleep 31337";
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": watcher, "background": true})))
            .turn(Turn::tool("bash", json!({"command": "sleep 31338", "background": true})))
            .turn(Turn::tool("bash_output", json!({"id": 1})))
            .turn(Turn::tool("bash_output", json!({"id": 1, "offset": 0, "filter": "line 2"})))
            .turn(Turn::tool("bash_stop", json!({"id": 1})))
            .turn(Turn::text("Read it, stopped it.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "watch", "--yes", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Vec<String> = tool_results(mock.requests().last().unwrap()).into_iter().map(|r| r.1).collect();
    assert!(results[0].contains("Started in the background as job 1"), "{}", results[0]);
    assert!(
        results[0].contains("line 1\nline 2\nline 3\nready"),
        "the first lines come with the start: {}",
        results[0]
    );
    assert!(results[2].starts_with("job 1 · running"), "{}", results[2]);
    assert!(results[2].contains("(no new output)"), "a read goes on from the last one: {}", results[2]);
    assert!(results[3].contains("line 2\n") && !results[3].contains("line 1"), "{}", results[3]);
    assert!(results[3].contains("[bytes 0–"), "{}", results[3]);
    assert!(results[4].starts_with("Ended job 1 (stopped)"), "{}", results[4]);
    assert!(processes("sleep 31337").is_empty(), "bash_stop ended it");
    // The second job was left running by the model: cairn's exit ended it and said so.
    assert!(processes("sleep 31338").is_empty(), "cairn's exit ended the rest");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("1 background command(s) were still running and were ended"), "{stderr}");
    assert!(stderr.contains("job 2") && stderr.contains("sleep 31338"), "{stderr}");
    let lines = json_lines(&out);
    assert!(lines.iter().any(|l| l["type"] == "background" && l["running"] == 2), "the count is in the stream");
}

/// However cairn ends — here SIGKILL, which runs none of its code — the watchdog ends the
/// job's whole group: no orphan is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_cairn_leaves_no_background_command_behind() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "sleep 42421 & exec sleep 42422", "background": true})))
            .turn(Turn::text("Started.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--yes"]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
        screen.type_text("start it");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("Started."));
    });
    assert_eq!(processes("sleep 4242").len(), 2, "both run: {:?}", processes("sleep 4242"));
    let pid = screen.pid();
    // SAFETY: the test's own child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    tokio::task::block_in_place(|| {
        screen.wait_exit();
        wait_until("the watchdog to end the group", Duration::from_secs(10), || processes("sleep 4242").is_empty());
    });
}

/// A rewind to before the turn that started a job ends it: the turn is taken back, and what
/// it left running with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_ends_the_background_commands_of_the_turns_it_takes_back() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::text("Hello."))
            .turn(Turn::tool("bash", json!({"command": "exec sleep 31341", "background": true})))
            .turn(Turn::text("The watcher runs.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--yes"]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
        screen.type_text("hi");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Hello."));
        screen.type_text("start the watcher");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("The watcher runs."));
        assert_eq!(processes("sleep 31341").len(), 1);
        screen.type_text("/rewind");
        screen.send("\r");
        screen.wait("the turns", |s| s.contains("Rewind: choose a turn (2)"));
        screen.send("\r");
        screen.wait("what to take back", |s| s.contains("Conversation only"));
        screen.send("\r");
        let done = screen.wait("the report", |s| s.contains("ended background command 1"));
        assert!(done.contains("the rewind took back the turn that started it"), "{done}");
        assert!(processes("sleep 31341").is_empty(), "the job is gone");
        // The rewound prompt is offered again: Ctrl+C clears it.
        screen.send("\x03");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}
