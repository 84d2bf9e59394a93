//! The user's own status line (issue 24, item 10): `[tui] status_command` gets the session's
//! figures as JSON on stdin and its first line is drawn under the composer; it runs again only
//! when they change, a failure is told once, a slow one never holds a frame, and a project's
//! settings cannot set it.

use std::time::{Duration, Instant};

use crate::support::cairn::{Api, Sandbox, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn ready(screen: &Screen) {
    screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("/200k")));
}

/// A script that keeps each input it gets and prints the mode and branch from it.
fn sandbox_with_status_script(timeout_ms: u64) -> Sandbox {
    let sandbox = Sandbox::new();
    let home = sandbox.home.path();
    let script = home.join("status.sh");
    std::fs::write(
        &script,
        format!(
            "input=$(cat)\nprintf '%s\\n' \"$input\" >> {inputs}\nmode=$(printf '%s' \"$input\" | sed 's/.*\"mode\":\"\\([a-z]*\\)\".*/\\1/')\nbranch=$(printf '%s' \"$input\" | sed 's/.*\"branch\":\"\\([^\"]*\\)\".*/\\1/')\necho \"mine: $mode on $branch\"\necho \"a second line nobody sees\"\n",
            inputs = home.join("inputs").display()
        ),
    )
    .unwrap();
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "{config}\n[tui]\nstatus_command = \"sh {}\"\nstatus_command_timeout_ms = {timeout_ms}\n",
            script.display()
        ),
    )
    .unwrap();
    sandbox.write(".git/HEAD", "ref: refs/heads/feature/login\n");
    sandbox
}

fn inputs(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    std::fs::read_to_string(sandbox.home.path().join("inputs"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The line shows what the script printed from the JSON, follows a mode switch, and the
/// script runs only when something changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_status_command_shows_its_first_line_and_runs_only_on_change() {
    let sandbox = sandbox_with_status_script(2_000);
    let mock = MockLlm::start(Script::new().turn(Turn::text("Done."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        let shown = screen.wait("the user's line", |s| s.contains("mine: edit on feature/login"));
        let rows: Vec<&str> = shown.lines().collect();
        let at = rows.iter().position(|l| l.contains("mine: edit")).unwrap();
        assert_eq!(at, rows.len() - 2, "it is the row above cairn's status line:\n{shown}");
        assert!(!shown.contains("a second line nobody sees"));
        screen.type_text("hello");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Done."));
        screen.send("\x1b[Z");
        screen.wait("the line to follow the mode", |s| s.contains("mine: plan on feature/login"));
    });
    // Idle: nothing changes, so nothing runs.
    std::thread::sleep(Duration::from_millis(700));
    let settled = inputs(&sandbox).len();
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(inputs(&sandbox).len(), settled, "an idle screen runs the command no more");
    assert!(settled <= 12, "it ran {settled} times for a start, a turn and a mode switch");
    let last = inputs(&sandbox).pop().unwrap();
    assert_eq!(last["mode"], "plan");
    assert_eq!(last["git"]["branch"], "feature/login");
    assert_eq!(last["model"]["display_name"], "claude-sonnet-4-5");
    assert_eq!(last["workspace"]["project_dir"], sandbox.root().display().to_string());
    assert_eq!(last["context_window"]["context_window_size"], 200_000);
    assert!(last["cost"]["total_cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{last}");
    assert!(last["session_id"].as_str().is_some_and(|s| !s.is_empty()), "{last}");
    tokio::task::block_in_place(|| {
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}

/// A command that fails is told once, not at every change; one that hangs is killed at its
/// timeout and the screen keeps answering the keyboard meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_slow_status_command_is_told_once_and_never_holds_the_screen() {
    let sandbox = Sandbox::new();
    let config = std::fs::read_to_string(sandbox.home.path().join("config.toml")).unwrap();
    std::fs::write(
        sandbox.home.path().join("config.toml"),
        format!("{config}\n[tui]\nstatus_command = \"echo broken >&2; exit 4\"\n"),
    )
    .unwrap();
    let mock = MockLlm::start(Script::new()).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        screen.wait("the failure", |s| s.contains("failed: it exited with 4: broken"));
        for _ in 0..3 {
            screen.send("\x1b[Z");
            std::thread::sleep(Duration::from_millis(400));
        }
        let after = screen.text();
        assert_eq!(after.matches("your status command").count(), 1, "told once:\n{after}");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());

    let sandbox = Sandbox::new();
    let config = std::fs::read_to_string(sandbox.home.path().join("config.toml")).unwrap();
    std::fs::write(
        sandbox.home.path().join("config.toml"),
        format!("{config}\n[tui]\nstatus_command = \"sleep 30\"\nstatus_command_timeout_ms = 1500\n"),
    )
    .unwrap();
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        ready(&screen);
        // The command sleeps now; typing still shows at once.
        let started = Instant::now();
        screen.type_text("typed while it sleeps");
        assert!(started.elapsed() < Duration::from_secs(1), "the screen waited for the command");
        screen.wait("the timeout", |s| s.contains("did not answer within 1500 ms"));
        screen.send("\x03");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}

/// A project's settings file cannot set the status command: cairn refuses the file and says
/// where the setting belongs; `cairn doctor` lists the user's own under what can run.
#[tokio::test]
async fn only_the_users_config_sets_the_status_command_and_doctor_lists_it() {
    let sandbox = Sandbox::new();
    let marker = sandbox.home.path().join("ran");
    sandbox.write(".cairn/settings.toml", &format!("[tui]\nstatus_command = \"touch {}\"\n", marker.display()));
    let mock = MockLlm::start(Script::new().turn(Turn::text("hi"))).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hello"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("read only from your own config.toml"), "{stderr}");
    assert!(!marker.exists());

    let sandbox = sandbox_with_status_script(500);
    let doctor = sandbox.run(Api::Anthropic, &mock, &["doctor"]).await;
    let report = text(&doctor.stdout);
    let line = report.lines().find(|l| l.contains("status command")).unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.contains("status.sh") && line.contains("config.toml:") && line.contains("runs in every folder"),
        "{line}"
    );
}
