//! Opt-in: cairn against a real llama-server, built from source with scripts/build-llama-server.sh
//! (which also writes the tiny random-weight GGUF models). Run with
//! `CAIRN_LOCAL_LLM=DIR cargo test -- --ignored local_server`, DIR being the script's.
//!
//! The model writes nonsense, but the server, its chat template, streaming, tokenizer, tool-call
//! parser and prompt cache are llama.cpp's own.

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cairn::{Sandbox, json_lines, json_result, text};

/// The folder scripts/build-llama-server.sh filled; a run without it fails with what to do.
fn built() -> PathBuf {
    let dir = std::env::var_os("CAIRN_LOCAL_LLM").map(PathBuf::from).unwrap_or_else(|| {
        panic!("set CAIRN_LOCAL_LLM to the folder scripts/build-llama-server.sh wrote (it builds llama-server and the tiny models)")
    });
    for file in ["bin/llama-server", "tiny.gguf", "tiny-toolcall.gguf"] {
        assert!(dir.join(file).exists(), "{} is missing; run scripts/build-llama-server.sh {}", file, dir.display());
    }
    dir
}

struct Real {
    sandbox: Sandbox,
    /// The built models, linked under names of this test's own, so the servers it starts are
    /// told from those of the tests running beside it.
    models: tempfile::TempDir,
}

impl Real {
    fn new(ctx: u64, keep: bool) -> Real {
        let dir = built();
        let server = dir.join("bin/llama-server");
        let sandbox = Sandbox::with_config(&format!(
            "[local]\nserver = \"{}\"\nctx = {ctx}\nthreads = 2\nkeep = {keep}\n",
            server.display()
        ));
        let models = tempfile::tempdir().unwrap();
        for name in ["tiny.gguf", "tiny-toolcall.gguf"] {
            std::os::unix::fs::symlink(dir.join(name), models.path().join(name)).unwrap();
        }
        Real { sandbox, models }
    }

    fn model(&self, name: &str) -> String {
        self.models.path().join(name).display().to_string()
    }

    async fn run(&self, model: &str, args: &[&str]) -> Output {
        let model = self.model(model);
        let mut all = vec!["--local", model.as_str()];
        all.extend(args);
        let out = self.sandbox.bare_command(&all).output().await.unwrap();
        if std::env::var_os("CAIRN_TEST_VERBOSE").is_some() {
            eprintln!("stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
        }
        out
    }

    /// The server cairn keeps running for this sandbox: its port, from cairn's record of it.
    fn kept_port(&self) -> u16 {
        let record = self
            .sandbox
            .home_files()
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("llama-server-")))
            .expect("a record of the kept server");
        let record: Value = serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
        record["port"].as_u64().unwrap() as u16
    }

    async fn tokenize(&self, port: u16, text: &str) -> usize {
        let client = cairn::net::build_client("http://127.0.0.1").unwrap();
        let answer: Value = client
            .post(format!("http://127.0.0.1:{port}/tokenize"))
            .json(&json!({"content": text, "add_special": false, "parse_special": true}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["tokens"].as_array().unwrap().len()
    }
}

/// Whatever a failed test's cairn kept running is stopped with it.
impl Drop for Real {
    fn drop(&mut self) {
        for name in ["tiny.gguf", "tiny-toolcall.gguf"] {
            servers_of(&self.model(name)).into_iter().for_each(kill_group);
        }
    }
}

/// llama-server processes loading `model` now.
fn servers_of(model: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        if args.first().is_some_and(|a| a.ends_with("llama-server")) && args.iter().any(|a| a == model) {
            pids.push(pid);
        }
    }
    pids
}

/// Stop a server this test's cairn kept running (it leads its own process group).
fn kill_group(pid: u32) {
    // SAFETY: a plain kill(2) of a process group a kept llama-server of this test leads.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// Whether `pid` runs (a zombie waiting to be reaped does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| !s.contains("State:\tZ"))
}

fn wait_gone(pids: &[u32]) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| running(*p)) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// What cairn sends of a message, as its exact count reads it: text, each tool call as the
/// template's JSON, a tool result's output (the same rule as `context::exact_text_of`).
fn exported_text(line: &Value) -> String {
    let mut text = line["content"].as_str().unwrap_or_default().to_string();
    for call in line["tool_calls"].as_array().into_iter().flatten() {
        text.push_str(&format!("{{\"name\": {}, \"arguments\": {}}}", call["name"], call["arguments"]));
    }
    text
}

#[tokio::test]
#[ignore = "needs llama-server and the tiny models: CAIRN_LOCAL_LLM=DIR cargo test -- --ignored local_server"]
async fn local_server_loads_answers_counts_exactly_compacts_survives_a_bad_tool_call_and_stops() {
    let real = Real::new(8192, true);
    let tiny = real.model("tiny.gguf");

    // A headless prompt to the end, with the loading shown and the window from /props.
    let out =
        real.run("tiny.gguf", &["--mode", "ask", "-p", "Say something about Rust.", "--output-format", "json"]).await;
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}\n{}", text(&out.stdout));
    assert!(err.contains("cairn: starting llama-server for tiny"), "{err}");
    assert!(err.contains("cairn: loading tiny ["), "the progress bar: {err}");
    let ready = err.lines().find(|l| l.contains("llama-server ready:")).unwrap_or_else(|| panic!("{err}"));
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    assert!(!result["result"].as_str().unwrap().is_empty(), "a text answer: {result}");
    let window = result["context"]["window"].as_u64().unwrap();
    assert!(ready.contains(&format!("{window}-token window")), "the window is the one /props reports: {ready}");
    let session = result["session_id"].as_str().unwrap().to_string();
    let running = servers_of(&tiny);
    assert_eq!(running.len(), 1, "kept for the next steps: {running:?}");

    // /context's exact count of the messages is what the server's tokenizer says of them.
    let out = real.run("tiny.gguf", &["-c", "-p", "/context"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("using the llama-server already running"), "{}", text(&out.stderr));
    let breakdown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = breakdown["parts"].as_array().unwrap().iter().find(|p| p["name"] == "messages").unwrap().clone();
    assert_eq!(messages["exact"], true, "{breakdown:#}");
    let export = real.sandbox.bare_command(&["export", &session]).output().await.unwrap();
    let port = real.kept_port();
    let mut expected = 0;
    for line in text(&export.stdout).lines().skip(1) {
        let line: Value = serde_json::from_str(line).unwrap();
        expected += real.tokenize(port, &exported_text(&line)).await;
    }
    assert_eq!(messages["tokens"].as_u64().unwrap(), expected as u64, "{breakdown:#}");

    let template =
        breakdown["parts"].as_array().unwrap().iter().find(|p| p["name"] == "chat template and framing").unwrap();
    assert!(template["tokens"].as_u64().unwrap() > 0, "the template's own text is estimated: {breakdown:#}");

    // A compaction, summarised by the same model, of a conversation longer than the part kept.
    for turn in 0..4 {
        let prompt = format!(
            "Part {turn}: {}",
            "Here is more about the parser we are writing and what it must accept. ".repeat(40)
        );
        let out = real.run("tiny.gguf", &["-c", "-p", &prompt, "--output-format", "json"]).await;
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = real.run("tiny.gguf", &["-c", "-p", "/compact", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}\n{}", text(&out.stderr), text(&out.stdout));
    let lines = json_lines(&out);
    assert!(lines.iter().any(|l| l["type"] == "compaction"), "{}", text(&out.stdout));

    // A model whose every answer opens a tool call that does not parse: the turn fails with the
    // reason, and the session goes on with the next prompt.
    let out = real
        .run("tiny-toolcall.gguf", &["-c", "--mode", "edit", "-p", "List the files here.", "--output-format", "json"])
        .await;
    let bad = json_result(&out);
    assert_eq!(bad["is_error"], true, "{bad}\n{}", text(&out.stderr));
    let out = real.run("tiny.gguf", &["-c", "-p", "Go on.", "--output-format", "json"]).await;
    let after = json_result(&out);
    assert!(out.status.success() && after["is_error"] == false, "{after}\n{}", text(&out.stderr));
    assert_eq!(after["session_id"], session.as_str(), "the same session");

    // With keep off, the next cairn takes the kept server over and stops it at exit.
    let config = real.sandbox.home.path().join("config.toml");
    let kept = std::fs::read_to_string(&config).unwrap().replace("keep = true", "keep = false");
    std::fs::write(&config, kept).unwrap();
    let out = real.run("tiny.gguf", &["-c", "-p", "Last one.", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    servers_of(&real.model("tiny-toolcall.gguf")).into_iter().for_each(kill_group);
    assert!(wait_gone(&running), "the server is gone after exit: {:?}", servers_of(&tiny));
}

#[tokio::test]
#[ignore = "needs llama-server and the tiny models: CAIRN_LOCAL_LLM=DIR cargo test -- --ignored local_server"]
async fn local_server_without_keep_is_gone_when_cairn_exits() {
    let real = Real::new(8192, false);
    let tiny = real.model("tiny.gguf");
    let child = real
        .sandbox
        .bare_command(&["--local", &tiny, "--mode", "ask", "-p", "Hello.", "--output-format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Seen while cairn runs…
    let until = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while seen.is_empty() && Instant::now() < until {
        seen = servers_of(&tiny);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(seen.len(), 1, "one server while cairn ran");
    // …and gone when it is done.
    assert!(wait_gone(&seen), "still running: {:?}", servers_of(&tiny));
}

#[tokio::test]
#[ignore = "needs llama-server and the tiny models: CAIRN_LOCAL_LLM=DIR cargo test -- --ignored local_server"]
async fn local_server_reuses_the_previous_prefix_on_every_request_cairn_did_not_rewrite() {
    let real = Real::new(8192, true);
    let tiny = real.model("tiny.gguf");
    let mut previous: Option<u64> = None;
    let (mut reused, mut rewritten) = (0, 0);
    // cairn rewrote what it sent since the last request (a compaction landing, a stage): it may
    // land after a run's last request, so it carries to the next run.
    let mut rewrote = false;
    for turn in 0..20 {
        // Prompts long enough that the window forces a rewrite somewhere in the 20 turns.
        let prompt = format!("Turn {turn}. {}", "Explain how the borrow checker treats this loop and why. ".repeat(25));
        let mut args = vec!["--mode", "ask", "-p", prompt.as_str(), "--output-format", "stream-json"];
        if turn > 0 {
            args.insert(0, "-c");
        }
        let out = real.run("tiny.gguf", &args).await;
        assert!(out.status.success(), "turn {turn}: {}\n{}", text(&out.stderr), text(&out.stdout));
        for line in json_lines(&out) {
            match line["type"].as_str() {
                Some("context_stage") => rewrote = true,
                Some("compaction") if line["phase"] == "finished" => rewrote = true,
                Some("context") => {
                    let usage = &line["usage"];
                    let cache_n = usage["cache_read_input_tokens"].as_u64().unwrap();
                    let prompt_n = usage["input_tokens"].as_u64().unwrap();
                    eprintln!(
                        "turn {turn:>2}: cache_n {cache_n:>5}  prompt_n {prompt_n:>5}  after a rewrite: {rewrote}"
                    );
                    if let Some(before) = previous {
                        if rewrote {
                            rewritten += 1;
                            assert!(
                                cache_n < before,
                                "a rewrite re-prefills from where it changed: {cache_n} of {before}"
                            );
                        } else {
                            reused += 1;
                            assert!(
                                cache_n >= before,
                                "turn {turn}: the server reused {cache_n} tokens, but the previous request's {before} were all unchanged"
                            );
                        }
                    }
                    previous = Some(cache_n + prompt_n);
                    rewrote = false;
                }
                _ => {}
            }
        }
        let result = json_lines(&out).into_iter().find(|l| l["type"] == "result").unwrap();
        assert_eq!(result["cache"]["unexpected_breaks"], 0, "turn {turn}: {result}");
    }
    assert!(reused >= 15, "{reused} requests reused the prefix");
    assert!(rewritten >= 1, "the window forced cairn to rewrite at least once ({rewritten})");
    servers_of(&tiny).into_iter().for_each(kill_group);
}
