//! Several cairn processes on one CAIRN_HOME: no message is ever lost, a write that cannot be
//! saved fails the run loudly, and a second writer on the same session is refused.

use std::time::Duration;

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{Fault, MockCall, MockLlm, RecordedRequest, Reply, Script, Turn};

/// Tool rounds per run, and parallel read-only calls per round.
const ROUNDS: usize = 30;
const CALLS: usize = 8;
/// Runs per instance, one after another.
const RUNS: usize = 3;
const INSTANCES: usize = 4;

/// Keeps calling tools until the request holds `ROUNDS` assistant messages, then answers: the
/// same script for every instance, whatever order their requests arrive in.
fn busy_responder(req: &RecordedRequest) -> Option<Reply> {
    let assistants = req.messages().iter().filter(|m| m["role"] == "assistant").count();
    if assistants < ROUNDS {
        let calls = (0..CALLS).map(|i| MockCall::new("glob", json!({"pattern": format!("none-{assistants}-{i}-*")})));
        Some(Turn::tools(calls.collect()).into())
    } else {
        Some(Turn::text("all rounds done").into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_instances_on_one_database_lose_no_message() {
    let sandbox = Sandbox::new();
    // Instances 0 and 1 share the sandbox's project; 2 and 3 each have a project of their own.
    let others: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    for dir in &others {
        std::fs::create_dir(dir.path().join(".git")).unwrap();
    }
    let mock = MockLlm::start(Script::new().responder(busy_responder)).await;
    let mut instances = Vec::new();
    for i in 0..INSTANCES {
        let dir = match i {
            0 | 1 => sandbox.project.path().to_path_buf(),
            n => others[n - 2].path().to_path_buf(),
        };
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            let mut cmd =
                sandbox.command(Api::Anthropic, &mock, &["-p", "go", "--max-turns", "100", "--output-format", "json"]);
            cmd.current_dir(&dir);
            runs.push(cmd);
        }
        instances.push(tokio::spawn(async move {
            let mut outs = Vec::new();
            for mut cmd in runs {
                let out = tokio::time::timeout(Duration::from_secs(300), cmd.output()).await;
                outs.push(out.expect("a run hung").unwrap());
            }
            outs
        }));
    }
    let mut sessions = Vec::new();
    for instance in instances {
        for out in instance.await.unwrap() {
            assert!(out.status.success(), "a run failed:\n{}", text(&out.stderr));
            let result = json_result(&out);
            assert_eq!(result["is_error"], false, "{result}");
            assert_eq!(result["result"], "all rounds done");
            assert!(!text(&out.stderr).contains("database"), "{}", text(&out.stderr));
            sessions.push(result["session_id"].as_str().unwrap().to_string());
        }
    }
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());

    let db = sandbox.database();
    let expected = 1 + ROUNDS + ROUNDS * CALLS + 1;
    let mut total = 0;
    for id in &sessions {
        let seqs: Vec<i64> = db
            .prepare("SELECT seq FROM messages WHERE session_id = ?1 ORDER BY seq")
            .unwrap()
            .query_map([id], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(seqs, (1..=expected as i64).collect::<Vec<_>>(), "session {id} lost messages");
        let records: i64 =
            db.query_row("SELECT COUNT(*) FROM tool_results WHERE session_id = ?1", [id], |r| r.get(0)).unwrap();
        assert_eq!(records as usize, ROUNDS * CALLS, "session {id} lost tool records");
        total += seqs.len();
    }
    assert_eq!(sessions.len(), INSTANCES * RUNS);
    assert_eq!(total, INSTANCES * RUNS * expected, "every message of every run is stored");
    let projects: i64 = db.query_row("SELECT COUNT(DISTINCT project_id) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(projects, 3);
}

/// Whether the newest prompt of the request contains `word`.
fn user_says(req: &RecordedRequest, word: &str) -> bool {
    crate::support::cairn::user_texts(req).last().is_some_and(|t| t.contains(word))
}

#[tokio::test]
async fn a_second_writer_on_a_session_is_refused_and_a_crash_leaves_no_lock() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().responder(|req| {
        Some(if user_says(req, "wait") { Fault::Unresponsive.into() } else { Turn::text("ok").into() })
    }))
    .await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "start", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = json_result(&first)["session_id"].as_str().unwrap().to_string();

    // A run on the session that waits for the model, holding the session.
    let mut holder =
        sandbox.command(Api::Anthropic, &mock, &["--session", &id, "-p", "wait", "--output-format", "json"]);
    let mut holder = holder.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while mock.requests().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the holding run never reached the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let second =
        sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "intrude", "--output-format", "json"]).await;
    assert_eq!(second.status.code(), Some(1), "{}", text(&second.stderr));
    let stderr = text(&second.stderr);
    let pid = holder.id().unwrap();
    assert!(stderr.contains(&id) && stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert!(stderr.contains("another cairn"), "{stderr}");
    assert_eq!(mock.requests().len(), 2, "the refused run never asked the model");

    // kill -9: the kernel drops the lock with the process.
    holder.start_kill().unwrap();
    holder.wait().await.unwrap();
    let third = sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "again", "--output-format", "json"]).await;
    assert!(third.status.success(), "{:?} {} {}", third.status, text(&third.stdout), text(&third.stderr));

    let db = sandbox.database();
    let users: Vec<String> = db
        .prepare("SELECT content FROM messages WHERE session_id = ?1 AND role = 'user' ORDER BY seq")
        .unwrap()
        .query_map([&id], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(users.len(), 3, "{users:?}");
    assert!(users.iter().all(|u| !u.contains("intrude")), "the refused prompt was never stored: {users:?}");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

#[tokio::test]
async fn a_write_that_cannot_be_saved_fails_the_run() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().responder(|_| Some(Turn::text("an answer to keep").into()))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "hello", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    // From now on the database refuses every assistant message.
    sandbox
        .database()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
             BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
        )
        .unwrap();
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "hello again", "--output-format", "json"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let result = json_result(&out);
    assert_eq!(result["is_error"], true);
    let message = result["result"].as_str().unwrap();
    assert!(message.contains("could not save") && message.contains("disk says no"), "{message}");
}
