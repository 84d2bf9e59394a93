//! Checkpoints never leave the project: a folder a turn swaps for a link to an outside folder is
//! a link to them, not a door. `/undo` and `cairn rewind` delete and write nothing outside, and a
//! link to a big outside folder (`/usr/include`) adds none of its files to the database.

use std::path::Path;

use serde_json::json;

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// An outside folder holding files with the names a project folder will have.
fn outside() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "outside a\n").unwrap();
    std::fs::write(dir.path().join("keep.txt"), "outside keep\n").unwrap();
    std::fs::create_dir(dir.path().join("deep")).unwrap();
    std::fs::write(dir.path().join("deep/d.txt"), "outside deep\n").unwrap();
    dir
}

/// Every file under `dir` with its content.
fn contents(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The paths the database holds under `prefix`, in the changes of turns and the file manifest.
fn stored_paths(sandbox: &Sandbox, prefix: &str) -> Vec<String> {
    let db = sandbox.database();
    let mut out = Vec::new();
    for table in ["checkpoint_changes", "file_manifest"] {
        let mut stmt = db.prepare(&format!("SELECT path FROM {table} WHERE path LIKE ?1 || '%'")).unwrap();
        out.extend(stmt.query_map([prefix], |r| r.get::<_, String>(0)).unwrap().flatten());
    }
    out
}

#[tokio::test]
async fn undo_and_rewind_after_a_folder_became_a_link_to_outside_touch_nothing_outside() {
    let outside = outside();
    let before = contents(outside.path());
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool(
                "bash",
                json!({"command": "mkdir sub && printf 'one\\n' > sub/a.txt && printf 'two\\n' > sub/b.txt"}),
            ))
            .turn(Turn::text("made sub"))
            .turn(Turn::tool(
                "bash",
                json!({"command": format!("rm -r sub && ln -s {} sub", outside.path().display())}),
            ))
            .turn(Turn::text("linked")),
    )
    .await;
    let first = sandbox.run(Api::Anthropic, &mock, &["--yes", "-p", "make sub", "--output-format", "json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let session = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let second = sandbox.run(Api::Anthropic, &mock, &["--yes", "--resume", "-p", "link it"]).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(std::fs::symlink_metadata(sandbox.root().join("sub")).unwrap().is_symlink());
    assert!(stored_paths(&sandbox, "sub/keep").is_empty() && stored_paths(&sandbox, "sub/deep").is_empty());

    // /undo takes the link back to the folder it was, deleting nothing behind it.
    let undo = sandbox.run(Api::Anthropic, &mock, &["--resume", "-p", "/undo"]).await;
    assert!(undo.status.success(), "{}", text(&undo.stderr));
    assert_eq!(contents(outside.path()), before, "{}", text(&undo.stdout));
    assert!(std::fs::symlink_metadata(sandbox.root().join("sub")).unwrap().is_dir());
    assert_eq!((sandbox.read("sub/a.txt"), sandbox.read("sub/b.txt")), ("one\n".into(), "two\n".into()));

    // The link again, then back to before the first turn: the link goes, what it led to stays.
    std::fs::remove_dir_all(sandbox.root().join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), sandbox.root().join("sub")).unwrap();
    let rewind = sandbox.bare_command(&["rewind", &session, "--to", "1", "--code", "--force"]).output().await.unwrap();
    assert!(rewind.status.success(), "{}", text(&rewind.stderr));
    assert_eq!(contents(outside.path()), before, "{}", text(&rewind.stdout));
    assert!(std::fs::symlink_metadata(sandbox.root().join("sub")).is_err(), "{}", text(&rewind.stdout));
}

#[tokio::test]
async fn a_link_to_a_big_outside_folder_adds_nothing_of_it_to_the_database() {
    let outside = outside();
    let sandbox = Sandbox::new();
    let include = Path::new("/usr/include");
    let command = format!(
        "ln -s {} out{}",
        outside.path().display(),
        if include.is_dir() { " && ln -s /usr/include inc" } else { "" }
    );
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": command})))
            .turn(Turn::tool("bash", json!({"command": "printf 'x\\n' > after.txt"})))
            .turn(Turn::text("linked")),
    )
    .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["--yes", "-p", "link them"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stored_paths(&sandbox, "out/").is_empty(), "{:?}", stored_paths(&sandbox, "out/"));
    assert!(stored_paths(&sandbox, "inc/").is_empty(), "{:?}", stored_paths(&sandbox, "inc/"));
    let links = stored_paths(&sandbox, "out");
    assert!(!links.is_empty() && links.iter().all(|p| p == "out"), "the link itself is kept: {links:?}");
    let blobs: i64 = sandbox.database().query_row("SELECT count(*) FROM blobs", [], |r| r.get(0)).unwrap();
    assert!(blobs < 10, "{blobs} contents stored");
}
