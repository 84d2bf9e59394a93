use std::time::Instant;

use serde_json::json;

use super::*;
use crate::tools::test_support::{project, run};

/// Far below the 30 s the test commands would take if not stopped, far above a slow CI's noise.
const QUICK: Duration = Duration::from_secs(10);

async fn bash(ctx: &ToolContext, args: serde_json::Value) -> ToolOutput {
    run(&Bash::default(), ctx, args).await.unwrap()
}

/// The pid a test command wrote to `file`, waiting for the write.
async fn pid_in(ctx: &ToolContext, file: &str) -> libc::pid_t {
    let path = ctx.root.join(file);
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{file} never got a pid");
}

/// Whether `pid` runs; a zombie (dead, waiting for a reaper we don't control) does not count.
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')));
    exists && !zombie
}

async fn gone_soon(pid: libc::pid_t) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn bash_reports_output_and_exit_code() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "echo hello; exit 3"})).await;
    assert_eq!(out.content, "hello\n[exit code 3]");
    assert_eq!(out.exit_code, Some(3));
    assert!(out.is_error);
    let ok = bash(&ctx, json!({"command": "printf 'no newline'"})).await;
    assert_eq!(ok.content, "no newline\n[exit code 0]");
    assert!(!ok.is_error);
}

#[tokio::test]
async fn bash_interleaves_stdout_and_stderr_in_arrival_order() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "echo out1; echo err1 >&2; echo out2; echo err2 >&2"})).await;
    assert_eq!(out.content, "out1\nerr1\nout2\nerr2\n[exit code 0]");
}

#[tokio::test]
async fn bash_without_output_says_so() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "true"})).await;
    assert_eq!(out.content, "(no output)\n[exit code 0]");
}

#[tokio::test]
async fn bash_runs_in_the_project_root_with_pagers_and_colour_off() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "pwd; echo $PAGER $GIT_PAGER $TERM $NO_COLOR $CAIRN; cat"})).await;
    assert_eq!(out.content, format!("{}\ncat cat dumb 1 1\n[exit code 0]", ctx.root.display()), "stdin is empty");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn bash_runs_in_its_own_session_and_process_group() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "echo $$; cut -d' ' -f5,6 /proc/$$/stat"})).await;
    let lines: Vec<&str> = out.content.lines().collect();
    let pid = lines[0];
    assert_eq!(lines[1], format!("{pid} {pid}"), "process group and session are the shell's own: {}", out.content);
}

#[tokio::test]
async fn bash_timeout_kills_the_process_group() {
    let (_d, ctx) = project();
    let started = Instant::now();
    let args = json!({"command": "echo before; sleep 30 & echo $! > bg.pid; sleep 30", "timeout_ms": 300});
    let out = bash(&ctx, args).await;
    assert!(started.elapsed() < QUICK, "took {:?}", started.elapsed());
    assert!(
        out.content.starts_with("before\n[timed out after 0.3s; the process group was killed]\n"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("[killed by signal 15]"), "{}", out.content);
    assert!(out.is_error);
    assert_eq!(out.exit_code, Some(128 + 15));
    let grandchild = pid_in(&ctx, "bg.pid").await;
    assert!(gone_soon(grandchild).await, "background sleep {grandchild} survived the timeout");
}

#[tokio::test]
async fn bash_escalates_to_sigkill_when_sigterm_is_ignored() {
    let (_d, ctx) = project();
    let started = Instant::now();
    let args = json!({"command": "trap '' TERM; echo $$ > sh.pid; sleep 30", "timeout_ms": 300});
    let out = bash(&ctx, args).await;
    let took = started.elapsed();
    assert!(took >= TERM_GRACE && took < QUICK, "took {took:?}");
    assert!(out.content.ends_with("[killed by signal 9]"), "{}", out.content);
    assert!(gone_soon(pid_in(&ctx, "sh.pid").await).await);
}

#[tokio::test]
async fn bash_interrupt_stops_the_command_and_keeps_its_output() {
    let (_d, ctx) = project();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let out = bash(&ctx, json!({"command": "echo partial; sleep 30"})).await;
    assert!(started.elapsed() < QUICK, "took {:?}", started.elapsed());
    assert!(out.content.starts_with("partial\n[interrupted by the user]\n[killed by signal"), "{}", out.content);
}

#[tokio::test]
async fn bash_background_child_does_not_hang_and_keeps_running() {
    let (_d, ctx) = project();
    let started = Instant::now();
    let out = bash(&ctx, json!({"command": "sleep 30 & echo $! > bg.pid; echo started", "timeout_ms": 60000})).await;
    assert!(started.elapsed() < QUICK, "took {:?}", started.elapsed());
    assert_eq!(out.content, "started\n[exit code 0]");
    let background = pid_in(&ctx, "bg.pid").await;
    assert!(alive(background), "a normal exit leaves background jobs alone");
    // SAFETY: sends a signal to the sleep this test started.
    unsafe { libc::kill(background, libc::SIGKILL) };
}

#[tokio::test]
async fn bash_timeout_defaults_from_config_and_is_clamped_to_the_maximum() {
    let (_d, mut ctx) = project();
    ctx.config.bash_timeout_ms = 400;
    ctx.config.bash_max_timeout_ms = 700;
    let out = bash(&ctx, json!({"command": "sleep 30"})).await;
    assert!(out.content.contains("[timed out after 0.4s;"), "{}", out.content);
    let started = Instant::now();
    let out = bash(&ctx, json!({"command": "sleep 30", "timeout_ms": 3_600_000})).await;
    assert!(started.elapsed() < QUICK);
    assert!(out.content.contains("[timed out after 0.7s;"), "{}", out.content);
}

#[tokio::test]
async fn bash_reads_large_output_completely() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "seq 1 200000; seq 1 3 >&2"})).await;
    assert_eq!(out.content.lines().count(), 200_000 + 3 + 1);
    assert!(out.content.ends_with("199999\n200000\n1\n2\n3\n[exit code 0]"));
}

#[tokio::test]
async fn bash_shows_invalid_utf8_lossily() {
    let (_d, ctx) = project();
    let out = bash(&ctx, json!({"command": "printf 'caf\\351\\n'"})).await;
    assert_eq!(out.content, "caf\u{FFFD}\n[exit code 0]");
}

#[test]
fn prepare_shows_the_command_and_rejects_an_empty_one() {
    let (_d, ctx) = project();
    let prepared = Bash::default().prepare(&json!({"command": "cargo test", "description": "junk"}), &ctx).unwrap();
    assert_eq!(prepared.summary, "$ cargo test");
    assert!(prepared.paths.is_empty() && prepared.change.is_none());
    assert!(Bash::default().prepare(&json!({"command": "  "}), &ctx).unwrap_err().0.contains("command is empty"));
}

#[test]
fn output_buffer_keeps_the_head_and_the_tail() {
    let mut buffer = OutputBuffer::new(4, 3);
    buffer.push(b"ab");
    buffer.push(b"cdefg");
    for _ in 0..10 {
        buffer.push(b"xyz");
    }
    buffer.push(b"123");
    assert_eq!(buffer.into_text(), "abcd\n[… 33 bytes of output omitted …]\n123");
    let mut small = OutputBuffer::new(4, 3);
    small.push(b"abcdefg");
    assert_eq!(small.into_text(), "abcdefg");
}
