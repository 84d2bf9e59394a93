//! Checkpoints and rewinds through the real binary against the mock, in a project that is not
//! a git repository: a scripted session edits two files, writes a new one and runs `bash` that
//! creates, modifies and deletes files; `cairn rewind --code` puts the whole tree back byte for
//! byte, `--conversation` takes the turn out of what is sent (and a resume sends the same),
//! and a file changed by hand since is a conflict left as it is. The same through the
//! interface, typed into a pseudo-terminal: "code and conversation" and "code only".

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cairn::{Api, Sandbox, json_result, text, user_texts};
use crate::support::mock_llm::{MockCall, MockLlm, RecordedRequest, Script, Turn};
use crate::support::pty::Screen;

/// A project that is not a git repository, with untracked files of every kind.
fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::remove_dir(sandbox.project.path().join(".git")).unwrap();
    sandbox.write("src/a.rs", "pub fn a() -> i32 {\n    1\n}\n");
    sandbox.write("src/b.rs", "pub fn b() -> i32 {\n    2\n}\n");
    sandbox.write("notes.txt", "untracked notes\n");
    sandbox.write("old/stale.txt", "stale\n");
    sandbox.write("scripts/run.sh", "#!/bin/sh\necho run\n");
    let root = sandbox.root();
    std::fs::set_permissions(root.join("scripts/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/a.rs", root.join("current")).unwrap();
    sandbox
}

/// Every entry under `root`: kind, permission bits, and the SHA-256 of its content (a link: of
/// its target).
fn tree_hash(root: &Path) -> BTreeMap<String, (char, u32, String)> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, (char, u32, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_str().unwrap().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, ('l', 0, sha256(target.to_str().unwrap().as_bytes())));
            } else if meta.is_dir() {
                out.insert(rel, ('d', mode, String::new()));
                visit(root, &path, out);
            } else {
                out.insert(rel, ('f', mode, sha256(&std::fs::read(&path).unwrap())));
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

fn sha256(bytes: &[u8]) -> String {
    cairn::store::ContentHash::of(bytes).hex()
}

/// The turn that changes things: read both files, edit both, write a new one, then one command
/// that creates, modifies and deletes files and folders, changes a mode and repoints a link.
fn changing_turn(script: Script) -> Script {
    script
        .turn(Turn::tools(vec![
            MockCall::new("file_read", json!({"path": "src/a.rs"})),
            MockCall::new("file_read", json!({"path": "src/b.rs"})),
        ]))
        .turn(Turn::tools(vec![
            MockCall::new("file_edit", json!({"path": "src/a.rs", "old_string": "    1", "new_string": "    10"})),
            MockCall::new("file_edit", json!({"path": "src/b.rs", "old_string": "    2", "new_string": "    20"})),
            MockCall::new("file_write", json!({"path": "src/gen/c.rs", "content": "pub fn c() {}\n"})),
        ]))
        .turn(Turn::tool(
            "bash",
            json!({"command": "set -e; echo made > made.txt; mkdir -p out/deep; printf 'y' > out/deep/y.txt; \
                    printf 'more\\n' >> notes.txt; rm -r old; chmod -x scripts/run.sh; ln -sfn src/b.rs current"}),
        ))
        .turn(Turn::text("Reworked a and b, added c, and ran the build step."))
}

fn session_of(out: &std::process::Output) -> String {
    assert!(out.status.success(), "stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
    json_result(out)["session_id"].as_str().unwrap().to_string()
}

async fn cairn(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    sandbox.bare_command(args).output().await.unwrap()
}

#[tokio::test]
async fn cairn_rewind_code_puts_every_file_back_byte_for_byte_without_git() {
    let sandbox = project();
    let root = sandbox.root();
    let mock = MockLlm::start(changing_turn(Script::new().turn(Turn::text("It is a small Rust project.")))).await;
    let id = session_of(&sandbox.run(Api::Anthropic, &mock, &["-p", "what is here?", "--output-format", "json"]).await);
    let before = tree_hash(&root);

    let out = sandbox
        .run(Api::Anthropic, &mock, &["--session", &id, "--yes", "-p", "rework a and b", "--output-format", "json"])
        .await;
    assert_eq!(session_of(&out), id);
    assert_eq!(sandbox.read("src/a.rs"), "pub fn a() -> i32 {\n    10\n}\n");
    assert!(sandbox.exists("made.txt") && !sandbox.exists("old/stale.txt"));
    assert_ne!(tree_hash(&root), before);

    let list = cairn(&sandbox, &["rewind", &id, "--json"]).await;
    assert!(list.status.success(), "{}", text(&list.stderr));
    let turns: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(turns.as_array().unwrap().len(), 2);
    assert_eq!(turns[1]["prompt"], "rework a and b");
    assert_eq!(turns[0]["files_changed"], 0);
    // Nine files (a, b, c, made, y, notes, stale, run.sh, current); the four folders made or
    // removed are no files, as `/diff` counts them.
    assert_eq!(turns[1]["files_changed"], 9, "{turns}");

    let diff = cairn(&sandbox, &["diff", &id, "--turn", "2"]).await;
    let diff = text(&diff.stdout);
    // A mode change and a link said in cairn's words, not git's raw lines or a one-line file.
    assert!(diff.contains("# scripts/run.sh: mode 100755 → 100644\n"), "{diff}");
    assert!(diff.contains("# current: symbolic link to src/a.rs now points to src/b.rs\n"), "{diff}");
    assert!(!diff.contains("old mode") && !diff.contains("+++ b/current"), "{diff}");
    assert!(diff.contains("--- a/src/b.rs\n+++ b/src/b.rs") && diff.contains("-    2\n+    20\n"), "{diff}");
    assert!(diff.contains("--- /dev/null\n+++ b/src/gen/c.rs\n"), "{diff}");
    assert!(diff.contains("--- a/old/stale.txt\n+++ /dev/null"), "{diff}");

    let out = cairn(&sandbox, &["rewind", &id, "--to", "2", "--code", "--json"]).await;
    assert!(out.status.success(), "stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["scope"], "code");
    assert_eq!(outcome["conversation"], Value::Null);
    assert_eq!(outcome["code"]["conflicts"], json!([]));
    assert!(outcome["code"]["deleted"].as_array().unwrap().contains(&json!("made.txt")), "{outcome}");
    assert_eq!(tree_hash(&root), before, "every file, folder, mode and link as before turn 2");

    // Taken back once: the session's diff no longer shows the turn, and the turn stays in the
    // conversation (code only).
    let after = text(&cairn(&sandbox, &["diff", &id]).await.stdout);
    assert!(after.starts_with("No file changes in this session"), "{after}");
    let listed = text(&cairn(&sandbox, &["rewind", &id]).await.stdout);
    assert!(listed.contains("rework a and b"), "{listed}");
    // `cairn doctor` says what the checkpoints hold and the space they take against the cap.
    let doctor = text(&cairn(&sandbox, &["doctor"]).await.stdout);
    let section = doctor.split("\nCheckpoints\n").nth(1).unwrap_or_else(|| panic!("{doctor}"));
    assert!(section.contains("enabled            yes"), "{section}");
    assert!(section.contains("MB stored of the 1024 MB cap"), "{section}");
    assert!(section.contains("recorded           1 checkpoints, "), "one turn changed files: {section}");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

/// A request's messages with the cache markers taken out (they move to the newest message).
fn messages(req: &RecordedRequest) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    let mut all = Value::Array(req.messages().to_vec());
    strip(&mut all);
    all.as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_conversation_rewind_leaves_the_files_and_the_next_request_and_a_resume_carry_none_of_the_turn() {
    let sandbox = project();
    let root = sandbox.root();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::text("It is a small Rust project."))
            .turn(Turn::tool("bash", json!({"command": "echo built > build.log"})))
            .turn(Turn::text("Built."))
            .turn(Turn::text("Starting over from the first answer."))
            .turn(Turn::text("Still without the build.")),
    )
    .await;
    let id = session_of(&sandbox.run(Api::Anthropic, &mock, &["-p", "what is here?", "--output-format", "json"]).await);
    sandbox.run(Api::Anthropic, &mock, &["--session", &id, "--yes", "-p", "build it", "--output-format", "json"]).await;
    let files = tree_hash(&root);
    assert!(sandbox.exists("build.log"));

    let out = cairn(&sandbox, &["rewind", &id, "--to", "2", "--conversation"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("rewound to before turn 2 (“build it”): conversation only"), "{said}");
    assert!(said.contains("4 messages no longer sent"), "{said}");
    assert_eq!(tree_hash(&root), files, "conversation only: the files stay as they are");

    sandbox.run(Api::Anthropic, &mock, &["--session", &id, "-p", "try again", "--output-format", "json"]).await;
    sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "and now?", "--output-format", "json"]).await;
    let requests = mock.requests();
    let (next, resumed) = (&requests[3], &requests[4]);
    assert_eq!(user_texts(next), ["what is here?", "try again"]);
    let sent = next.body["messages"].to_string();
    assert!(!sent.contains("build it") && !sent.contains("Built."), "nothing of the rewound turn is sent: {sent}");
    let next_messages = messages(next);
    assert_eq!(
        messages(resumed)[..next_messages.len()],
        next_messages[..],
        "the resumed session sends what the rewound one sent, then the new turn"
    );
    assert_eq!(resumed.body["system"], next.body["system"]);
    assert_eq!(resumed.body["tools"], next.body["tools"]);

    // The stored history keeps everything; the export marks what was rewound.
    let export = text(&cairn(&sandbox, &["export", &id]).await.stdout);
    let rewound: Vec<Value> =
        export.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|l| l["rewound"] == true).collect();
    assert_eq!(rewound.len(), 4);
    assert_eq!(rewound[0]["content"], "build it");
    // `context replay` of the export skips them too, and says so: its requests are the ones
    // the session sent (the first, then the two after the rewind).
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &export).unwrap();
    let path = file.path().to_str().unwrap();
    let replay = cairn(&sandbox, &["context", "replay", path, "--window", "32000", "--json", "--offline"]).await;
    assert!(replay.status.success(), "{}", text(&replay.stderr));
    assert!(text(&replay.stderr).contains("4 message(s) a rewind took out"), "{}", text(&replay.stderr));
    let report: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(report["totals"]["requests"], 3, "{}", report["totals"]);
    // Turns are numbered over what is left: the rewound one is gone from the list.
    let turns: Value = serde_json::from_slice(&cairn(&sandbox, &["rewind", &id, "--json"]).await.stdout).unwrap();
    let prompts: Vec<&str> = turns.as_array().unwrap().iter().map(|t| t["prompt"].as_str().unwrap()).collect();
    assert_eq!(prompts, ["what is here?", "try again", "and now?"]);
}

#[tokio::test]
async fn a_file_changed_by_hand_after_the_turn_is_a_conflict_left_as_it_is_until_forced() {
    let sandbox = project();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "printf 'generated\\n' > gen.txt; printf 'x\\n' >> src/b.rs"})))
            .turn(Turn::text("Generated.")),
    )
    .await;
    let id =
        session_of(&sandbox.run(Api::Anthropic, &mock, &["--yes", "-p", "generate", "--output-format", "json"]).await);
    sandbox.write("gen.txt", "my own version\n");

    let out = cairn(&sandbox, &["rewind", &id, "--to", "1", "--code"]).await;
    assert_eq!(out.status.code(), Some(1), "a rewind that left a file is not a success");
    let said = text(&out.stdout);
    assert!(said.contains("1 conflict left as it is"), "{said}");
    assert!(said.contains("conflict: gen.txt was changed by someone else after cairn last wrote it"), "{said}");
    assert!(said.contains("--force"), "{said}");
    assert_eq!(sandbox.read("gen.txt"), "my own version\n", "left as it is");
    assert_eq!(sandbox.read("src/b.rs"), "pub fn b() -> i32 {\n    2\n}\n", "the rest is restored");

    let forced = cairn(&sandbox, &["rewind", &id, "--to", "1", "--code", "--force", "--json"]).await;
    assert!(forced.status.success(), "{}", text(&forced.stdout));
    let outcome: Value = serde_json::from_slice(&forced.stdout).unwrap();
    assert_eq!(outcome["code"]["overridden"][0]["path"], "gen.txt");
    assert!(!sandbox.exists("gen.txt"), "overwritten with what was there before: nothing");

    // Wrong input is said, with what to do.
    let bad = cairn(&sandbox, &["rewind", &id, "--to", "5"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("has no turn 5; its turns are numbered 1 to 1"), "{}", text(&bad.stderr));
}

#[tokio::test]
async fn headless_undo_and_diff_run_on_the_resumed_session() {
    let sandbox = project();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "printf 'two\\n' >> notes.txt"})))
            .turn(Turn::text("Appended.")),
    )
    .await;
    sandbox.run(Api::Anthropic, &mock, &["--yes", "-p", "append", "--output-format", "json"]).await;
    let diff = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/diff last"]).await;
    assert!(diff.status.success(), "{}", text(&diff.stderr));
    assert!(text(&diff.stdout).contains(" untracked notes\n+two"), "{}", text(&diff.stdout));
    let undo = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/undo"]).await;
    assert!(undo.status.success(), "{}", text(&undo.stderr));
    assert!(text(&undo.stdout).contains("restored 1 file, deleted 0"), "{}", text(&undo.stdout));
    assert_eq!(sandbox.read("notes.txt"), "untracked notes\n");
    let again = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/undo"]).await;
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("no turn of this session changed files"), "{}", text(&again.stderr));
    let rewind = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/rewind"]).await;
    assert_eq!(rewind.status.code(), Some(2));
    assert!(text(&rewind.stderr).contains("cairn rewind"), "{}", text(&rewind.stderr));
    assert_eq!(mock.requests().len(), 2, "none of these asked the model anything");
}

/// The same through the interface: `/rewind`, the turn, "code and conversation". The files
/// are back byte for byte, the prompt is offered again, the next request carries nothing of
/// the rewound turn, and a resume afterwards sends what the interface sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_in_the_terminal_takes_back_code_and_conversation() {
    let sandbox = project();
    let root = sandbox.root();
    let mock = MockLlm::start(
        changing_turn(Script::new().turn(Turn::text("It is a small Rust project.")))
            .turn(Turn::text("Fine, without the rework."))
            .turn(Turn::text("Resumed.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--yes"]));
    let before = tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("what is here?");
        screen.send("\r");
        screen.wait("the first answer", |s| s.contains("It is a small Rust project."));
        screen.wait("the turn to end", |s| s.contains("1 request"));
        tree_hash(&root)
    });
    tokio::task::block_in_place(|| {
        screen.type_text("rework a and b");
        screen.send("\r");
        screen.wait("the rework", |s| s.contains("Reworked a and b") && s.contains("4 requests"));
    });
    assert_ne!(tree_hash(&root), before);
    tokio::task::block_in_place(|| {
        screen.type_text("/diff");
        screen.send("\r");
        let diff = screen
            .wait("the session's changes", |s| s.contains("Changes of this session") && s.contains("src/gen/c.rs"));
        // Nine files, as /rewind counts them; a mode and a link in words.
        assert!(diff.contains("Changes of this session  9 files"), "{diff}");
        assert!(diff.contains("current  symbolic link to src/a.rs now points to src/b.rs"), "{diff}");
        screen.type_text("/rewind");
        screen.send("\r");
        let picker = screen.wait("the turns", |s| s.contains("Rewind: choose a turn (2)"));
        assert!(picker.contains("rework a and b") && picker.contains("files changed"), "{picker}");
        // The latest turn is selected: choose it, then "code and conversation".
        screen.send("\r");
        screen.wait("what to take back", |s| s.contains("Code and conversation") && s.contains("Conversation only"));
        screen.send("\r");
        let done = screen.wait("the report", |s| s.contains("rewound to before turn 2"));
        assert!(done.contains("no longer sent to the model"), "{done}");
        assert!(!done.contains("Reworked a and b"), "the rewound turn leaves the transcript:\n{done}");
        // The first turn's line keeps its own figures: the rewound turn's are gone with it.
        assert!(done.contains(" · 1 request · ") && !done.contains("5 requests"), "{done}");
        screen.wait("the prompt offered again", |s| s.lines().rev().take(4).any(|l| l.contains("rework a and b")));
    });
    assert_eq!(tree_hash(&root), before, "every file, folder, mode and link as before the turn");
    tokio::task::block_in_place(|| {
        // Ctrl+C clears the offered prompt; then a new one.
        screen.send("\x03");
        screen.type_text("leave it as it was");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Fine, without the rework."));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    drop(screen);
    tokio::time::sleep(Duration::from_millis(100)).await;

    let out = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "and now?", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = mock.requests();
    let (sent, resumed) = (&requests[requests.len() - 2], &requests[requests.len() - 1]);
    assert_eq!(user_texts(sent), ["what is here?", "leave it as it was"]);
    assert!(!sent.body["messages"].to_string().contains("rework"), "{}", sent.body["messages"]);
    let sent_messages = messages(sent);
    assert_eq!(messages(resumed)[..sent_messages.len()], sent_messages[..]);
    assert_eq!(resumed.body["system"], sent.body["system"]);
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

/// `/rewind`, the turn, "code only": the files are back byte for byte, the transcript and what
/// the model is sent keep the turn (the next request still carries the rework), and `/diff`
/// then has nothing left to show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_code_only_in_the_terminal_restores_the_files_and_keeps_the_conversation() {
    let sandbox = project();
    let root = sandbox.root();
    let mock = MockLlm::start(
        changing_turn(Script::new().turn(Turn::text("It is a small Rust project.")))
            .turn(Turn::text("Understood, the files are as before.")),
    )
    .await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--yes"]));
    let before = tokio::task::block_in_place(|| {
        screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
        screen.type_text("what is here?");
        screen.send("\r");
        screen.wait("the turn to end", |s| s.contains("It is a small Rust project.") && s.contains("1 request"));
        tree_hash(&root)
    });
    tokio::task::block_in_place(|| {
        screen.type_text("rework a and b");
        screen.send("\r");
        screen.wait("the rework", |s| s.contains("Reworked a and b") && s.contains("4 requests"));
        screen.type_text("/rewind");
        screen.send("\r");
        screen.wait("the turns", |s| s.contains("Rewind: choose a turn (2)"));
        screen.send("\r");
        screen.wait("what to take back", |s| s.contains("Code only"));
        // Down twice: "code only".
        screen.send("\x1b[B");
        screen.send("\x1b[B");
        screen.send("\r");
        let done = screen.wait("the report", |s| s.contains("rewound to before turn 2"));
        assert!(done.contains("code only"), "{done}");
        assert!(!done.contains("no longer sent to the model"), "the conversation stays:\n{done}");
        assert!(done.contains("Reworked a and b"), "the turn stays in the transcript:\n{done}");
    });
    assert_eq!(tree_hash(&root), before, "every file, folder, mode and link as before the turn");
    tokio::task::block_in_place(|| {
        screen.type_text("/diff");
        screen.send("\r");
        screen.wait("nothing left to show", |s| s.contains("Changes of this session  no file changes"));
        screen.type_text("are the files back?");
        screen.send("\r");
        screen.wait("the answer", |s| s.contains("Understood, the files are as before."));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
    let requests = mock.requests();
    let last = requests.last().unwrap();
    assert_eq!(user_texts(last), ["what is here?", "rework a and b", "are the files back?"]);
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}

/// A subagent's changes belong to the parent's turn that started it: taking that turn back
/// takes them back too.
#[tokio::test]
async fn what_a_subagent_changed_is_taken_back_with_the_parents_turn() {
    let sandbox = project();
    let root = sandbox.root();
    let before = tree_hash(&root);
    let task =
        json!({"description": "tidy up", "prompt": "Write a.md and append to notes.txt.", "agent_type": "general"});
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tools(vec![MockCall::new("task", task)]))
            .route(
                "tidy up",
                [
                    Turn::tool("file_write", json!({"path": "docs/a.md", "content": "# A\n"})).into(),
                    Turn::tool("bash", json!({"command": "printf 'tidied\\n' >> notes.txt; rm src/b.rs"})).into(),
                    Turn::text("Wrote docs/a.md, appended to notes.txt, removed src/b.rs.").into(),
                ],
            )
            .turn(Turn::text("The subagent tidied up.")),
    )
    .await;
    let id = session_of(&sandbox.run(Api::Anthropic, &mock, &["--yes", "-p", "tidy", "--output-format", "json"]).await);
    assert_eq!(sandbox.read("docs/a.md"), "# A\n", "the subagent ran");
    assert!(!sandbox.exists("src/b.rs"));

    let turns: Value = serde_json::from_slice(&cairn(&sandbox, &["rewind", &id, "--json"]).await.stdout).unwrap();
    assert_eq!(turns.as_array().unwrap().len(), 1, "the subagent's prompts are not the parent's turns: {turns}");
    assert!(turns[0]["files_changed"].as_u64().unwrap() >= 3, "{turns}");
    let out = cairn(&sandbox, &["rewind", &id, "--to", "1", "--code"]).await;
    assert!(out.status.success(), "stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(tree_hash(&root), before, "every file as before the turn, the subagent's changes too");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
}
