//! `cairn acp` driven by the Agent Client Protocol SDK's own client-side connection, as an
//! editor drives it: the real binary over its stdin and stdout, the mock model behind it. The
//! test's client keeps an unsaved buffer, answers permission requests as a user would, and
//! records every update, so the thread it would show can be compared with the one
//! `session/load` tells again.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, CreateTerminalRequest, FileSystemCapabilities,
    InitializeRequest, KillTerminalRequest, LoadSessionRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, StopReason, TerminalOutputRequest, TextContent, ToolCallContent, ToolCallStatus,
    WaitForTerminalExitRequest, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::acp_terminals::{ClientTerminals, wait};
use crate::support::cairn::{Api, Sandbox, tool_results};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

/// One entry of the thread an editor shows.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Entry {
    User(String),
    Agent(String),
    Tool {
        id: String,
        title: String,
        status: ToolCallStatus,
        diffs: Vec<(Option<String>, String)>,
        /// The client's terminals the call shows.
        terminals: Vec<String>,
    },
}

/// What the test's editor holds and saw.
#[derive(Default)]
pub(super) struct Editor {
    /// Its terminals (declared to cairn or not), running real processes.
    pub terminals: ClientTerminals,
    /// Files open with unsaved changes, by absolute path.
    pub buffers: Mutex<HashMap<PathBuf, String>>,
    /// What `fs/write_text_file` was asked to write.
    pub writes: Mutex<Vec<(PathBuf, String)>>,
    /// The permission requests, in order.
    pub asked: Mutex<Vec<RequestPermissionRequest>>,
    /// The option kinds to choose for the next permission requests.
    pub answers: Mutex<VecDeque<PermissionOptionKind>>,
    /// Permission requests fail (the editor cannot show them) while set.
    pub cannot_ask: std::sync::atomic::AtomicBool,
    /// The thread as the updates built it.
    pub thread: Mutex<Vec<Entry>>,
    /// Woken on every update.
    pub updated: tokio::sync::Notify,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap()
}

impl Editor {
    fn apply(&self, update: SessionUpdate) {
        let mut thread = lock(&self.thread);
        let text_of = |block: &ContentBlock| match block {
            ContentBlock::Text(t) => t.text.clone(),
            other => panic!("a chunk that is not text: {other:?}"),
        };
        match update {
            SessionUpdate::UserMessageChunk(chunk) => thread.push(Entry::User(text_of(&chunk.content))),
            SessionUpdate::AgentMessageChunk(chunk) => match thread.last_mut() {
                Some(Entry::Agent(text)) => text.push_str(&text_of(&chunk.content)),
                _ => thread.push(Entry::Agent(text_of(&chunk.content))),
            },
            SessionUpdate::ToolCall(call) => {
                assert!(
                    !thread.iter().any(|e| matches!(e, Entry::Tool { id, .. } if *id == *call.tool_call_id.0)),
                    "tool call {} announced twice",
                    call.tool_call_id
                );
                thread.push(Entry::Tool {
                    id: call.tool_call_id.0.to_string(),
                    title: call.title,
                    status: call.status,
                    diffs: diffs(&call.content),
                    terminals: terminals(&call.content),
                });
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let Some(Entry::Tool { title, status, diffs: shown, terminals: shown_terminals, .. }) =
                    thread.iter_mut().find(|e| matches!(e, Entry::Tool { id, .. } if *id == *update.tool_call_id.0))
                else {
                    panic!("an update of tool call {} the client was never told of", update.tool_call_id)
                };
                if let Some(t) = update.fields.title {
                    *title = t;
                }
                if let Some(s) = update.fields.status {
                    *status = s;
                }
                if let Some(content) = update.fields.content {
                    *shown = diffs(&content);
                    *shown_terminals = terminals(&content);
                }
            }
            _ => {}
        }
        drop(thread);
        self.updated.notify_waiters();
    }

    pub(super) fn tool(&self, title_part: &str) -> Option<Entry> {
        lock(&self.thread)
            .iter()
            .find(|e| matches!(e, Entry::Tool { title, .. } if title.contains(title_part)))
            .cloned()
    }
}

fn terminals(content: &[ToolCallContent]) -> Vec<String> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Terminal(t) => Some(t.terminal_id.0.to_string()),
            _ => None,
        })
        .collect()
}

fn diffs(content: &[ToolCallContent]) -> Vec<(Option<String>, String)> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Diff(d) => Some((d.old_text.clone(), d.new_text.clone())),
            _ => None,
        })
        .collect()
}

/// `cairn acp` in the sandbox's project, pointed at `mock`, with the test's editor as client;
/// `run` drives the connection.
pub(super) async fn with_acp<R: Send + 'static>(
    sandbox: &Sandbox,
    mock: &MockLlm,
    editor: Arc<Editor>,
    run: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, agent_client_protocol::Error>,
) -> R {
    let mut child = sandbox
        .command(Api::Anthropic, mock, &["acp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let transport = ByteStreams::new(child.stdin.take().unwrap().compat_write(), child.stdout.take().unwrap().compat());
    let (e1, e2, e3, e4) = (editor.clone(), editor.clone(), editor.clone(), editor.clone());
    let (t1, t2, t3, t4, t5) = (editor.clone(), editor.clone(), editor.clone(), editor.clone(), editor.clone());
    let declares_terminals = editor.terminals.declared;
    let result = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                e1.apply(n.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                if e2.cannot_ask.load(std::sync::atomic::Ordering::SeqCst) {
                    let why = "the permission dialog could not be shown";
                    return responder.respond_with_error(agent_client_protocol::Error::new(
                        agent_client_protocol::ErrorCode::INTERNAL_ERROR,
                        why,
                    ));
                }
                let kind = lock(&e2.answers).pop_front().expect("a permission request the test did not expect");
                let option = request.options.iter().find(|o| o.kind == kind).expect("no option of that kind");
                let outcome =
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()));
                lock(&e2.asked).push(request);
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let held = lock(&e3.buffers).get(&request.path).cloned();
                let text = match held {
                    Some(text) => text,
                    None => std::fs::read_to_string(&request.path).unwrap(),
                };
                responder.respond(ReadTextFileResponse::new(text))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                // An editor puts the text in the file's buffer; the user saves it.
                lock(&e4.buffers).insert(request.path.clone(), request.content.clone());
                lock(&e4.writes).push((request.path, request.content));
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CreateTerminalRequest, responder, _cx| {
                responder.respond_with_result(t1.terminals.create(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WaitForTerminalExitRequest, responder, cx: ConnectionTo<Agent>| {
                // Answered when the command ends; the client goes on meanwhile.
                let waiting = t2.terminals.exit_of(&request.terminal_id.0);
                cx.spawn(async move { responder.respond_with_result(wait(waiting).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: TerminalOutputRequest, responder, _cx| {
                responder.respond_with_result(t3.terminals.output(&request.terminal_id.0))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: KillTerminalRequest, responder, _cx| {
                responder.respond_with_result(t4.terminals.kill(&request.terminal_id.0))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReleaseTerminalRequest, responder, _cx| {
                responder.respond_with_result(t5.terminals.release(&request.terminal_id.0))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let capabilities = ClientCapabilities::new()
                .fs(FileSystemCapabilities::new().read_text_file(true).write_text_file(true))
                .terminal(declares_terminals);
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
                .block_task()
                .await?;
            assert!(init.agent_capabilities.load_session, "{init:?}");
            assert_eq!(init.agent_info.as_ref().map(|i| i.name.as_str()), Some("cairn"));
            run(cx).await
        })
        .await;
    let result = result.unwrap_or_else(|e| panic!("the ACP session failed: {e}"));
    // Closing stdin ends cairn: every agent shut down, what it wrote committed.
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.unwrap().unwrap();
    assert!(out.status.success(), "cairn acp: {}", String::from_utf8_lossy(&out.stderr));
    result
}

pub(super) async fn prompt(cx: &ConnectionTo<Agent>, editor: &Editor, session: &SessionId, text: &str) -> StopReason {
    lock(&editor.thread).push(Entry::User(text.to_string()));
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))]);
    cx.send_request(request).block_task().await.unwrap().stop_reason
}

/// Wait until the thread shows what `ready` looks for.
pub(super) async fn until(editor: &Editor, ready: impl Fn(&[Entry]) -> bool) {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let woken = editor.updated.notified();
            if ready(&lock(&editor.thread)) {
                return;
            }
            woken.await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the thread never got there: {:#?}", lock(&editor.thread)));
}

fn edit(old: &str, new: &str) -> Turn {
    Turn::tool("file_edit", json!({"path": "notes.txt", "old_string": old, "new_string": new}))
}

#[tokio::test]
async fn an_editor_drives_a_session_through_acp_and_loads_it_back() {
    let sandbox = Sandbox::new();
    sandbox.write("notes.txt", "alpha\n");
    let notes = sandbox.root().join("notes.txt");
    let mock = MockLlm::start(
        Script::new()
            // 1: read (the unsaved buffer), edit (asks: allowed once), answer.
            .turn(Turn::tool("file_read", json!({"path": "notes.txt"})))
            .turn(edit("beta (unsaved)\n", "beta\ngamma\n"))
            .turn(Turn::text("Added gamma."))
            // 2: an edit allowed for the session, and one after it that does not ask.
            .turn(edit("gamma\n", "gamma\ndelta\n"))
            .turn(edit("delta\n", "delta\nepsilon\n"))
            .turn(Turn::text("Added delta and epsilon."))
            // 3: a command that runs until the turn is cancelled.
            .turn(
                Turn::tools(vec![MockCall::new("bash", json!({"command": "touch started && sleep 30"}))])
                    .with_text("Running the slow check."),
            ),
    )
    .await;
    let editor = Arc::new(Editor::default());
    lock(&editor.buffers).insert(notes.clone(), "alpha\nbeta (unsaved)\n".into());
    let root = sandbox.root();
    let ed = editor.clone();
    let session = with_acp(&sandbox, &mock, editor.clone(), async move |cx| {
        let new = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        let modes = new.modes.expect("the session offers modes");
        assert_eq!(&*modes.current_mode_id.0, "edit");
        assert_eq!(modes.available_modes.len(), 3);
        let session = new.session_id;

        lock(&ed.answers).push_back(PermissionOptionKind::AllowOnce);
        assert_eq!(prompt(&cx, &ed, &session, "add gamma to the notes").await, StopReason::EndTurn);
        lock(&ed.answers).push_back(PermissionOptionKind::AllowAlways);
        assert_eq!(prompt(&cx, &ed, &session, "now delta and epsilon").await, StopReason::EndTurn);

        lock(&ed.answers).push_back(PermissionOptionKind::AllowOnce);
        let slow = cx.send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Text(TextContent::new("run the slow check"))],
        ));
        lock(&ed.thread).push(Entry::User("run the slow check".into()));
        until(&ed, |t| {
            t.iter().any(
                |e| matches!(e, Entry::Tool { title, status: ToolCallStatus::InProgress, .. } if title == "$ touch started && sleep 30"),
            )
        })
        .await;
        cx.send_notification(CancelNotification::new(session.clone()))?;
        assert_eq!(slow.block_task().await?.stop_reason, StopReason::Cancelled);
        Ok(session)
    })
    .await;

    // The buffer was read, not the disk: the model saw the unsaved line.
    let requests = mock.requests();
    let read = &tool_results(&requests[1])[0].1;
    assert!(read.contains("beta (unsaved)"), "{read}");
    // Each edit arrived as a diff, was asked about (but the one a session rule allowed), and
    // landed in the editor's buffer through fs/write_text_file, never on the disk.
    let asked = lock(&editor.asked).clone();
    assert_eq!(asked.len(), 3, "{asked:#?}");
    let first = &asked[0];
    assert_eq!(first.tool_call.fields.title.as_deref(), Some("file_edit notes.txt"));
    let shown = diffs(first.tool_call.fields.content.as_deref().unwrap_or_default());
    assert_eq!(shown, [(Some("alpha\nbeta (unsaved)\n".to_string()), "alpha\nbeta\ngamma\n".to_string())]);
    let kinds: Vec<PermissionOptionKind> = first.options.iter().map(|o| o.kind).collect();
    assert!(kinds.contains(&PermissionOptionKind::AllowOnce) && kinds.contains(&PermissionOptionKind::AllowAlways));
    assert!(kinds.contains(&PermissionOptionKind::RejectOnce), "{kinds:?}");
    assert_eq!(asked[2].tool_call.fields.title.as_deref(), Some("$ touch started && sleep 30"));
    let writes = lock(&editor.writes).clone();
    assert_eq!(
        writes.iter().map(|(p, t)| (p.as_path(), t.as_str())).collect::<Vec<_>>(),
        [
            (notes.as_path(), "alpha\nbeta\ngamma\n"),
            (notes.as_path(), "alpha\nbeta\ngamma\ndelta\n"),
            (notes.as_path(), "alpha\nbeta\ngamma\ndelta\nepsilon\n"),
        ]
    );
    assert_eq!(sandbox.read("notes.txt"), "alpha\n", "the edits went to the editor, not the disk");
    // The finished edit shows its diff; the cancelled command says it was interrupted.
    let Some(Entry::Tool { status, diffs: shown, .. }) = editor.tool("file_edit") else { panic!() };
    assert_eq!(status, ToolCallStatus::Completed);
    assert_eq!(shown, [(Some("alpha\nbeta (unsaved)\n".to_string()), "alpha\nbeta\ngamma\n".to_string())]);
    let last = mock.requests().len();
    assert_eq!(last, 7, "the cancelled turn asked the model nothing more");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());

    // A new connection loads the session: the same thread, told again.
    let live: Vec<Entry> = lock(&editor.thread).clone();
    let reloaded = Arc::new(Editor::default());
    let root = sandbox.root();
    let id = session.clone();
    with_acp(&sandbox, &mock, reloaded.clone(), async move |cx| {
        let loaded = cx.send_request(LoadSessionRequest::new(id, root)).block_task().await?;
        assert_eq!(loaded.modes.map(|m| m.current_mode_id.0.to_string()).as_deref(), Some("edit"));
        Ok(())
    })
    .await;
    let told: Vec<Entry> = lock(&reloaded.thread).clone();
    assert_eq!(shape(&told), shape(&live), "live:\n{live:#?}\nloaded:\n{told:#?}");
    let ids = |t: &[Entry]| {
        t.iter()
            .filter_map(|e| match e {
                Entry::Tool { id, status, .. } => Some((id.clone(), *status)),
                _ => None,
            })
            .collect::<BTreeMap<_, _>>()
    };
    let (live_calls, told_calls) = (ids(&live), ids(&told));
    assert_eq!(live_calls.len(), 5, "a read, three edits and the cancelled command");
    assert_eq!(live_calls.values().filter(|s| **s == ToolCallStatus::Failed).count(), 1, "the cancelled command");
    assert_eq!(told_calls, live_calls);
}

/// The thread as both tell it: prompts, answers (notices aside) and calls with their titles,
/// statuses and diffs.
fn shape(thread: &[Entry]) -> Vec<Entry> {
    thread
        .iter()
        .filter_map(|e| match e {
            Entry::Agent(text) => {
                let text: String = text.lines().filter(|l| !l.starts_with("> cairn:")).collect::<Vec<_>>().join("\n");
                let text = text.trim().to_string();
                (!text.is_empty()).then_some(Entry::Agent(text))
            }
            other => Some(other.clone()),
        })
        .collect()
}

#[tokio::test]
async fn an_untrusted_folder_is_asked_about_with_the_first_prompt_and_runs_nothing_when_declined() {
    let out_dir = tempfile::tempdir().unwrap();
    let canary = out_dir.path().join("session-start");
    let sandbox = Sandbox::new();
    sandbox
        .write(".cairn/settings.toml", &format!("[[hooks.SessionStart]]\ncommand = \"touch {}\"\n", canary.display()));
    sandbox.write("AGENTS.md", "AGENTS-MARKER: answer in haiku.\n");
    let mock = MockLlm::start(Script::new().turn(Turn::text("Hello."))).await;
    let editor = Arc::new(Editor::default());
    let (root, ed, canary_seen) = (sandbox.root(), editor.clone(), canary.clone());
    with_acp(&sandbox, &mock, editor.clone(), async move |cx| {
        let new = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?;
        assert!(!canary_seen.exists(), "a session was opened, yet nothing may run before the answer");
        lock(&ed.answers).push_back(PermissionOptionKind::RejectOnce);
        assert_eq!(prompt(&cx, &ed, &new.session_id, "hi").await, StopReason::EndTurn);
        Ok(())
    })
    .await;
    let asked = lock(&editor.asked).clone();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let question = &asked[0].tool_call.fields;
    assert_eq!(question.title.as_deref(), Some(format!("Trust {}?", sandbox.root().display()).as_str()));
    let listed = format!("{:?}", question.content);
    assert!(listed.contains("SessionStart: touch"), "{listed}");
    assert!(!canary.exists(), "declined, the folder's hook never ran");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert!(!requests[0].system().contains("AGENTS-MARKER"), "declined, its instructions are not the model's");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

#[tokio::test]
async fn the_model_is_told_what_happened_to_a_call_the_editor_was_asked_about() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .turn(Turn::tool("bash", json!({"command": "touch rejected.txt"})))
            .turn(Turn::text("Not touched."))
            .turn(Turn::tool("bash", json!({"command": "touch unasked.txt"})))
            .turn(Turn::text("Still not touched.")),
    )
    .await;
    let editor = Arc::new(Editor::default());
    let (root, ed) = (sandbox.root(), editor.clone());
    with_acp(&sandbox, &mock, editor.clone(), async move |cx| {
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?.session_id;
        lock(&ed.answers).push_back(PermissionOptionKind::RejectOnce);
        assert_eq!(prompt(&cx, &ed, &session, "touch it").await, StopReason::EndTurn);
        ed.cannot_ask.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(prompt(&cx, &ed, &session, "touch the other").await, StopReason::EndTurn);
        Ok(())
    })
    .await;
    let requests = mock.requests();
    // The user said no in the editor: that is what the model hears, and nothing of --yes.
    let rejected = &tool_results(&requests[1])[0].1;
    assert!(rejected.starts_with("The user denied this `bash` call."), "{rejected}");
    // The editor could not ask: no one said no, and the model is told so.
    let unasked = &tool_results(&requests[3])[1].1;
    assert!(unasked.starts_with("Not run: the editor could not ask the user ("), "{unasked}");
    assert!(unasked.contains("Nobody said no"), "{unasked}");
    for told in [rejected, unasked] {
        assert!(!told.contains("--yes") && !told.contains("headless"), "{told}");
    }
    assert!(!sandbox.exists("rejected.txt") && !sandbox.exists("unasked.txt"));
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}
