//! The llama-server cairn runs (`--local`), against a fake llama-server process (tests/support/
//! fake_llama.rs): its loading shown, its window read from `/props`, a prompt answered, a
//! death reported and restarted once, `keep` reusing it, `/context` counted by its tokenizer,
//! and nothing left running after exit. The real llama-server is tested by the opt-in
//! `local_server` tests.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cairn::{Sandbox, json_lines, json_result, text};
use crate::support::fake_llama::{self, DIE_ENV, PIDS_ENV, TOKENIZE_DELAY_ENV, TOKENIZE_LOG_ENV};

/// Not a test: the fake llama-server the other tests start (the binary re-run on this one).
#[test]
#[ignore = "the fake llama-server of these tests; serves only when started by them"]
fn fake_llama_process() {
    if std::env::var_os(fake_llama::ARGS_ENV).is_some() {
        fake_llama::serve();
    }
}

struct Local {
    sandbox: Sandbox,
    model: PathBuf,
    pids: PathBuf,
    dir: tempfile::TempDir,
}

impl Local {
    fn new(extra: &str) -> Local {
        let dir = tempfile::tempdir().unwrap();
        let script = fake_llama::server_script(dir.path());
        let model = fake_llama::model(dir.path(), "tiny-coder.gguf", "weights");
        let sandbox = Sandbox::with_config(&format!("[local]\nserver = \"{}\"\nctx = 8192\n{extra}", script.display()));
        let pids = dir.path().join("pids");
        Local { sandbox, model, pids, dir }
    }

    async fn run(&self, args: &[&str]) -> std::process::Output {
        let model = self.model.display().to_string();
        let mut all = vec!["--local", model.as_str()];
        all.extend(args);
        let out = self.sandbox.bare_command(&all).env(PIDS_ENV, &self.pids).output().await.unwrap();
        if std::env::var_os("CAIRN_TEST_VERBOSE").is_some() {
            eprintln!("stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
        }
        out
    }

    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(&self.pids).unwrap_or_default().lines().filter_map(|l| l.parse().ok()).collect()
    }

    fn records(&self) -> Vec<PathBuf> {
        self.sandbox.home_files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")).collect()
    }
}

fn running(pid: u32) -> bool {
    // A zombie is not running: its `State:` says so.
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| !s.contains("State:\tZ"))
}

/// Whether `pid` is gone within a second (an exiting process takes a moment).
fn gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    while running(pid) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn stop(pid: u32) {
    // SAFETY: the test's own fake server, in its own process group.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

#[tokio::test]
async fn the_model_loads_with_progress_answers_in_its_served_window_and_the_server_is_gone_after_exit() {
    let local = Local::new("");
    let out = local.run(&["-p", "hello there", "--output-format", "json"]).await;
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("cairn: starting llama-server for tiny-coder"), "{err}");
    assert!(err.contains("cairn: loading tiny-coder [") && err.contains("%"), "the progress is shown: {err}");
    assert!(err.contains("llama-server ready: 8192-token window, 2 slots"), "{err}");
    let result = json_result(&out);
    assert_eq!(result["result"], "Hello from the fake llama-server.");
    assert_eq!(result["context"]["window"], 8192, "the window /props reports");
    assert_eq!(result["model"], "tiny-coder");
    let pids = local.pids();
    assert_eq!(pids.len(), 1, "one server started");
    assert!(gone(pids[0]), "the server stops with cairn");
    assert!(local.records().is_empty(), "and its record goes: {:?}", local.records());
}

#[tokio::test]
async fn a_server_that_dies_is_reported_and_restarted_once() {
    let local = Local::new("");
    let marker = local.dir.path().join("died");
    let model = local.model.display().to_string();
    let out = local
        .sandbox
        .bare_command(&["--local", &model, "-p", "hello", "--output-format", "stream-json"])
        .env(PIDS_ENV, &local.pids)
        .env(DIE_ENV, &marker)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(marker.exists(), "the server died under the first request");
    let notices: Vec<String> = json_lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "notice")
        .map(|l| l["text"].as_str().unwrap_or_default().to_string())
        .collect();
    let all = notices.join("\n");
    assert!(all.contains("llama-server stopped unexpectedly (exit code 3"), "{all}");
    assert!(all.contains("llama-server is running again with a 8192-token window"), "{all}");
    let result = json_lines(&out).into_iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "Hello from the fake llama-server.", "the prompt was answered after the restart");
    let pids = local.pids();
    assert_eq!(pids.len(), 2, "started, then restarted once: {pids:?}");
    assert!(pids.iter().all(|p| gone(*p)), "nothing is left running");
}

#[tokio::test]
async fn a_kept_server_outlives_cairn_and_is_used_again_until_keep_is_off() {
    let local = Local::new("keep = true\n");
    let first = local.run(&["-p", "one", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let pids = local.pids();
    assert_eq!(pids.len(), 1);
    assert!(running(pids[0]), "kept running after exit");
    let second = local.run(&["-c", "-p", "two", "--output-format", "json"]).await;
    let err = text(&second.stderr);
    assert!(second.status.success(), "{err}");
    assert!(err.contains("using the llama-server already running: 8192-token window"), "{err}");
    assert!(!err.contains("loading"), "nothing loads again: {err}");
    assert_eq!(local.pids(), pids, "no second server");
    // Its cache holds the first exchange: the second request re-sends it from the cache.
    let usage = &json_result(&second)["usage"];
    assert!(usage["cache_read_input_tokens"].as_u64().unwrap() > 0, "{usage}");

    // Doctor and /model show the server running, its model, window and slots; neither starts
    // or stops it.
    let doctor = local.run(&["doctor"]).await;
    let report = text(&doctor.stdout);
    let port = |url: &str| url.rsplit(':').next().unwrap().trim_end_matches("/v1").to_string();
    assert!(report.contains(&format!("(pid {})", pids[0])), "{report}");
    assert!(report.contains("8192 tokens per slot, 2 slots"), "{report}");
    assert!(report.contains("kept running (keep = true)"), "{report}");
    let model = local.run(&["-c", "-p", "/model"]).await;
    assert!(model.status.success(), "{}", text(&model.stderr));
    let served: Value = serde_json::from_slice(&model.stdout).unwrap();
    let server = &served["local_server"];
    assert_eq!(server["pid"], pids[0], "{served:#}");
    assert_eq!((server["window"].as_u64(), server["slots"].as_u64()), (Some(8192), Some(2)), "{server}");
    assert_eq!(server["keep"], true);
    assert!(server["model"].as_str().unwrap().ends_with("tiny-coder.gguf"), "{server}");
    assert!(report.contains(&format!(":{}", port(server["base_url"].as_str().unwrap()))), "{report}");
    assert_eq!(local.pids(), pids, "still the one server");
    assert!(running(pids[0]));

    // With keep off again, the next cairn takes the server over and stops it at exit.
    let config = local.sandbox.home.path().join("config.toml");
    let text_now = std::fs::read_to_string(&config).unwrap().replace("keep = true", "keep = false");
    std::fs::write(&config, text_now).unwrap();
    let third = local.run(&["-c", "-p", "three", "--output-format", "json"]).await;
    assert!(third.status.success(), "{}", text(&third.stderr));
    if !gone(pids[0]) {
        stop(pids[0]);
        panic!("the kept server was not stopped once keep was off");
    }
}

#[tokio::test]
async fn a_model_that_is_missing_is_not_gguf_or_fails_to_load_is_refused_with_the_fix() {
    let local = Local::new("");
    let missing = local.dir.path().join("nope.gguf").display().to_string();
    let out = local.sandbox.bare_command(&["--local", &missing, "-p", "hi"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not exist"), "{}", text(&out.stderr));

    let safetensors = local.dir.path().join("model.safetensors");
    std::fs::write(&safetensors, "{\"__metadata__\": {}}").unwrap();
    let out = local
        .sandbox
        .bare_command(&["--local", &safetensors.display().to_string(), "-p", "hi"])
        .output()
        .await
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a GGUF model") && err.contains("convert_hf_to_gguf.py"), "{err}");
    assert!(local.pids().is_empty(), "no server was started for them");

    let broken = fake_llama::model(local.dir.path(), "broken.gguf", "crash on load");
    let out = local
        .sandbox
        .bare_command(&["--local", &broken.display().to_string(), "-p", "hi"])
        .env(PIDS_ENV, &local.pids)
        .output()
        .await
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("llama-server stopped while loading broken (exit code 1)"), "{err}");
    assert!(
        err.contains("error loading model: tensor 'blk.0.attn_q.weight' has wrong shape"),
        "the log's reason: {err}"
    );
    assert!(err.contains("llama-server.log"), "and where the whole log is: {err}");
}

/// A repository's files never start a model server: `[local]` is read from the user's own
/// config.toml only, so one committed in `.cairn/settings.toml` is refused with where it goes,
/// and nothing is started, trusted folder or not.
#[tokio::test]
async fn a_projects_committed_local_settings_start_no_server() {
    let local = Local::new("");
    let script = fake_llama::server_script(local.dir.path());
    local.sandbox.write(
        ".cairn/settings.toml",
        &format!("[local]\nmodel = \"{}\"\nserver = \"{}\"\n", local.model.display(), script.display()),
    );
    for args in [&["-p", "hi"][..], &["--trust", "-p", "hi"]] {
        let trusted = args.contains(&"--trust");
        let out = local.sandbox.bare_command(args).env(PIDS_ENV, &local.pids).output().await.unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("settings.toml, line 1") && err.contains("only from your own config.toml"), "{err}");
        assert!(local.pids().is_empty(), "no server was started (trusted: {trusted})");
    }
}

#[tokio::test]
async fn context_counts_what_the_servers_tokenizer_counts_and_says_so() {
    let local = Local::new("");
    let prompt = "please count these seven words exactly";
    let out = local.run(&["-p", prompt, "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = local.run(&["-c", "-p", "/context"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let breakdown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let part = |name: &str| breakdown["parts"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned().unwrap();
    let messages = part("messages");
    let expected = fake_llama::tokens(prompt) + fake_llama::tokens("Hello from the fake llama-server.");
    assert_eq!(messages["tokens"], expected as u64, "{breakdown:#}");
    assert_eq!(messages["exact"], true);
    assert_eq!(part("system prompt")["exact"], true);
    assert_eq!(part("chat template and framing")["exact"], false, "what is left is estimated");
}

/// The texts a request carries go to `/tokenize` together, not one request each; a tokenizer
/// slower than `tokenize_timeout_ms` is not waited for: the counts are estimated, the turn
/// goes on, and `/context` says so.
#[tokio::test]
async fn the_tokenizer_is_asked_in_batches_and_a_slow_one_is_not_waited_for() {
    let local = Local::new("tokenize_timeout_ms = 300\n");
    let log = local.dir.path().join("tokenize.log");
    let model = local.model.display().to_string();
    let run = |args: &[&str], delay: &str| {
        let mut all = vec!["--local", model.as_str()];
        all.extend(args);
        let mut cmd = local.sandbox.bare_command(&all);
        cmd.env(PIDS_ENV, &local.pids).env(TOKENIZE_LOG_ENV, &log).env(TOKENIZE_DELAY_ENV, delay);
        cmd
    };
    let out = run(&["-p", "count these words", "--output-format", "json"], "0").output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let per_request: Vec<usize> = std::fs::read_to_string(&log).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert!(
        per_request.iter().any(|n| *n >= 3),
        "the system prompt, the tools and the message in one request: {per_request:?}"
    );

    let started = Instant::now();
    let out = run(&["-c", "-p", "and these too", "--output-format", "json"], "2000").output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "Hello from the fake llama-server.");
    let out = run(&["-c", "-p", "/context"], "2000").output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(8), "a slow tokenizer is not waited for: {:?}", started.elapsed());
    let breakdown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let parts = breakdown["parts"].as_array().unwrap();
    assert!(parts.iter().all(|p| p["exact"] == false), "every count estimated: {breakdown:#}");
    let messages = parts.iter().find(|p| p["name"] == "messages").unwrap();
    assert!(messages["tokens"].as_u64().unwrap() > 0, "{breakdown:#}");
}

#[tokio::test]
async fn doctor_names_every_local_server_and_the_managed_one() {
    let local = Local::new("");
    let model = local.model.display().to_string();
    let out = local.sandbox.bare_command(&["--local", &model, "doctor"]).output().await.unwrap();
    let doctor = text(&out.stdout);
    assert!(doctor.contains("is not running; cairn --local starts it"), "doctor does not start it: {doctor}");
    for name in ["Ollama", "llama-server", "LM Studio", "vLLM"] {
        assert!(doctor.lines().any(|l| l.trim_start().starts_with(name)), "{name} in {doctor}");
    }
    assert!(doctor.contains("tiny-coder.gguf (GGUF)"), "{doctor}");
    assert!(local.pids().is_empty(), "{doctor}");
}

/// A local server whose tool-call parser gives up passes the call on as text: cairn tells the
/// model, twice, and then fails the turn; the session goes on.
#[tokio::test]
async fn a_tool_call_the_server_left_as_text_is_an_error_the_session_survives() {
    use crate::support::cairn::{Api, user_texts};
    use crate::support::mock_llm::{MockLlm, Script, Turn};
    let broken = "<tool_call>\n{\"name\": \"glob\", \"arguments\": {pattern: *}";
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::text(broken))
            .turn(Turn::text(broken))
            .turn(Turn::text(broken))
            .turn(Turn::text("Nothing to list.")),
    )
    .await;
    let sandbox = Sandbox::new();
    let out = sandbox.run(Api::OpenAi, &mock, &["-p", "list the files", "--output-format", "stream-json"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let notices = lines
        .iter()
        .filter(|l| l["type"] == "notice" && l["text"].as_str().unwrap().contains("could not parse"))
        .count();
    assert_eq!(notices, 3);
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["is_error"], true);
    assert!(result["result"].as_str().unwrap().contains("did not parse 3 times in a row"), "{result}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert!(user_texts(&requests[1]).last().unwrap().contains("could not parse, so no tool ran"), "the model is told");

    let out = sandbox.run(Api::OpenAi, &mock, &["-c", "-p", "what now?", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "Nothing to list.", "the session goes on");
}

/// In the terminal, a folder that asks for trust is answered before the model loads: no server
/// runs while the question waits, the loading is shown on the terminal itself (left on it after
/// exit), and the server is gone when cairn is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_asks_for_trust_before_the_model_loads_and_shows_the_loading_off_the_screen() {
    use crate::support::pty::{self, Screen};
    let local = Local::new("");
    local.sandbox.write(".cairn/settings.toml", "[[hooks.SessionStart]]\ncommand = \"true\"\n");
    let model = local.model.display().to_string();
    let mut cmd = pty::bare_command(&local.sandbox, &["--local", &model]);
    cmd.env(PIDS_ENV, &local.pids);
    let mut screen = tokio::task::block_in_place(|| Screen::spawn(cmd));
    tokio::task::block_in_place(|| {
        screen.wait("the trust dialog", |s| s.contains("y trust · n don't trust"));
        std::thread::sleep(Duration::from_millis(300));
    });
    assert!(local.pids().is_empty(), "no server while the question waits");
    tokio::task::block_in_place(|| {
        screen.send("y");
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
    });
    let pids = local.pids();
    assert_eq!(pids.len(), 1, "the model loaded once the folder was answered");
    tokio::task::block_in_place(|| {
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let after = screen.text();
    assert!(after.contains("cairn: llama-server ready: 8192-token window, 2 slots"), "on the terminal: {after}");
    assert!(gone(pids[0]), "the server stops with cairn");
}
