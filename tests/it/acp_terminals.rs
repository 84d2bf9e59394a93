//! `cairn acp` with an editor that offers its terminals (`terminal/*`), as Zed does: the test's
//! client runs each command it is given as a real process, keeps its output as a terminal
//! would, and kills it when told. A command the user approves runs there, through cairn's
//! launcher, confined by the sandbox (a write outside the project is refused, and run outside
//! it only when the user says so, a protected file it created removed), with no provider key
//! though the editor's environment has one; its output reaches the model, the checkpoint around
//! it sees what it wrote, its call shows the terminal, and a cancel or a time limit kills it
//! through the editor. A client without terminals gets cairn's own runner.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, CreateTerminalRequest, CreateTerminalResponse, KillTerminalResponse,
    NewSessionRequest, PermissionOptionKind, PromptRequest, ReleaseTerminalResponse, StopReason, TerminalExitStatus,
    TerminalOutputResponse, TextContent, ToolCallStatus, WaitForTerminalExitResponse,
};
use agent_client_protocol::{Error, ErrorCode};
use serde_json::json;
use tokio::sync::watch;

use super::acp::{Editor, Entry, lock, prompt, until, with_acp};
use crate::support::cairn::{Sandbox, outside_writable_roots, tool_results};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// An editor's terminals: real processes, each in a process group of its own (as a terminal's
/// foreground job is), stdout and stderr into one stream.
#[derive(Default)]
pub(super) struct ClientTerminals {
    /// Told to cairn in `initialize`.
    pub declared: bool,
    pub created: Mutex<Vec<CreateTerminalRequest>>,
    pub killed: Mutex<Vec<String>>,
    pub released: Mutex<Vec<String>>,
    /// The process each terminal started.
    pub pids: Mutex<Vec<i32>>,
    running: Mutex<HashMap<String, Arc<Running>>>,
    next: AtomicU64,
}

struct Running {
    group: i32,
    output: Arc<Mutex<Vec<u8>>>,
    limit: usize,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
}

fn failed(why: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, why.into())
}

impl ClientTerminals {
    pub(super) fn declared() -> ClientTerminals {
        ClientTerminals { declared: true, ..ClientTerminals::default() }
    }

    pub(super) fn create(&self, request: CreateTerminalRequest) -> Result<CreateTerminalResponse, Error> {
        lock(&self.created).push(request.clone());
        if !self.declared {
            return Err(failed("this client offers no terminals"));
        }
        let (reader, writer) = std::io::pipe().map_err(|e| failed(e.to_string()))?;
        let mut command = tokio::process::Command::new(&request.command);
        command
            .args(&request.args)
            // An editor started with a provider key in its environment, as many are.
            .env("ANTHROPIC_API_KEY", "sk-ant-in-the-editors-environment")
            .envs(request.env.iter().map(|v| (v.name.clone(), v.value.clone())))
            .stdin(std::process::Stdio::null())
            .stdout(writer.try_clone().map_err(|e| failed(e.to_string()))?)
            .stderr(writer)
            .process_group(0);
        if let Some(cwd) = &request.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|e| failed(format!("cannot run {}: {e}", request.command)))?;
        drop(command);
        let group = child.id().expect("a running child has an id") as i32;
        lock(&self.pids).push(group);
        let output = Arc::new(Mutex::new(Vec::new()));
        let kept = output.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut reader = reader;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = reader.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                lock(&kept).extend_from_slice(&chunk[..n]);
            }
        });
        let (ended, exit) = watch::channel(None);
        tokio::spawn(async move {
            use std::os::unix::process::ExitStatusExt;
            let status = child.wait().await.expect("the child can be waited for");
            let signal = status.signal().map(|s| match s {
                9 => "SIGKILL".to_string(),
                15 => "SIGTERM".to_string(),
                other => other.to_string(),
            });
            let _ =
                ended.send(Some(TerminalExitStatus::new().exit_code(status.code().map(|c| c as u32)).signal(signal)));
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let limit = request.output_byte_limit.unwrap_or(u64::MAX) as usize;
        lock(&self.running).insert(id.clone(), Arc::new(Running { group, output, limit, exit }));
        Ok(CreateTerminalResponse::new(id))
    }

    fn get(&self, id: &str) -> Result<Arc<Running>, Error> {
        lock(&self.running).get(id).cloned().ok_or_else(|| failed(format!("no terminal {id}")))
    }

    /// What answers `terminal/wait_for_exit` once the command has ended.
    pub(super) fn exit_of(&self, id: &str) -> Result<watch::Receiver<Option<TerminalExitStatus>>, Error> {
        Ok(self.get(id)?.exit.clone())
    }

    pub(super) fn output(&self, id: &str) -> Result<TerminalOutputResponse, Error> {
        let running = self.get(id)?;
        let bytes = lock(&running.output).clone();
        // Past the limit, a terminal keeps the end (the protocol's rule).
        let truncated = bytes.len() > running.limit;
        let kept = &bytes[bytes.len().saturating_sub(running.limit)..];
        let text = String::from_utf8_lossy(kept).into_owned();
        Ok(TerminalOutputResponse::new(text, truncated).exit_status(running.exit.borrow().clone()))
    }

    /// As a terminal stops its job: the whole foreground group.
    pub(super) fn kill(&self, id: &str) -> Result<KillTerminalResponse, Error> {
        let running = self.get(id)?;
        lock(&self.killed).push(id.to_string());
        // SAFETY: killpg only sends a signal.
        unsafe { libc::killpg(running.group, libc::SIGKILL) };
        Ok(KillTerminalResponse::new())
    }

    /// Freed, and what still runs in it killed (Zed does the same).
    pub(super) fn release(&self, id: &str) -> Result<ReleaseTerminalResponse, Error> {
        let running = lock(&self.running).remove(id).ok_or_else(|| failed(format!("no terminal {id}")))?;
        lock(&self.released).push(id.to_string());
        if running.exit.borrow().is_none() {
            // SAFETY: killpg only sends a signal.
            unsafe { libc::killpg(running.group, libc::SIGKILL) };
        }
        Ok(ReleaseTerminalResponse::new())
    }
}

/// The answer to `terminal/wait_for_exit`, once the command has ended.
pub(super) async fn wait(
    exit: Result<watch::Receiver<Option<TerminalExitStatus>>, Error>,
) -> Result<WaitForTerminalExitResponse, Error> {
    let mut exit = exit?;
    let ended = exit.wait_for(Option::is_some).await.map_err(|_| failed("the terminal went away"))?;
    Ok(WaitForTerminalExitResponse::new(ended.clone().unwrap_or_default()))
}

/// The pids cgroups cairn's launchers made that are still there, where cairn makes them (as
/// root, with a cgroup v1 pids controller).
fn launcher_cgroups_left(pids: &[i32]) -> Vec<String> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let Some(path) = own.lines().find_map(|l| l.split_once(":pids:").map(|(_, p)| p.to_string())) else {
        return Vec::new();
    };
    let dir = Path::new("/sys/fs/cgroup/pids").join(path.trim_start_matches('/'));
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| pids.iter().any(|pid| name.starts_with(&format!("cairn-{pid}-"))))
        .collect()
}

/// Whether process `pid` is gone (or only a zombie no one reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(_) => true,
        Ok(status) => status.lines().any(|l| l.starts_with("State:") && l.contains('Z')),
    }
}

fn bash(command: &str) -> Turn {
    Turn::tool("bash", json!({ "command": command }))
}

#[tokio::test]
async fn an_editors_terminal_runs_the_command_confined_and_a_cancel_kills_it_there() {
    if !super::permissions::sandbox_enforced() {
        return;
    }
    let Some(outside) = outside_writable_roots() else { return };
    let outside = tempfile::tempdir_in(outside).unwrap();
    let escaped = outside.path().join("escaped");
    let approved = outside.path().join("approved");
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            // 1: a command confined in the terminal: its write outside is refused and kept in.
            .turn(bash(&format!(
                "echo hello-from-the-terminal | tee made.txt; echo keys=$(env | grep -c _API_KEY); touch {}",
                escaped.display()
            )))
            // …one that creates a protected file, which cairn removes after it…
            .turn(bash("touch .mcp.json"))
            // …and one the user lets run outside the sandbox, in a terminal of its own.
            .turn(bash(&format!("touch {}", approved.display())))
            .turn(Turn::text("Checked."))
            // 2: a slow command, cancelled.
            .turn(bash("sleep 30 & echo $! > sleeper.pid; wait"))
            // 3: a command past its time limit.
            .turn(Turn::tool("bash", json!({"command": "sleep 20", "timeout_ms": 500})))
            .turn(Turn::text("It took too long."))
            // 4: without terminals, cairn's own runner.
            .turn(bash("echo from-cairns-own-runner"))
            .turn(Turn::text("Ran it.")),
    )
    .await;
    let editor = Arc::new(Editor { terminals: ClientTerminals::declared(), ..Editor::default() });
    let (root, ed) = (sandbox.root(), editor.clone());
    let sleeper = sandbox.root().join("sleeper.pid");
    let pid_file = sleeper.clone();
    let session = with_acp(&sandbox, &mock, editor.clone(), async move |cx| {
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?.session_id;
        lock(&ed.answers).extend([
            PermissionOptionKind::AllowOnce,  // the first command
            PermissionOptionKind::RejectOnce, // not outside the sandbox
            PermissionOptionKind::AllowOnce,  // the protected file
            PermissionOptionKind::RejectOnce, // not outside the sandbox
            PermissionOptionKind::AllowOnce,  // the third command
            PermissionOptionKind::AllowOnce,  // outside the sandbox
        ]);
        assert_eq!(prompt(&cx, &ed, &session, "run the checks").await, StopReason::EndTurn);

        lock(&ed.answers).push_back(PermissionOptionKind::AllowOnce);
        let slow =
            cx.send_request(PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new("wait"))]));
        lock(&ed.thread).push(Entry::User("wait".into()));
        until(&ed, |t| {
            t.iter().any(|e| {
                matches!(e, Entry::Tool { title, status: ToolCallStatus::InProgress, terminals, .. }
                    if title.starts_with("$ sleep 30") && !terminals.is_empty())
            })
        })
        .await;
        // The command has started its child (it says so on disk, not in an update).
        for _ in 0..200 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        cx.send_notification(CancelNotification::new(session.clone()))?;
        assert_eq!(slow.block_task().await?.stop_reason, StopReason::Cancelled);

        lock(&ed.answers).push_back(PermissionOptionKind::AllowOnce);
        assert_eq!(prompt(&cx, &ed, &session, "time it").await, StopReason::EndTurn);
        Ok(session)
    })
    .await;

    let created = lock(&editor.terminals.created).clone();
    assert_eq!(created.len(), 6, "{created:#?}");
    let cairn = std::fs::canonicalize(env!("CARGO_BIN_EXE_cairn")).unwrap();
    for (request, sub) in
        created.iter().zip(["sandboxed", "sandboxed", "sandboxed", "unsandboxed", "sandboxed", "sandboxed"])
    {
        // cairn itself runs in the terminal, as its launcher, the grant in its environment.
        assert_eq!(Path::new(&request.command), cairn, "{request:?}");
        assert_eq!(request.args.first().map(String::as_str), Some(sub), "{request:?}");
        assert!(request.env.iter().any(|v| v.name == "CAIRN_SANDBOX_GRANT"), "{request:?}");
        assert_eq!(request.cwd.as_deref(), Some(sandbox.root().as_path()));
    }
    assert_eq!(created[0].args[..5], ["sandboxed", "--", "echo", "hello-from-the-terminal", "..."]);
    assert_eq!(created[0].args.len(), 5, "{:?}", created[0].args);
    let ids: Vec<String> = (1..=6).map(|n| format!("term-{n}")).collect();
    assert_eq!(*lock(&editor.terminals.released), ids, "every terminal released, in order");
    let left = launcher_cgroups_left(&lock(&editor.terminals.pids));
    assert!(left.is_empty(), "the launchers' pids cgroups were left behind: {left:?}");

    // The confined write outside was refused; the one the user let out was not.
    assert!(!escaped.exists(), "the sandbox let a write outside the project through");
    assert!(approved.exists(), "the run outside the sandbox the user approved did not happen");
    // The checkpoint around the command saw what it wrote in the project.
    let diff = sandbox.bare_command(&["diff", &session.0]).output().await.unwrap();
    let diff = String::from_utf8_lossy(&diff.stdout);
    assert!(diff.contains("made.txt") && diff.contains("+hello-from-the-terminal"), "{diff}");
    let requests = mock.requests();
    let first = &tool_results(&requests[1])[0].1;
    assert!(first.contains("hello-from-the-terminal"), "the terminal's output reached the model: {first}");
    assert!(first.contains("keys=0"), "the command saw a provider key: {first}");
    assert!(first.contains("[exit code 1]"), "{first}");
    assert!(first.contains("[sandbox: this probably failed because the sandbox (workspace-write)"), "{first}");
    assert!(first.contains("[the user chose not to run it outside the sandbox]"), "{first}");
    let protected = &tool_results(&requests[2])[1].1;
    assert!(protected.contains("[sandbox: .mcp.json is protected"), "{protected}");
    assert!(!sandbox.exists(".mcp.json"), "the protected file the command created is still there");
    let third = &tool_results(&requests[3])[2].1;
    assert!(third.contains("[exit code 0]"), "{third}");
    // Each call shows its terminal (the rerun its own), and keeps showing it once finished.
    let shows = |title: &str| match editor.tool(title) {
        Some(Entry::Tool { terminals, status, .. }) => (terminals, status),
        other => panic!("no call {title}: {other:?}"),
    };
    assert_eq!(shows("$ echo hello-from-the-terminal"), (vec!["term-1".to_string()], ToolCallStatus::Failed));
    assert_eq!(
        shows(&format!("$ touch {}", approved.display())),
        (vec!["term-4".to_string()], ToolCallStatus::Completed)
    );

    // The cancel killed the command in its terminal: the kill was sent, the process is gone.
    assert_eq!(lock(&editor.terminals.killed)[0], "term-5");
    let pid: i32 = std::fs::read_to_string(&sleeper).unwrap().trim().parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !gone(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone(pid), "the cancelled command's process {pid} still runs");
    assert_eq!(requests.len(), 7, "4 requests, the cancelled one, 2: the cancelled turn asked nothing more");
    // The time limit killed it the same way, and the model was told.
    assert_eq!(lock(&editor.terminals.killed)[1], "term-6");
    let timed = tool_results(&requests[6]).pop().expect("the timed-out result").1;
    assert!(timed.contains("[timed out after 0.5s; the process group was killed]"), "{timed}");

    // A client without terminals: cairn runs the command itself.
    let plain = Arc::new(Editor::default());
    let (root, ed) = (sandbox.root(), plain.clone());
    with_acp(&sandbox, &mock, plain.clone(), async move |cx| {
        let session = cx.send_request(NewSessionRequest::new(root.clone())).block_task().await?.session_id;
        lock(&ed.answers).push_back(PermissionOptionKind::AllowOnce);
        assert_eq!(prompt(&cx, &ed, &session, "run it").await, StopReason::EndTurn);
        Ok(())
    })
    .await;
    assert!(lock(&plain.terminals.created).is_empty(), "cairn asked a client without terminals for one");
    let requests = mock.requests();
    let own = &tool_results(&requests[8])[0].1;
    assert!(own.contains("from-cairns-own-runner") && own.contains("[exit code 0]"), "{own}");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}
