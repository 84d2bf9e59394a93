//! `/sessions`, `/memories` and `/forget` are one set of rules whichever front end asks: the
//! full-screen interface (in a pseudo-terminal), a headless `-p /…` run and the `cairn`
//! subcommands list the same things and accept, refuse and word a forget the same way.

use std::process::Output;

use cairn::conversation::{MemoryKind, RetentionClass};
use cairn::store::{NewMemory, Store};

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

fn no_memory(id: i64) -> String {
    format!("there is no memory #{id} in this project; /memories and `cairn memories` list them")
}

const NOT_A_NUMBER: &str = "a memory id is a number, as /memories and `cairn memories` show it; \"tabs\" is not one";

/// A refusal on the command line: bad input (exit 2), said once on stderr, nothing on stdout.
fn refused(out: &Output, message: &str) {
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stderr), format!("cairn: {message}\n"));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

fn succeeded(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    text(&out.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_memories_and_forget_behave_the_same_in_every_front_end() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Script::new().turn(Turn::text("Hello."))).await;
    let first = sandbox.run(Api::Anthropic, &mock, &["-p", "say hello", "--output-format", "json"]).await;
    let session = json_result(&first)["session_id"].as_str().unwrap().to_string();
    let memories: Vec<(i64, String)> = {
        let store = Store::open(&sandbox.home.path().join("cairn.db")).unwrap();
        let project = store.project(&sandbox.root()).unwrap();
        ["Money is integer cents", "Tests run with nextest", "The user prefers tabs"]
            .iter()
            .map(|title| {
                let m = store
                    .create_memory(NewMemory {
                        project: Some(project),
                        kind: MemoryKind::Decision,
                        class: RetentionClass::Durable,
                        title,
                        content: "decided with the user",
                        session_id: None,
                        expires_at: None,
                        approved_by: None,
                    })
                    .unwrap();
                (m.id, m.title)
            })
            .collect()
    };
    let resumed = |args: &[&str]| {
        let mut all = vec!["--session", session.as_str()];
        all.extend_from_slice(args);
        sandbox.command(Api::Anthropic, &mock, &all)
    };

    // Listing: headless prints exactly what the subcommand's --json prints.
    let listed = succeeded(&sandbox.bare_command(&["sessions", "--json"]).output().await.unwrap());
    assert_eq!(succeeded(&resumed(&["-p", "/sessions"]).output().await.unwrap()), listed);
    assert!(listed.contains(&session) && listed.contains("say hello"), "{listed}");
    let listed = succeeded(&sandbox.bare_command(&["memories", "--json"]).output().await.unwrap());
    assert_eq!(succeeded(&resumed(&["-p", "/memories"]).output().await.unwrap()), listed);

    // The interface shows the same sessions and memories, then forgets the first memory.
    let (a, b, c) = (&memories[0], &memories[1], &memories[2]);
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &["--session", &session]));
    tokio::task::block_in_place(|| {
        screen.wait("the resumed session", |s| s.contains("resumed session"));
        screen.type_text("/sessions");
        screen.send("\r");
        screen.wait("the sessions", |s| {
            s.contains("Sessions of this project (1)") && s.contains("say hello") && s.contains(&session)
        });
        screen.send("\x1b");
        screen.wait("the view to close", |s| !s.contains("Sessions of this project"));
        screen.type_text("/memories");
        screen.send("\r");
        screen.wait("the memories", |s| s.contains("Memories (3)") && memories.iter().all(|(_, t)| s.contains(t)));
        screen.send("\x1b");
        screen.wait("the view to close", |s| !s.contains("Memories (3)"));
        for line in [format!("/forget #{}", a.0), format!("/forget {}", a.0), "/forget tabs".to_string()] {
            screen.type_text(&line);
            screen.send("\r");
            screen.wait("the prompt to clear", |s| !s.contains(&line));
        }
        let forgot = format!("Forgot memory #{}: {}", a.0, a.1);
        screen.wait("what the forgets said", |s| {
            s.contains(&forgot) && s.contains(&no_memory(a.0)) && s.contains(NOT_A_NUMBER)
        });
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());

    // Headless forgets the second, the subcommand the third, in the same words.
    let out = resumed(&["-p", &format!("/forget {}", b.0)]).output().await.unwrap();
    assert_eq!(succeeded(&out), format!("Forgot memory #{}: {}\n", b.0, b.1));
    let out = sandbox.bare_command(&["forget", &c.0.to_string()]).output().await.unwrap();
    assert_eq!(succeeded(&out), format!("Forgot memory #{}: {}\n", c.0, c.1));
    // And both refuse what the interface refused, with its message.
    refused(&resumed(&["-p", &format!("/forget #{}", a.0)]).output().await.unwrap(), &no_memory(a.0));
    refused(&sandbox.bare_command(&["forget", &format!("#{}", a.0)]).output().await.unwrap(), &no_memory(a.0));
    refused(&resumed(&["-p", "/forget tabs"]).output().await.unwrap(), NOT_A_NUMBER);
    refused(&sandbox.bare_command(&["forget", "tabs"]).output().await.unwrap(), NOT_A_NUMBER);

    let left = succeeded(&sandbox.bare_command(&["memories", "--json"]).output().await.unwrap());
    assert_eq!(left.trim(), "[]", "every front end forgot for real");
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    assert_eq!(mock.requests().len(), 1, "listing and forgetting never call the model");
}
