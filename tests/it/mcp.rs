//! MCP servers end to end: the real binary against the mock model, talking to real MCP servers
//! built on `rmcp` (tests/support/mcp_server.rs) — a child process over stdio and servers over
//! streamable HTTP on loopback. Tools listed and called, large results capped and spilled, a
//! server that dies mid-session, and a large tool set behind `tool_search`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cache_check::{per_request, prompt_in_session, share};
use crate::support::cairn::{Api, Sandbox, json_lines, text, tool_names, tool_results};
use crate::support::mcp_server::{self, HttpServers, stdio_config};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// Not a test: the stdio MCP server the other tests start (the binary re-run on this one).
#[test]
#[ignore = "the stdio MCP server of these tests; serves only when started by them"]
fn stdio_server() {
    if std::env::var_os(mcp_server::STDIO_ENV).is_some() {
        mcp_server::serve_stdio();
    }
}

/// The `tool_result` lines of a stream-json run.
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

/// Every file under CAIRN_HOME/truncations and its size.
fn spilled(sandbox: &Sandbox) -> Vec<(std::path::PathBuf, u64)> {
    sandbox
        .home_files()
        .into_iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "truncations"))
        .map(|p| {
            let len = std::fs::metadata(&p).unwrap().len();
            (p, len)
        })
        .collect()
}

#[tokio::test]
async fn a_stdio_server_is_listed_called_and_its_5_mb_result_is_capped_with_the_whole_on_disk() {
    let sandbox = Sandbox::with_config(&stdio_config("local", 0));
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("mcp__local__echo", json!({"text": "hello"})))
            .turn(Turn::tool("mcp__local__big", json!({"bytes": 5_000_000})))
            .turn(Turn::tool("mcp__local__picture", json!({})))
            .turn(Turn::text("done")),
    )
    .await;
    let out =
        sandbox.run(Api::Anthropic, &mock, &["-p", "use the server", "--yes", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{}", text(&out.stdout));
    let names = tool_names(&requests[0]);
    for tool in ["mcp__local__echo", "mcp__local__big", "mcp__local__crash", "mcp__local__picture"] {
        assert!(names.iter().any(|n| n == tool), "{tool} not offered: {names:?}");
    }
    assert_eq!(tool_results(&requests[1])[0].1, "echo: hello");
    let big = tool_results(&requests[2]).pop().unwrap().1;
    assert!(big.len() <= 50_000 + 2_000, "the request carried {} bytes of the 5 MB result", big.len());
    assert!(big.starts_with("line 0000000 of the big result"), "{}", &big[..200]);
    // An image the server returns reaches the model as an image, beside its description.
    let last = requests[3].messages().last().unwrap().to_string();
    assert!(last.contains("\"type\":\"image\"") && last.contains("image/png"), "{last}");
    assert!(last.contains("a red rectangle") && last.contains("8×6"), "{last}");
    let whole = spilled(&sandbox);
    assert!(whole.iter().any(|(_, len)| *len == 5_000_000), "the full result is not on disk: {whole:?}");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

#[tokio::test]
async fn an_http_server_runs_its_read_only_tools_in_plan_mode_and_refuses_the_others() {
    let servers = HttpServers::start(&[("remote", 0)]).await;
    let sandbox = Sandbox::with_config(&servers.config("remote"));
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("mcp__remote__echo", json!({"text": "over http"})))
            .turn(Turn::tool("mcp__remote__big", json!({"bytes": 10})))
            .turn(Turn::text("planned")),
    )
    .await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "plan", "--mode", "plan", "--yes", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"mcp__remote__echo".to_string()), "{names:?}");
    assert!(names.contains(&"mcp__remote__big".to_string()), "every mode offers the same tools: {names:?}");
    let results = results(&out);
    assert_eq!(results[0]["content"], "echo: over http", "{results:#?}");
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1]["content"].as_str().unwrap().contains("plan mode"), "{results:#?}");
}

#[tokio::test]
async fn a_server_that_dies_mid_session_is_reported_and_the_session_goes_on() {
    let sandbox = Sandbox::with_config(&format!("[mcp]\nretry_after_ms = 0\n{}", stdio_config("local", 0)));
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("mcp__local__crash", json!({})))
            .turn(Turn::tool("mcp__local__echo", json!({"text": "back"})))
            .turn(Turn::text("still here")),
    )
    .await;
    let started = Instant::now();
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "crash it", "--yes", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(25), "a dead server held the turn for {:?}", started.elapsed());
    let results = results(&out);
    assert_eq!(results[0]["is_error"], true, "{results:#?}");
    let crashed = results[0]["content"].as_str().unwrap();
    assert!(crashed.contains("did not run") || crashed.contains("connection"), "{crashed}");
    assert_eq!(results[1]["content"], "echo: back", "restarted on demand: {results:#?}");
    assert!(notices(&out).iter().any(|n| n.contains("`local`") && n.contains("stopped")), "{:?}", notices(&out));
    let last = json_lines(&out).pop().unwrap();
    assert_eq!((last["type"].as_str(), last["result"].as_str()), (Some("result"), Some("still here")), "{last}");
}

/// What the model does with prompt `i` of the MCP session: every fourth prompt searches for a
/// tool, calls what it found and answers; the prompts after those call a tool by name and answer;
/// the rest are plain answers.
fn mcp_replies_to_prompt(i: usize) -> Vec<Turn> {
    let answer = Turn::text(format!("answer {i}"));
    match i % 4 {
        0 => vec![
            Turn::tool("tool_search", json!({"query": format!("filler_{:02} records", i % 17)})),
            Turn::tool(
                "tool_call",
                json!({"name": format!("mcp__s{}__filler_{:02}", i % 10, i % 17), "arguments": {"field_0": "x"}}),
            ),
            answer,
        ],
        1 => vec![
            Turn::tool(
                "tool_call",
                json!({"name": format!("mcp__s{}__echo", i % 10), "arguments": {"text": format!("turn {i}")}}),
            ),
            answer,
        ],
        _ => vec![answer],
    }
}

/// Ten servers of twenty tools (nine over HTTP, one a child process over stdio) behind
/// `tool_search`, over a 20-turn session: 20 prompts to one session, each a run of the binary
/// of its own (`--session` from the second on), against one mock whose simulated Anthropic cache
/// lives across the runs. Every request counts, the first — which writes the whole prefix —
/// included; each reads the whole request before it.
#[tokio::test]
async fn ten_servers_of_twenty_tools_go_behind_tool_search_and_the_cache_holds() {
    let names: Vec<String> = (0..9).map(|i| format!("s{i}")).collect();
    let specs: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 17)).collect();
    let servers = HttpServers::start(&specs).await;
    let mut config: String = names.iter().map(|n| servers.config(n)).collect();
    config.push_str(&stdio_config("s9", 17));
    let sandbox = Sandbox::with_config(&config);
    let mut script = Script::new().simulate_cache();
    for i in 0..20 {
        for turn in mcp_replies_to_prompt(i) {
            script = script.turn(turn);
        }
    }
    let mock = MockLlm::start(script).await;
    let mut session: Option<String> = None;
    let mut usage: Vec<(u64, u64)> = Vec::new();
    for i in 0..20 {
        let prompt = format!("prompt {i}: find a tool");
        let before = mock.requests().len();
        let lines = prompt_in_session(&sandbox, Api::Anthropic, &mock, &mut session, &prompt, &["--yes"]).await;
        let turn = per_request(&lines);
        assert_eq!(turn.len(), mcp_replies_to_prompt(i).len(), "prompt {i}: its tool loop and answer");
        let requests = mock.requests();
        if i % 4 == 0 {
            let found = tool_results(&requests[before + 1]).last().unwrap().1.clone();
            let want = format!("filler_{:02}", i % 17);
            assert!(found.contains(&want), "prompt {i}: {found}");
            assert!(found.contains("field_0"), "the schema comes with the match: {found}");
            let called = tool_results(&requests[before + 2]);
            assert!(called.last().unwrap().1.contains(&format!("{want} ran with")), "prompt {i}: {called:?}");
        }
        if i % 4 == 1 {
            // By name, with no search in this run: s9 is the stdio server.
            let echoed = tool_results(&requests[before + 1]).last().unwrap().1.clone();
            assert_eq!(echoed, format!("echo: turn {i}"), "prompt {i}");
        }
        usage.extend(turn);
    }
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let requests = mock.requests();
    assert_eq!(requests.len(), usage.len(), "every request the mock saw is counted");
    let first = tool_names(&requests[0]);
    assert!(first.contains(&"tool_search".to_string()) && first.contains(&"tool_call".to_string()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "200 schemas listed: {first:?}");
    let tools_bytes = requests[0].body["tools"].to_string().len();
    let mcp_bytes: usize = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "tool_search" || t["name"] == "tool_call")
        .map(|t| t.to_string().len())
        .sum();
    // What the MCP servers add stays far within the default budget (4000 tokens at about 4
    // bytes each); the 200 schemas listed would be ~17x the budget.
    assert!(mcp_bytes < 4 * 4_000 / 4, "tool_search and tool_call take {mcp_bytes} bytes");
    // Nothing between two requests — a new run whose servers start in the background, a new
    // prompt, a search, a call — moves the prefix: the tool section and system prompt stay
    // byte-identical and each request reads the whole of the one before.
    for (n, pair) in requests.windows(2).enumerate() {
        assert_eq!(pair[0].body["tools"], pair[1].body["tools"], "the tool section changed at request {}", n + 2);
        assert_eq!(pair[0].body["system"], pair[1].body["system"], "the system prompt changed at request {}", n + 2);
    }
    for (n, pair) in usage.windows(2).enumerate() {
        let ((previous, _), (_, read)) = (pair[0], pair[1]);
        assert!(read >= previous, "request {} read {read} of the {previous} sent before: {usage:?}", n + 2);
    }
    let whole = share(&usage);
    let panel = sandbox.run(Api::Anthropic, &mock, &["-p", "/mcp"]).await;
    let panel: Value = serde_json::from_str(&text(&panel.stdout)).unwrap();
    assert_eq!(panel["offered_as"], "tool_search", "{panel:#}");
    let listed = panel["tokens"].as_u64().unwrap();
    assert!(listed > panel["budget_tokens"].as_u64().unwrap(), "{panel:#}");
    eprintln!(
        "tool section {tools_bytes} bytes, {mcp_bytes} of them for MCP (200 MCP schemas listed would be ~{listed} tokens); cache read share over the whole 20-prompt session, {} requests: {whole:.4}",
        usage.len()
    );
    assert!(whole >= 0.95, "whole-session cache share {whole:.3}: {usage:?}");
}

#[tokio::test]
async fn headless_slash_mcp_shows_servers_tools_and_tokens_and_imports_mcp_json_on_request() {
    let servers = HttpServers::start(&[("imported", 0)]).await;
    let sandbox = Sandbox::with_config(&stdio_config("local", 0));
    sandbox.write(
        ".mcp.json",
        &json!({"mcpServers": {"imported": {"type": "http", "url": format!("http://{}/imported", servers.addr)}}})
            .to_string(),
    );
    let mock = MockLlm::start(Script::new()).await;
    let panel = |out: &std::process::Output| -> Value {
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
    };

    let shown = panel(&sandbox.run(Api::Anthropic, &mock, &["-p", "/mcp"]).await);
    let local = &shown["servers"][0];
    assert_eq!((local["name"].as_str(), local["state"].as_str()), (Some("local"), Some("connected")), "{shown:#}");
    let echo = local["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__local__echo").unwrap();
    assert_eq!(echo["read_only"], true);
    assert!(local["tokens"].as_u64().unwrap() > 20, "{shown:#}");
    assert_eq!(shown["offered_as"], "listed");
    // The project proposes a server; nothing of it runs until the user imports it.
    assert_eq!(shown["proposed"], json!(["imported"]));
    assert_eq!(shown["servers"].as_array().unwrap().len(), 1);

    let imported = panel(&sandbox.run(Api::Anthropic, &mock, &["-p", "/mcp import"]).await);
    assert!(imported["message"].as_str().unwrap().starts_with("imported imported into"), "{imported:#}");
    let names: Vec<_> =
        imported["servers"].as_array().unwrap().iter().map(|s| (s["name"].clone(), s["state"].clone())).collect();
    assert!(names.contains(&(json!("imported"), json!("connected"))), "{names:?}");
    assert!(sandbox.read(".cairn/settings.local.toml").contains("[mcp_servers.imported]"));

    let off = panel(&sandbox.run(Api::Anthropic, &mock, &["-p", "/mcp off nosuch"]).await);
    assert!(off["message"].as_str().unwrap().contains("the servers are imported, local"), "{off:#}");
    assert!(mock.requests().is_empty(), "/mcp never asks the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_overlay_shows_a_server_and_switches_it_off_and_on() {
    let sandbox = Sandbox::with_config(&stdio_config("local", 0));
    let mock = MockLlm::start(Script::new()).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("/mcp");
        screen.send("\r");
        let shown = screen.wait("the server connected", |s| s.contains("MCP servers") && s.contains("connected"));
        assert!(shown.contains("mcp__local__echo (read-only)") && shown.contains("4 tools"), "{shown}");
        assert!(shown.contains("stdio: sh -c"), "{shown}");
        screen.send("\r");
        screen.wait("the server off", |s| s.contains("local  off") && s.contains("local is off"));
        screen.send("\r");
        screen.wait("the server back", |s| s.contains("local  connected"));
        screen.send("\x1b");
        // A key right after Esc would read as Alt+key.
        std::thread::sleep(Duration::from_millis(300));
        screen.wait("the overlay closed", |s| !s.contains("MCP servers"));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}

#[tokio::test]
async fn an_http_header_names_an_environment_variable_whose_value_is_sent_and_never_stored() {
    const SECRET: &str = "mcp-secret-7f3a9c1e5b";
    let servers = HttpServers::start(&[("remote", 0)]).await;
    let sandbox = Sandbox::with_config(&format!(
        "{}headers = {{ Authorization = \"Bearer ${{TEST_MCP_TOKEN}}\" }}\n",
        servers.config("remote")
    ));
    // The server echoes the secret back: it reaches the model (a tool result), but nothing
    // cairn writes down keeps it.
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("mcp__remote__echo", json!({"text": SECRET}))).turn(Turn::text("done")),
    )
    .await;
    let out = sandbox
        .command(Api::Anthropic, &mock, &["-p", "call it", "--output-format", "stream-json"])
        .env("TEST_MCP_TOKEN", SECRET)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(servers.authorizations.lock().unwrap().iter().any(|a| a == &format!("Bearer {SECRET}")));
    assert!(results(&out)[0]["content"].as_str().unwrap().starts_with("echo: "), "{}", text(&out.stdout));
    let mut stored_result = false;
    for file in sandbox.home_files().into_iter().chain([sandbox.root().join(".cairn/settings.local.toml")]) {
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET), "{} holds the header's value", file.display());
        stored_result |= text.contains("echo: ");
    }
    assert!(stored_result, "the echoed result was stored (redacted)");
}

/// A call of a tool of a server still starting says so (not "no such tool"): its tools are
/// listed only once it has answered.
#[tokio::test]
async fn a_call_to_a_server_still_starting_says_it_is_starting() {
    let config = stdio_config("slow", 0).replace("'exec \"$0\"", "'sleep 4; exec \"$0\"");
    assert!(config.contains("sleep 4"), "{config}");
    let sandbox = Sandbox::with_config(&format!("{config}\n[mcp]\nstartup_wait_ms = 100\n"));
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("mcp__slow__echo", json!({"text": "hi"}))).turn(Turn::text("later, then")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "use the server", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    assert!(!tool_names(&requests[0]).iter().any(|n| n.starts_with("mcp__")), "not offered while starting");
    let (_, result, _) = tool_results(&requests[1]).pop().unwrap();
    assert!(
        result.contains("`mcp__slow__echo` is a tool of the MCP server `slow`, which is still starting"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_approval_is_remembered_for_the_whole_server_after_tab() {
    let sandbox = Sandbox::with_config(&stdio_config("local", 1));
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("mcp__local__big", json!({"bytes": 10})))
            .turn(Turn::tool("mcp__local__filler_00", json!({})))
            .turn(Turn::text("both ran")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("call the server");
        screen.send("\r");
        let asked = screen.wait("the dialog", |s| s.contains("Allow mcp__local__big?"));
        assert!(asked.contains("This call runs the MCP tool `big` of the server `local`."), "{asked}");
        assert!(asked.contains("a/p remember: mcp__local__big"), "the tool's rule is offered: {asked}");
        // A dialog that opens right after typing ignores answer keys for a moment.
        std::thread::sleep(Duration::from_millis(800));
        screen.send("\t");
        screen.wait("the server-wide rule", |s| s.contains("a/p remember: mcp__local "));
        screen.send("p");
        // The other tool of the same server runs without asking.
        let done = screen.wait("the turn to end", |s| s.contains("both ran"));
        assert!(!done.contains("Allow mcp__local__filler_00?"), "{done}");
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let saved = sandbox.read(".cairn/settings.local.toml");
    assert!(saved.contains("\"mcp__local\""), "{saved}");
    assert_eq!(tool_results(&mock.requests()[2]).pop().unwrap().1, "filler_00 ran with {}");
}

/// Whether process `pid` still runs (a zombie has ended; it only waits to be reaped).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

#[tokio::test]
async fn a_stdio_servers_helpers_end_with_cairn() {
    // The server's shell starts a helper of its own, as `npx` and wrappers do.
    let exe = std::env::current_exe().unwrap();
    let config = format!(
        "[mcp_servers.local]\ncommand = \"sh\"\nargs = [\"-c\", 'sleep 300 & echo $! > helper.pid; \"$0\" --ignored --exact mcp::stdio_server --nocapture --test-threads=1 3>&1 1>&2', \"{}\"]\nenv = {{ {} = \"1\" }}\n",
        exe.display(),
        mcp_server::STDIO_ENV
    );
    let sandbox = Sandbox::with_config(&config);
    let mock = MockLlm::start(
        Script::new().turn(Turn::tool("mcp__local__echo", json!({"text": "hi"}))).turn(Turn::text("ok")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "use the server", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(results(&out)[0]["content"], "echo: hi");
    let helper: i32 = sandbox.read("helper.pid").trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(helper) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let alive = running(helper);
    if alive {
        // SAFETY: a plain signal to the helper this test's server started, so none outlives the test.
        unsafe { libc::kill(helper, libc::SIGKILL) };
    }
    assert!(!alive, "the server's helper {helper} outlived cairn");
}
