//! The OS sandbox for `bash`, with real commands: what workspace-write and read-only let a
//! command write, the network switch, the message a sandbox failure gets, and the re-run
//! outside it. Skipped (with a note) where the kernel has no Landlock.

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::config::{SandboxMode, ToolsConfig};
use crate::tools::bash::Bash;
use crate::tools::sandbox::{self, SandboxPolicy};
use crate::tools::{FileTracker, Tool, ToolContext, ToolOutput};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn enforced() -> bool {
    let support = sandbox::support();
    if !support.is_available() {
        eprintln!("skipped: {support:?}");
    }
    support.is_available()
}

fn project() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext {
        root: dir.path().canonicalize().unwrap(),
        config: ToolsConfig::default(),
        files: Arc::new(FileTracker::default()),
        cancel: CancellationToken::new(),
        memory: None,
        subagents: None,
        task_list: None,
        editor: None,
        denied: Default::default(),
        background: None,
    };
    (dir, ctx)
}

async fn run(bash: &Bash, ctx: &ToolContext, command: &str) -> ToolOutput {
    let args = json!({ "command": command, "timeout_ms": 20_000 });
    let prepared = bash.prepare(&args, ctx).unwrap();
    bash.execute(&args, prepared, ctx).await.unwrap()
}

/// A file outside the project and outside the temp dirs, removed when dropped.
struct Outside(PathBuf);

impl Outside {
    fn in_dir(dir: &Path) -> Outside {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        Outside(dir.join(format!("cairn-sandbox-test-{}-{n}-{}", std::process::id(), fastrand::u64(..))))
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A folder outside the project and every writable root (see `test_support::outside_dir`).
fn far() -> Option<PathBuf> {
    let dir = crate::tools::test_support::outside_dir();
    if dir.is_none() {
        eprintln!("skipped: no folder outside the sandbox's writable roots");
    }
    dir
}

#[tokio::test]
async fn workspace_write_keeps_writes_inside_the_project_and_temp_dirs() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let bash = Bash::sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite));

    let etc = Outside::in_dir(Path::new("/etc"));
    let name = etc.0.file_name().unwrap().to_str().unwrap();
    let out = run(&bash, &ctx, &format!("touch /tmp/../etc/{name}")).await;
    assert!(out.is_error && !etc.0.exists(), "{}", out.content);
    assert!(
        out.content.contains("[sandbox: this probably failed because the sandbox (workspace-write)"),
        "{}",
        out.content
    );
    assert!(out.sandbox_denial.is_some());

    let Some(far) = far() else { return };
    let in_far = Outside::in_dir(&far);
    let out = run(&bash, &ctx, &format!("echo secret > {}", in_far.0.display())).await;
    assert!(out.is_error && !in_far.0.exists(), "{}", out.content);
    assert!(out.sandbox_denial.as_deref().is_some_and(|w| w.contains("only inside the project")), "{out:?}");

    let out = run(&bash, &ctx, "mkdir -p sub && echo inside > sub/x.txt && touch y && mv y z && cat sub/x.txt").await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(std::fs::read_to_string(ctx.root.join("sub/x.txt")).unwrap(), "inside\n");
    assert!(ctx.root.join("z").exists());
    let tmp = Outside::in_dir(Path::new("/tmp"));
    let out = run(&bash, &ctx, &format!("echo t > {}", tmp.0.display())).await;
    assert!(!out.is_error && tmp.0.exists(), "{}", out.content);

    // cairn itself is not confined: only the child was.
    let mine = Outside::in_dir(&far);
    std::fs::write(&mine.0, "cairn can still write here").unwrap();
}

#[tokio::test]
async fn read_only_writes_nowhere_but_reads_everywhere() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    std::fs::write(ctx.root.join("a.txt"), "hello\n").unwrap();
    let bash = Bash::sandboxed(SandboxPolicy::new(SandboxMode::ReadOnly));
    let out = run(&bash, &ctx, "cat a.txt /etc/hostname > /dev/null && echo read-ok && touch b.txt").await;
    assert!(out.content.contains("read-ok"), "{}", out.content);
    assert!(out.is_error && !ctx.root.join("b.txt").exists(), "{}", out.content);
    assert!(out.sandbox_denial.as_deref().is_some_and(|w| w.contains("read-only")), "{out:?}");
}

/// A loopback TCP server that counts the connections it accepts.
fn tcp_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn with_the_network_off_a_loopback_server_cannot_be_reached() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let (port, accepted) = tcp_server();
    let tcp = format!(
        "if command -v curl >/dev/null; then curl -sS --max-time 5 http://127.0.0.1:{port}/; else exec 3<>/dev/tcp/127.0.0.1/{port} && echo ok; fi"
    );

    let off = Bash::sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let out = run(&off, &ctx, &tcp).await;
    assert!(out.is_error, "{}", out.content);
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "the server saw a connection: {}", out.content);
    assert!(out.sandbox_denial.as_deref().is_some_and(|w| w.contains("network")), "{out:?}");

    // UDP too (Landlock covers only TCP; the seccomp filter does the rest).
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let out = run(&off, &ctx, &format!("echo leak > /dev/udp/127.0.0.1/{udp_port}")).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.sandbox_denial.as_deref().is_some_and(|w| w.contains("network")), "{out:?}");
    let mut buf = [0u8; 64];
    assert!(udp.recv(&mut buf).is_err(), "a UDP datagram left the sandbox");

    // The same command with the network on reaches the server: the test can fail.
    let mut on = SandboxPolicy::new(SandboxMode::WorkspaceWrite);
    on.network = true;
    let out = run(&Bash::sandboxed(on), &ctx, &tcp).await;
    assert!(!out.is_error && out.content.contains("ok"), "{}", out.content);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_run_the_user_approves_outside_the_sandbox_is_unconfined() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let bash = Bash::sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let Some(far) = far() else { return };
    let target = Outside::in_dir(&far);
    let args = json!({ "command": format!("echo approved > {}", target.0.display()) });
    let out = bash.execute(&args, bash.prepare(&args, &ctx).unwrap(), &ctx).await.unwrap();
    assert!(out.sandbox_denial.is_some() && !target.0.exists(), "{out:?}");
    let out = bash
        .execute_in_sandbox(&args, bash.prepare(&args, &ctx).unwrap(), &ctx, &SandboxPolicy::full_access())
        .await
        .unwrap();
    assert!(!out.is_error && out.sandbox_denial.is_none(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&target.0).unwrap(), "approved\n");
}

#[tokio::test]
async fn an_ordinary_failure_is_not_blamed_on_the_sandbox() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let bash = Bash::sandboxed(SandboxPolicy::new(SandboxMode::WorkspaceWrite));
    let out = run(&bash, &ctx, "echo 'error: 3 tests failed'; exit 101").await;
    assert!(out.is_error && out.sandbox_denial.is_none(), "{out:?}");
    assert!(!out.content.contains("[sandbox:"));
}
