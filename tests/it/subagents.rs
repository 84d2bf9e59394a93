//! Subagents through the real binary against the mock: two `task` calls of one reply run at once,
//! each child sees the parent brief and only its type's tools, the parent gets the reports and
//! nothing of what the children read, the children's sessions are stored under the parent's,
//! and a child never does more than the session allows.

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_lines, json_result, text, tool_names, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, RecordedRequest, Script, Turn};

/// A subagent's requests carry this in their system prompt.
const CHILD_MARK: &str = "# You are a subagent";

fn is_child(r: &RecordedRequest) -> bool {
    r.system().contains(CHILD_MARK)
}

fn task(description: &str, prompt: &str, agent_type: &str) -> MockCall {
    MockCall::new("task", json!({"description": description, "prompt": prompt, "agent_type": agent_type}))
}

fn two_explorers() -> Script {
    Script::new()
        // Slow enough that both children's first requests are out before either is answered.
        .chunk_delay_ms(40)
        .turn(Turn::tools(vec![
            task("find alpha users", "Find every use of alpha_fn and list them as path:line.", "explore"),
            task("find beta users", "Find every use of beta_fn and list them as path:line.", "explore"),
        ]))
        .route(
            "find alpha users",
            [
                Turn::tool("grep", json!({"pattern": "alpha_fn"})).into(),
                Turn::tool("file_read", json!({"path": "src/a.rs"})).into(),
                Turn::text("ALPHA REPORT: alpha_fn is used in src/a.rs:2.").into(),
            ],
        )
        .route(
            "find beta users",
            [
                Turn::tool("grep", json!({"pattern": "beta_fn"})).into(),
                Turn::tool("file_read", json!({"path": "src/b.rs"})).into(),
                Turn::text("BETA REPORT: beta_fn is used in src/b.rs:2.").into(),
            ],
        )
        .turn(Turn::text("Both are used once."))
}

#[tokio::test]
async fn two_tasks_run_at_once_and_the_parent_gets_only_their_reports() {
    // `explore` asks for the fast model: a cheaper one for searching is this one line. Priced so
    // that the run's cost is the children's input alone: a dollar per million tokens of it.
    let sandbox = Sandbox::with_config(
        "[subagents]\nfast_model = \"scout-1\"\n\
         [models.\"scout-1\"]\ncontext_window = 200000\ninput_price = 1.0\noutput_price = 0.0\n\
         [models.\"claude-sonnet-4-5\"]\ninput_price = 0.0\noutput_price = 0.0\ncache_read_price = 0.0\ncache_write_price = 0.0\n",
    );
    sandbox.write("src/a.rs", "// SECRET_ALPHA_BODY\nfn x() { alpha_fn(); }\n");
    sandbox.write("src/b.rs", "// SECRET_BETA_BODY\nfn y() { beta_fn(); }\n");
    let mock = MockLlm::start(two_explorers()).await;
    let prompt = "Where are alpha_fn and beta_fn used?";
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", prompt, "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let requests = mock.requests();
    assert_eq!(requests.len(), 8, "two parent requests and three per child");

    // Concurrently: the two children's requests interleave.
    let of = |key: &str| -> Vec<usize> {
        requests.iter().enumerate().filter(|(_, r)| is_child(r) && r.system().contains(key)).map(|(i, _)| i).collect()
    };
    let (alpha, beta) = (of("find alpha users"), of("find beta users"));
    assert_eq!((alpha.len(), beta.len()), (3, 3));
    assert!(alpha[0] < beta[2] && beta[0] < alpha[2], "not interleaved: alpha {alpha:?}, beta {beta:?}");

    for r in requests.iter().filter(|r| is_child(r)) {
        // The parent brief: the user's request, the job, the session's facts.
        let system = r.system();
        assert!(system.contains("## Parent brief") && system.contains(prompt), "{system}");
        assert!(system.contains("Agent: main agent (depth 0)"), "the parent's facts: {system}");
        assert!(system.contains("## Your type: explore"));
        // Only its type's tools: read-only, no delegation, no task list, no writes.
        assert_eq!(tool_names(r), ["file_read", "glob", "grep", "bash", "memory_search", "web_fetch"]);
        assert_eq!(r.body["model"], "scout-1");
    }
    let parent: Vec<&RecordedRequest> = requests.iter().filter(|r| !is_child(r)).collect();
    assert_eq!(parent.len(), 2);
    assert!(tool_names(parent[0]).contains(&"task".to_string()));
    assert_eq!(parent[0].body["model"], "claude-sonnet-4-5", "the parent keeps the session's model");
    let results = tool_results(parent[1]);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].1, "ALPHA REPORT: alpha_fn is used in src/a.rs:2.");
    assert_eq!(results[1].1, "BETA REPORT: beta_fn is used in src/b.rs:2.");
    let body = parent[1].body.to_string();
    assert!(
        !body.contains("SECRET_ALPHA_BODY") && !body.contains("SECRET_BETA_BODY"),
        "the children's tool output stays out of the parent's context"
    );

    // Usage: the parent's own requests and the children's, counted together.
    let lines = json_lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["usage"]["requests"], 8);
    assert_eq!(result["turns"], 2, "turns are the parent's own requests");
    let finished: Vec<&Value> = lines.iter().filter(|l| l["type"] == "subagent" && l["phase"] == "finished").collect();
    assert_eq!(finished.len(), 2);
    let child_input: u64 = finished.iter().map(|f| f["usage"]["input_tokens"].as_u64().unwrap()).sum();
    let parent_input: u64 =
        lines.iter().filter(|l| l["type"] == "context").map(|l| l["usage"]["input_tokens"].as_u64().unwrap()).sum();
    assert_eq!(result["usage"]["input_tokens"].as_u64().unwrap(), parent_input + child_input);
    // And so is the cost: the children's, at their model's price.
    let cost = result["cost_usd"].as_f64().expect("priced");
    assert!((cost - child_input as f64 / 1e6).abs() < 1e-9, "cost {cost} for {child_input} child input tokens");
    assert!(lines.iter().any(|l| l["type"] == "subagent" && l["phase"] == "tool_started" && l["tool"] == "grep"));

    // The children's sessions are stored under the parent's, and exportable.
    let parent_id = result["session_id"].as_str().unwrap().to_string();
    let list = sandbox.run(Api::Anthropic, &mock, &["sessions", "--json"]).await;
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[0]["id"], parent_id.as_str(), "the parent first, its children after it");
    let titles: Vec<&str> = list[1..].iter().map(|s| s["title"].as_str().unwrap()).collect();
    assert_eq!(titles.len(), 2);
    assert!(titles.contains(&"find alpha users") && titles.contains(&"find beta users"), "{titles:?}");
    for child in &list[1..] {
        assert_eq!(child["parent"], parent_id.as_str());
        assert_eq!(child["agent_type"], "explore");
    }
    let human = sandbox.run(Api::Anthropic, &mock, &["sessions"]).await;
    assert!(text(&human.stdout).contains("↳ explore agent: find alpha users"), "{}", text(&human.stdout));
    let child_id = list[1]["id"].as_str().unwrap();
    let export = sandbox.run(Api::Anthropic, &mock, &["export", child_id]).await;
    assert!(export.status.success(), "{}", text(&export.stderr));
    assert!(text(&export.stdout).contains("SECRET_"), "the child's own session holds what it read");

    // --resume continues the parent, never a child (the children were active after it).
    mock.push(Turn::text("Still both used once."));
    let resumed = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "and now?", "--output-format", "json"]).await;
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert_eq!(json_result(&resumed)["session_id"], parent_id.as_str());
}

#[tokio::test]
async fn a_child_of_a_plan_mode_session_cannot_write_even_with_yes() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![task("write notes", "Write notes.txt saying hi.", "general")]))
            .route(
                "write notes",
                [
                    Turn::tool("file_write", json!({"path": "notes.txt", "content": "hi\n"})).into(),
                    Turn::text("I could not write it: plan mode.").into(),
                ],
            )
            .turn(Turn::text("The subagent could not write.")),
    )
    .await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "make notes", "--mode", "plan", "--yes", "--output-format", "json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!sandbox.exists("notes.txt"));
    let children: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_child).collect();
    assert_eq!(children.len(), 2);
    assert!(!tool_names(&children[0]).contains(&"file_write".to_string()), "plan mode offers no writes");
    let refused = tool_results(&children[1]);
    assert!(refused[0].2 && refused[0].1.contains("plan mode"), "{refused:?}");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    assert_eq!(json_result(&out)["usage"]["requests"], 4);
}

#[tokio::test]
async fn headless_rules_answer_a_childs_approvals_deny_without_yes_and_allow_with_it() {
    for (yes, written) in [(false, false), (true, true)] {
        let sandbox = Sandbox::new();
        let mock = MockLlm::start(
            Script::new()
                .turn(Turn::tools(vec![task("write notes", "Write notes.txt saying hi.", "general")]))
                .route(
                    "write notes",
                    [
                        Turn::tool("file_write", json!({"path": "notes.txt", "content": "hi\n"})).into(),
                        Turn::text("Done as far as allowed.").into(),
                    ],
                )
                .turn(Turn::text("Finished.")),
        )
        .await;
        let mut args = vec!["-p", "make notes", "--output-format", "json"];
        if yes {
            args.push("--yes");
        }
        let out = sandbox.run(Api::OpenAi, &mock, &args).await;
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(sandbox.exists("notes.txt"), written, "--yes: {yes}");
        let children: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_child).collect();
        assert!(tool_names(&children[0]).contains(&"file_write".to_string()), "general may edit in edit mode");
        let result = &tool_results(&children[1])[0].1;
        if !yes {
            assert!(result.contains("without --yes"), "{result}");
        }
        assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    }
}

#[tokio::test]
async fn a_subagent_cannot_start_its_own_by_default() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".cairn/agents/lead.md",
        "---\nname: lead\ndescription: Delegates further\ntools: file_read, task\n---\nDelegate.\n",
    );
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![task("lead the search", "Find things, delegating.", "lead")]))
            .route(
                "lead the search",
                [
                    Turn::tools(vec![task("deeper", "Go deeper.", "explore")]).into(),
                    Turn::text("No deeper help was possible.").into(),
                ],
            )
            .turn(Turn::text("Done.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "go", "--trust", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let children: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_child).collect();
    assert_eq!(children.len(), 2, "no grandchild ran");
    assert_eq!(tool_names(&children[0]), ["file_read"], "no `task` past the depth limit");
    let refused = &tool_results(&children[1])[0];
    assert!(refused.2 && refused.1.contains("no tool named `task`"), "{refused:?}");
}

#[tokio::test]
async fn a_failing_subagent_is_reported_to_the_parent_as_an_error_and_the_turn_goes_on() {
    use crate::support::mock_llm::{Fault, Reply};
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                task("find alpha users", "Find every use of alpha_fn.", "explore"),
                task("find beta users", "Find every use of beta_fn.", "explore"),
            ]))
            // The provider refuses the first child's request outright (not a fault worth a retry).
            .route(
                "find alpha users",
                [Reply::Fault(Fault::Status {
                    code: 400,
                    retry_after: None,
                    body: Some(json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad request for alpha"}})),
                })],
            )
            .route("find beta users", [Turn::text("BETA REPORT: none found.").into()])
            .turn(Turn::text("One search failed; beta_fn is unused.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "find them", "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "the parent's turn goes on: {}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let parent: Vec<RecordedRequest> = mock.requests().into_iter().filter(|r| !is_child(r)).collect();
    assert_eq!(parent.len(), 2);
    let results = tool_results(&parent[1]);
    assert!(results[0].2, "the failed child's result is an error: {results:?}");
    assert!(
        results[0].1.contains("the subagent failed") && results[0].1.contains("bad request for alpha"),
        "it says why: {results:?}"
    );
    assert_eq!((results[1].1.as_str(), results[1].2), ("BETA REPORT: none found.", false));
    let lines = json_lines(&out);
    let failed = lines.iter().find(|l| l["type"] == "subagent" && l["phase"] == "finished" && l["outcome"] == "failed");
    assert!(failed.is_some(), "stream-json says which one failed");
    assert_eq!(lines.last().unwrap()["result"], "One search failed; beta_fn is unused.");
}

/// In the terminal: two subagents of one message, each one cell; the editing one's approval is
/// the parent's dialog, labelled with it; Esc stops the one still at work, and the parent's next
/// request says it was interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_terminal_a_childs_dialog_is_labelled_and_esc_stops_the_one_still_working() {
    use crate::support::mock_llm::{Fault, Reply};
    use crate::support::pty::Screen;
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![
                task("write notes", "Write notes.txt saying hi.", "general"),
                task("find beta users", "Find every use of beta_fn.", "explore"),
            ]))
            .route(
                "write notes",
                [
                    Turn::tool("file_write", json!({"path": "notes.txt", "content": "hi\n"})).into(),
                    Turn::text("NOTES REPORT: notes.txt written.").into(),
                ],
            )
            // Part of an answer, then nothing: only an interrupt ends it.
            .route("find beta users", [Reply::Fault(Fault::Stall)])
            .turn(Turn::text("Understood: the search was stopped.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("make notes and find beta_fn");
        screen.send("\r");
        let dialog = screen.wait("the child's dialog", |s| {
            s.contains("Allow file_write?") && s.contains("asked by subagent general · write notes")
        });
        assert!(dialog.contains("explore agent  find beta users"), "the other one is at work beside it:\n{dialog}");
        // A dialog that opens right after typing ignores answer keys for a moment.
        std::thread::sleep(std::time::Duration::from_millis(800));
        screen.send("y");
        let done = screen.wait("the first report", |s| {
            s.contains("✓ general agent  write notes") && s.contains("NOTES REPORT: notes.txt written.")
        });
        assert!(done.contains("◐ explore agent  find beta users"), "{done}");
        screen.send("\x1b");
        let stopped = screen.wait("the interrupt", |s| s.contains("✗ explore agent  find beta users"));
        assert!(stopped.contains("interrupted the subagent"), "{stopped}");
        screen.type_text("what happened?");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Understood: the search was stopped."));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    assert_eq!(sandbox.read("notes.txt"), "hi\n");
    let parent: Vec<RecordedRequest> = mock.requests().into_iter().filter(|r| !is_child(r)).collect();
    assert_eq!(parent.len(), 2);
    let results = tool_results(&parent[1]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].1, "NOTES REPORT: notes.txt written.");
    assert!(results[1].2 && results[1].1.contains("interrupted the subagent"), "{results:?}");
}

/// "Find where `price_of` is used across 30 files", scripted both ways: the parent doing it
/// (a grep, then all thirty files read in one message) and the parent handing it to an
/// `explore` subagent that does the same. The parent's largest request is what delegation saves.
#[tokio::test]
async fn delegating_a_search_across_30_files_keeps_the_parents_largest_request_small() {
    use crate::support::cache_check::per_request;
    fn project() -> Sandbox {
        let sandbox = Sandbox::new();
        for i in 0..30 {
            let body: String = (0..60)
                .map(|l| match l {
                    7 => format!("    let total = price_of(&item_{i}) * quantity;\n"),
                    _ => format!("    let value_{l} = compute_{i}_{l}(input, {l}); // step {l} of module {i}\n"),
                })
                .collect();
            sandbox.write(&format!("src/m{i:02}.rs"), &format!("pub fn run_{i}(input: u32) {{\n{body}}}\n"));
        }
        sandbox
    }
    let reads = || -> Turn {
        Turn::tools((0..30).map(|i| MockCall::new("file_read", json!({"path": format!("src/m{i:02}.rs")}))).collect())
    };
    let answer =
        "price_of is used once in each of src/m00.rs … src/m29.rs, at line 9, as `price_of(&item_N) * quantity`.";
    let largest = |out: &std::process::Output| per_request(&json_lines(out)).iter().map(|r| r.0).max().unwrap();
    let total = |out: &std::process::Output| {
        let lines = json_lines(out);
        let u = &lines.last().unwrap()["usage"];
        ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
            .iter()
            .map(|k| u[*k].as_u64().unwrap())
            .sum::<u64>()
    };

    let alone = project();
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .turn(Turn::tool("grep", json!({"pattern": "price_of"})))
            .turn(reads())
            .turn(Turn::text(answer)),
    )
    .await;
    let prompt = "Find where price_of is used across the project, and how.";
    let out = alone.run(Api::Anthropic, &mock, &["-p", prompt, "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let (without, without_total) = (largest(&out), total(&out));

    let delegating = project();
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .turn(Turn::tools(vec![task(
                "find price_of users",
                "Find every use of price_of and how it is used; list path:line.",
                "explore",
            )]))
            .route(
                "find price_of users",
                [Turn::tool("grep", json!({"pattern": "price_of"})).into(), reads().into(), Turn::text(answer).into()],
            )
            .turn(Turn::text(answer)),
    )
    .await;
    let out = delegating.run(Api::Anthropic, &mock, &["-p", prompt, "--output-format", "stream-json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let with = largest(&out);
    eprintln!(
        "parent's largest request: {without} tokens alone, {with} tokens with `task` ({:.0} % less); prompt tokens of all requests: {without_total} alone, {} with `task` (children's included)",
        100.0 * (1.0 - with as f64 / without as f64),
        total(&out),
    );
    assert!(with * 3 < without, "delegation keeps the thirty files out of the parent: {with} vs {without}");
}

#[tokio::test]
async fn an_explore_child_of_an_edit_session_runs_read_only_commands_only_even_with_yes() {
    let sandbox = Sandbox::new();
    sandbox.write("src/a.rs", "fn a() {}\n");
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![task("look around", "List the sources.", "explore")]))
            .route(
                "look around",
                [
                    Turn::tools(vec![
                        MockCall::new("bash", json!({"command": "ls src"})),
                        MockCall::new("bash", json!({"command": "touch made_by_child"})),
                    ])
                    .into(),
                    Turn::text("src holds a.rs.").into(),
                ],
            )
            .turn(Turn::text("Done.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "look", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!sandbox.exists("made_by_child"), "explore never runs more than plan mode allows");
    let children: Vec<RecordedRequest> = mock.requests().into_iter().filter(is_child).collect();
    let results = tool_results(&children[1]);
    assert!(!results[0].2 && results[0].1.contains("a.rs"), "a read-only command runs: {results:?}");
    assert!(results[1].2 && results[1].1.contains("plan mode"), "a writing one is refused: {results:?}");
}

#[tokio::test]
async fn with_max_parallel_1_the_children_take_turns() {
    let sandbox = Sandbox::with_config("[subagents]\nmax_parallel = 1\n");
    sandbox.write("src/a.rs", "fn x() { alpha_fn(); }\n");
    sandbox.write("src/b.rs", "fn y() { beta_fn(); }\n");
    let mock = MockLlm::start(two_explorers()).await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "where?", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let order: Vec<bool> =
        mock.requests().iter().filter(|r| is_child(r)).map(|r| r.system().contains("find alpha users")).collect();
    assert_eq!(order, [true, true, true, false, false, false], "one child at a time, in the order called");
}
