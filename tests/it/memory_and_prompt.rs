//! Memories across sessions and projects, instruction files, and the prompt cache across resume.

use serde_json::json;

use crate::support::cache_check::per_request;
use crate::support::cairn::{Api, Sandbox, json_lines, json_result, last_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

fn system_text(req: &crate::support::mock_llm::RecordedRequest) -> String {
    req.body["system"].to_string()
}

#[tokio::test]
async fn a_memory_saved_in_one_session_reaches_the_next_of_the_same_project_only() {
    let a = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "user", "title": "Indentation", "content": "The user wants tabs, never spaces."}),
            ))
            .turn(Turn::text("Noted."))
            .turn(Turn::text("Second session."))
            .turn(Turn::text("Other project."))
            .turn(Turn::text("After forgetting.")),
    )
    .await;
    let first = a.run(Api::Anthropic, &mock, &["-p", "remember that I want tabs", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let saved = last_result(&mock.requests()[1]);
    assert!(saved.starts_with("Saved memory #") && saved.contains("(user, durable): Indentation"), "{saved}");
    assert!(!system_text(&mock.requests()[1]).contains("never spaces"), "frozen for the rest of the session");

    let second = a.run(Api::Anthropic, &mock, &["-p", "format this file with tabs", "--output-format", "json"]).await;
    assert!(second.status.success());
    let system = system_text(&mock.requests()[2]);
    assert!(
        system.contains("## User Preferences") && system.contains("Indentation: The user wants tabs, never spaces."),
        "{system}"
    );
    // Session recall: the first session's matching message, frozen with the memories.
    assert!(system.contains("## From earlier sessions") && system.contains("remember that I want tabs"), "{system}");

    // Another project, same cairn home: not there.
    let b = tempfile::tempdir().unwrap();
    let mut cmd = a.command(Api::Anthropic, &mock, &["-p", "hello"]);
    cmd.current_dir(b.path());
    assert!(cmd.output().await.unwrap().status.success());
    assert!(!mock.requests()[3].body.to_string().contains("never spaces"));

    let listed = a.bare_command(&["memories", "--json"]).output().await.unwrap();
    let list: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!((list[0]["type"].as_str(), list[0]["class"].as_str()), (Some("user"), Some("durable")));
    let id = list[0]["id"].as_i64().unwrap().to_string();
    let forgot = a.bare_command(&["forget", &id]).output().await.unwrap();
    assert!(forgot.status.success() && text(&forgot.stdout).contains("Forgot memory"), "{}", text(&forgot.stderr));
    assert_eq!(a.bare_command(&["forget", &id]).output().await.unwrap().status.code(), Some(2), "gone");
    a.run(Api::Anthropic, &mock, &["-p", "format again"]).await;
    assert!(!mock.requests()[4].body.to_string().contains("never spaces"));
}

#[tokio::test]
async fn a_global_memory_reaches_every_project_and_a_global_twin_promotes_the_project_one() {
    let a = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "user", "title": "Commit style", "content": "Commit messages in the imperative, no emoji."}),
            ))
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "project", "title": "Build", "content": "Build with just release."}),
            ))
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "user", "title": "Commit style", "content": "Commit messages in the imperative mood, never emoji.", "scope": "global"}),
            ))
            .turn(Turn::text("Noted."))
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "user", "title": "Commit style", "content": "Here commit messages follow Conventional Commits."}),
            ))
            .turn(Turn::text("Other project.")),
    )
    .await;
    // A global save needs approval (here --yes), in every mode.
    let first = a.run(Api::OpenAi, &mock, &["-p", "remember how I write commits, everywhere", "--yes"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let promoted = last_result(&mock.requests()[3]);
    assert!(
        promoted.starts_with("Updated memory #") && promoted.contains("(user, global): Commit style"),
        "{promoted}"
    );

    // Another project: the global memory is there, and a project-scoped twin saved there is
    // that project's own, leaving the global one as it was.
    let b = tempfile::tempdir().unwrap();
    let mut cmd = a.command(Api::OpenAi, &mock, &["-p", "in this repo we use conventional commits"]);
    cmd.current_dir(b.path());
    assert!(cmd.output().await.unwrap().status.success());
    let other = mock.requests()[4].body.to_string();
    assert!(other.contains("never emoji"), "the global memory reaches another project: {other}");
    assert!(!other.contains("just release"), "the project memory does not");
    let local = last_result(&mock.requests()[5]);
    assert!(local.starts_with("Saved memory #") && !local.contains("global"), "{local}");
    let mut in_b = a.bare_command(&["memories", "--json"]);
    in_b.current_dir(b.path());
    let in_b: serde_json::Value = serde_json::from_slice(&in_b.output().await.unwrap().stdout).unwrap();
    assert_eq!(in_b.as_array().unwrap().len(), 2, "its own and the global one: {in_b}");

    let list: serde_json::Value =
        serde_json::from_slice(&a.bare_command(&["memories", "--json"]).output().await.unwrap().stdout).unwrap();
    let global: Vec<_> = list.as_array().unwrap().iter().map(|m| (m["title"].clone(), m["global"].clone())).collect();
    assert_eq!(global.len(), 2, "the twin was updated, not added, and b's own is not here: {list}");
    assert!(list.to_string().contains("never emoji"), "b's project twin left the global memory alone: {list}");
    assert!(global.contains(&(json!("Commit style"), json!(true))) && global.contains(&(json!("Build"), json!(false))));
}

#[tokio::test]
async fn saving_a_twin_updates_the_memory_instead_of_adding_one() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "project", "title": "Test command", "content": "Run the tests with make check"}),
            ))
            .turn(Turn::tool(
                "memory_save",
                json!({"type": "project", "title": "Test command", "content": "Run the tests with make check -j8"}),
            ))
            .turn(Turn::tool("memory_search", json!({"query": "tests make"})))
            .turn(Turn::text("ok")),
    )
    .await;
    assert!(sandbox.run(Api::OpenAi, &mock, &["-p", "x", "--mode", "plan"]).await.status.success());
    let second = last_result(&mock.requests()[2]);
    assert!(second.starts_with("Updated memory #"), "{second}");
    let found = last_result(&mock.requests()[3]);
    assert!(found.contains("Memories:\n- #") && found.contains("make check -j8"), "{found}");
    let list: serde_json::Value =
        serde_json::from_slice(&sandbox.bare_command(&["memories", "--json"]).output().await.unwrap().stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn instruction_files_reach_the_model_and_an_edit_reaches_the_next_request() {
    let sandbox = Sandbox::new();
    sandbox.write("AGENTS.md", "Always run `make lint` before finishing.\n");
    sandbox.write("pkg/CLAUDE.md", "Inside pkg/, prefer iterators.\n");
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .turn(Turn::tool("bash", json!({"command": "echo 'Never touch generated/.' >> AGENTS.md"})))
            .turn(Turn::text("Done.")),
    )
    .await;
    let mut cmd =
        sandbox.command(Api::Anthropic, &mock, &["-p", "add a rule", "--yes", "--trust", "--output-format", "json"]);
    cmd.current_dir(sandbox.project.path().join("pkg"));
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    let first = system_text(&requests[0]);
    assert!(
        first.contains("Always run `make lint` before finishing.") && first.contains("Inside pkg/, prefer iterators.")
    );
    assert!(first.find("AGENTS.md").unwrap() < first.find("pkg/CLAUDE.md").unwrap(), "root first");
    assert!(!first.contains("Never touch generated/."));
    assert!(system_text(&requests[1]).contains("Never touch generated/."), "the edit reached the next request");
    assert_eq!(json_result(&out)["cache"]["unexpected_breaks"], 0, "an edited instruction file is an expected change");
}

#[tokio::test]
async fn a_resumed_session_reads_its_old_prefix_from_cache() {
    let sandbox = Sandbox::new();
    // A real repository, so `git status` (in the environment layer) sees the change below.
    std::fs::remove_dir(sandbox.project.path().join(".git")).unwrap();
    let init =
        std::process::Command::new("git").arg("init").arg("-q").current_dir(sandbox.project.path()).status().unwrap();
    assert!(init.success());
    sandbox.write("a.txt", &"alpha line\n".repeat(400));
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})))
            .turn(Turn::text("It is alpha."))
            .turn(Turn::text("Still alpha.")),
    )
    .await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "read a.txt", "--output-format", "stream-json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let lines = json_lines(&first);
    let id = lines.last().unwrap()["session_id"].as_str().unwrap().to_string();
    let before = per_request(&lines);
    // Something changed in the working tree since: the frozen environment keeps the prefix.
    sandbox.write("b.txt", "new file");
    let resumed = sandbox
        .run(Api::Anthropic, &mock, &["--session", &id, "-p", "and now?", "--output-format", "stream-json"])
        .await;
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let after = per_request(&json_lines(&resumed));
    let (previous_total, _) = before[before.len() - 1];
    let (_, read) = after[0];
    assert!(read + 64 >= previous_total, "the resumed request read {read} of the {previous_total} sent before");
}

/// The provider losing its cache (a restart, an eviction) is nothing the user can act on: it
/// is counted, and listed in `/context`, but not shown as a warning.
#[tokio::test]
async fn a_cache_the_provider_dropped_is_counted_not_warned_about() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", &"alpha line\n".repeat(800));
    let mock = MockLlm::start(
        Script::new()
            .simulate_cache()
            .evict_cache_before(3)
            .turn(Turn::tool("file_read", json!({"path": "a.txt"})))
            .turn(Turn::tool("glob", json!({"pattern": "*"})))
            .turn(Turn::text("Done.")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "look", "--output-format", "stream-json"]).await;
    assert!(out.status.success());
    let lines = json_lines(&out);
    let notices: Vec<_> = lines.iter().filter(|l| l["type"] == "notice").collect();
    assert!(notices.iter().all(|l| !l["text"].as_str().unwrap().contains("cache")), "{notices:?}");
    assert_eq!(lines.last().unwrap()["cache"]["unexpected_breaks"], 1, "still counted");
}
