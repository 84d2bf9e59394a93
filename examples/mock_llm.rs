//! Runs the scripted mock LLM server standalone, for trying cairn by hand without a real model.
//!
//! ```text
//! cargo run --example mock_llm -- --script script.json [--port N] [--chunk-delay-ms N]
//!     [--context-window N] [--no-cache] [--dump DIR]
//! ANTHROPIC_BASE_URL=<printed url> ANTHROPIC_API_KEY=x cairn
//! ```
//!
//! The script is a JSON array of replies, e.g.
//! `[{"turn": {"text": "hi"}}, {"fault": "overloaded"}, {"turn": {"tool_calls": [{"name": "glob",
//! "arguments": {"pattern": "*.rs"}}]}}]`. Once it runs out, every request gets a plain text turn.
//! For subagents, an object routes requests by their system prompt: `{"replies": […], "routes":
//! [{"key": "find the callers", "replies": […]}]}` answers a request whose system prompt
//! contains `find the callers` (a subagent's, whose brief names its job) from that route.
//! It reports usage as a provider's prompt cache would (`--no-cache` turns that off), and with
//! `--context-window N` it refuses requests that would not fit N tokens, as a real model does.
//! `--dump DIR` writes each request's body to `DIR/NNN.json`, to see exactly what was sent.
//! `--summarise` answers every request as a summariser, deterministically: exactly as long as
//! the request asks ("at most about N tokens", at four characters a token), as `cairn context
//! replay --summaries scripted` answers, built from what it was sent — so a replay with
//! `--summaries model` against it (`SUMMARIES=http benches/context-costs.sh`) makes its
//! summary calls over real HTTP, checked by the strict mock, and prices as the scripted one.
//! A turn may carry `"thinking": "…"`: a signed thinking block (Anthropic), a reasoning item
//! (Responses) or `reasoning_content` (chat completions), which cairn must send back.

#[allow(dead_code, unused_imports)] // the tests use more of the mock than this example does
#[path = "../tests/support/mock_llm.rs"]
mod mock_llm;

use std::net::SocketAddr;
use std::time::Duration;

use mock_llm::{MockLlm, Reply, Script, ScriptFile};

struct Args {
    script: Option<String>,
    port: u16,
    chunk_delay_ms: u64,
    context_window: Option<u64>,
    cache: bool,
    dump: Option<std::path::PathBuf>,
    summarise: bool,
}

const USAGE: &str = "usage: mock_llm [--script FILE.json] [--port N] [--chunk-delay-ms N] [--context-window N] [--no-cache] [--dump DIR] [--summarise]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        script: None,
        port: 0,
        chunk_delay_ms: 0,
        context_window: None,
        cache: true,
        dump: None,
        summarise: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--script" => args.script = Some(value()?),
            "--port" => args.port = value()?.parse().map_err(|e| format!("--port: {e}\n{USAGE}"))?,
            "--chunk-delay-ms" => {
                args.chunk_delay_ms = value()?.parse().map_err(|e| format!("--chunk-delay-ms: {e}\n{USAGE}"))?
            }
            "--context-window" => {
                args.context_window = Some(value()?.parse().map_err(|e| format!("--context-window: {e}\n{USAGE}"))?)
            }
            "--no-cache" => args.cache = false,
            "--dump" => args.dump = Some(value()?.into()),
            "--summarise" => args.summarise = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// A JSON array of replies, or an object with `replies` and `routes` (replies for requests
/// whose system prompt contains a route's `key`: a subagent's, named by its job).
fn load_script(path: &str) -> Result<ScriptFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    if text.trim_start().starts_with('[') {
        let replies: Vec<Reply> =
            serde_json::from_str(&text).map_err(|e| format!("{path} is not a JSON array of replies: {e}"))?;
        return Ok(ScriptFile { replies, routes: Vec::new() });
    }
    serde_json::from_str(&text).map_err(|e| {
        format!("{path} is neither a JSON array of replies nor {{\"replies\": […], \"routes\": […]}}: {e}")
    })
}

#[tokio::main]
async fn main() {
    if let Err(message) = run().await {
        eprintln!("{message}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), String> {
    let args = parse_args()?;
    let file = match &args.script {
        Some(path) => load_script(path)?,
        None => ScriptFile::default(),
    };
    let count = file.replies.len() + file.routes.iter().map(|r| r.replies.len()).sum::<usize>();
    let mut script = Script::from_file(file).chunk_delay_ms(args.chunk_delay_ms);
    if args.cache {
        script = script.simulate_cache();
    }
    if let Some(tokens) = args.context_window {
        script = script.context_window(tokens);
    }
    if args.summarise {
        script = script.responder(mock_llm::summariser::reply);
    }
    let addr = SocketAddr::from(([127, 0, 0, 1], args.port));
    let mock = MockLlm::bind(addr, script).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    if args.summarise {
        println!("mock LLM answering every request as a summariser of the length asked for");
    } else {
        println!("mock LLM serving {count} scripted replies");
    }
    println!("  ANTHROPIC_BASE_URL={}", mock.anthropic_base_url());
    println!("  OPENAI_BASE_URL={}", mock.openai_base_url());
    println!("press Ctrl+C to stop");

    let mut shown = 0;
    let mut ticker = tokio::time::interval(Duration::from_millis(200));
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(()),
            _ = ticker.tick() => {}
        }
        let requests = mock.requests_from(shown);
        for (i, request) in requests.iter().enumerate().map(|(i, r)| (i + shown, r)) {
            let messages = request.messages().len();
            println!("#{} {:?} {} ({messages} messages)", i + 1, request.wire, request.path);
            if let Some(dir) = &args.dump {
                let path = dir.join(format!("{:03}.json", i + 1));
                let body = serde_json::to_string_pretty(&request.body).unwrap_or_default();
                if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, body)) {
                    println!("   cannot write {}: {e}", path.display());
                }
            }
            for problem in &request.problems {
                println!("   problem: {problem}");
            }
        }
        shown += requests.len();
    }
}
