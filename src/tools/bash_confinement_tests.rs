//! The sandbox's own gaps, closed, with real commands: attributes outside the writable roots,
//! signals to the user's processes, process and memory limits, cairn's terminal, hard links
//! out of the project, protected paths inside it, reads confined for read-only commands.
//! Skipped (with a note) where the kernel has no Landlock or no user namespaces.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::config::SandboxMode;
use crate::tools::bash::Bash;
use crate::tools::sandbox::{self, SandboxPolicy};
use crate::tools::test_support::project;
use crate::tools::{Tool, ToolContext, ToolOutput};

fn enforced() -> bool {
    let support = sandbox::support();
    let namespaces =
        matches!(support, sandbox::Support::Available { detail } if detail.contains("read-only mount namespace"));
    if !namespaces {
        eprintln!("skipped: {support:?}");
    }
    namespaces
}

async fn run(policy: SandboxPolicy, ctx: &ToolContext, command: &str) -> ToolOutput {
    let bash = Bash::sandboxed(policy);
    let args = json!({ "command": command, "timeout_ms": 30_000 });
    bash.execute(&args, bash.prepare(&args, ctx).unwrap(), ctx).await.unwrap()
}

fn workspace() -> SandboxPolicy {
    SandboxPolicy::new(SandboxMode::WorkspaceWrite)
}

/// A folder outside the project and every writable root, removed when dropped.
struct Outside(PathBuf);

impl Outside {
    fn new() -> Option<Outside> {
        let dir = crate::tools::test_support::outside_dir()?.join(format!(
            "confine-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).ok()?;
        Some(Outside(dir))
    }

    fn file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn attributes_outside_the_writable_roots_cannot_change() {
    if !enforced() {
        return;
    }
    let Some(outside) = Outside::new() else { return eprintln!("skipped: no folder outside the writable roots") };
    let (_dir, ctx) = project();
    let target = outside.file("canary", "keep");
    let before = (mode_of(&target), std::fs::metadata(&target).unwrap().modified().unwrap());
    let t = target.display();
    let out =
        run(workspace(), &ctx, &format!("chmod 777 {t}; touch -d 2001-01-01 {t}; chown 12345 {t}; echo done")).await;
    assert!(out.content.contains("done"), "{}", out.content);
    assert_eq!((mode_of(&target), std::fs::metadata(&target).unwrap().modified().unwrap()), before, "{}", out.content);
    // Inside the project they still change.
    std::fs::write(ctx.root.join("own"), "x").unwrap();
    let out = run(workspace(), &ctx, "chmod 600 own && touch -d 2001-01-01 own && echo ok").await;
    assert!(out.content.contains("ok"), "{}", out.content);
    assert_eq!(mode_of(&ctx.root.join("own")), 0o600);
}

#[tokio::test]
async fn signals_reach_only_the_commands_own_processes() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let mut victim = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = victim.id();
    let out = run(workspace(), &ctx, &format!("kill -9 {pid}; kill -TERM {pid}; sleep 1 & kill $!; echo sent")).await;
    assert!(out.content.contains("sent"), "{}", out.content);
    assert!(victim.try_wait().unwrap().is_none(), "the sandbox killed a process of the user: {}", out.content);
    victim.kill().unwrap();
    let _ = victim.wait();
}

/// Processes running now whose command line contains `marker`.
fn count_processes(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(marker))
        })
        .count()
}

#[tokio::test]
async fn a_command_starts_no_more_processes_than_the_limit() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let policy = SandboxPolicy { max_processes: Some(40), ..workspace() };
    let marker = format!("{}.{}", 30 + fastrand::u32(0..9), fastrand::u32(100_000..999_999));
    let command = format!("for i in $(seq 300); do sleep {marker} & done 2>/dev/null; sleep 0.5; echo started");
    let bash = Bash::sandboxed(policy);
    let args = json!({ "command": command, "timeout_ms": 30_000 });
    let out = bash.execute(&args, bash.prepare(&args, &ctx).unwrap(), &ctx).await.unwrap();
    let running = count_processes(&format!("sleep {marker}"));
    // The command's process group was left running: end it.
    let _ = std::process::Command::new("pkill").args(["-f", &format!("sleep {marker}")]).status();
    assert!(running <= 40, "{running} processes ran: {}", out.content);
    assert!(running > 5, "the limit let some run: {running}");
}

#[tokio::test]
async fn a_command_cannot_take_more_memory_than_the_limit() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let policy = SandboxPolicy { memory_limit_mb: Some(256), ..workspace() };
    let out = run(policy, &ctx, "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo \"got ${#x}\"").await;
    assert!(!out.content.contains("got 400000000"), "{}", out.content);
    let out = run(workspace(), &ctx, "x=$(head -c 1000000 /dev/zero | tr '\\0' a); echo \"got ${#x}\"").await;
    assert!(out.content.contains("got 1000000"), "{}", out.content);
}

#[tokio::test]
async fn no_terminal_is_reachable() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    // A terminal of the test's own, standing for cairn's.
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors; names, termios and size may be null.
    let rc =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0);
    let name = std::fs::read_link(format!("/proc/self/fd/{slave}")).unwrap();
    let n = name.display();
    let command = format!(
        "printf '\\033]52;c;cHduZWQ=\\a' > {n}; echo pwned > {n}; echo x > /dev/tty; exec 3<>/dev/ptmx; \
         perl -e 'open(my $t, \"+<\", \"{n}\") or die \"open: $!\"; ioctl($t, 0x5412, \"!\") or die \"ioctl: $!\"'; ls /dev/pts; echo end"
    );
    let out = run(workspace(), &ctx, &command).await;
    assert!(out.content.contains("end"), "{}", out.content);
    // SAFETY: a non-blocking read of the master side: what the command wrote, if anything.
    let got = unsafe {
        libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK);
        let mut buf = [0u8; 256];
        libc::read(master, buf.as_mut_ptr().cast(), buf.len())
    };
    // SAFETY: closing the descriptors openpty gave.
    unsafe {
        libc::close(master);
        libc::close(slave);
    }
    assert!(got <= 0, "the command reached the terminal: {}", out.content);
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_is_not_writable() {
    if !enforced() {
        return;
    }
    let Some(outside) = Outside::new() else { return eprintln!("skipped: no folder outside the writable roots") };
    let (_dir, ctx) = project();
    let target = outside.file("canary", "outside\n");
    if std::fs::hard_link(&target, ctx.root.join("alias")).is_err() {
        return eprintln!("skipped: the project and {} are on different filesystems", outside.0.display());
    }
    let out = run(workspace(), &ctx, "echo pwned > alias; echo more >> alias; truncate -s0 alias; echo end").await;
    assert!(out.content.contains("end"), "{}", out.content);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "outside\n", "{}", out.content);
}

/// A project that is a git repository, or `None` where git is missing.
fn git_project() -> Option<(tempfile::TempDir, ToolContext)> {
    let (dir, ctx) = project();
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&ctx.root).status();
    git.is_ok_and(|s| s.success()).then_some((dir, ctx))
}

#[tokio::test]
async fn protected_paths_inside_the_project_are_read_only_to_commands() {
    if !enforced() {
        return;
    }
    let Some((_dir, ctx)) = git_project() else { return eprintln!("skipped: no git") };
    std::fs::create_dir_all(ctx.root.join(".cairn")).unwrap();
    std::fs::create_dir_all(ctx.root.join(".claude")).unwrap();
    let config = std::fs::read_to_string(ctx.root.join(".git/config")).unwrap();
    let out = run(
        workspace(),
        &ctx,
        "git config core.fsmonitor 'touch P'; echo '[core] hooksPath = /tmp' >> .git/config; \
         echo 'touch P' > .git/hooks/pre-commit; echo 'allow = [\"bash\"]' > .cairn/settings.local.toml; \
         echo '{}' > .claude/settings.json; echo '{}' > .mcp.json.tmp; echo ok > src.txt; echo end",
    )
    .await;
    assert!(out.content.contains("end"), "{}", out.content);
    assert_eq!(std::fs::read_to_string(ctx.root.join(".git/config")).unwrap(), config);
    assert!(!ctx.root.join(".git/hooks/pre-commit").exists());
    assert!(!ctx.root.join(".cairn/settings.local.toml").exists());
    assert!(!ctx.root.join(".claude/settings.json").exists());
    assert_eq!(std::fs::read_to_string(ctx.root.join("src.txt")).unwrap(), "ok\n", "the rest stays writable");
    // A write replacing a protected file fails as the sandbox's own refusal.
    let out = run(workspace(), &ctx, "git config core.fsmonitor 'touch P'").await;
    assert!(out.sandbox_denial.is_some(), "{out:?}");
}

#[tokio::test]
async fn protected_paths_that_do_not_exist_yet_cannot_be_created_or_swapped_in() {
    if !enforced() {
        return;
    }
    let Some((_dir, ctx)) = git_project() else { return eprintln!("skipped: no git") };
    std::fs::remove_dir_all(ctx.root.join(".git/hooks")).unwrap();
    let config = std::fs::read_to_string(ctx.root.join(".git/config")).unwrap();
    let out = run(
        workspace(),
        &ctx,
        "mkdir -p .codex .claude .cairn .git/hooks; echo 'x' > .codex/config.toml; echo '{}' > .claude/settings.json; \
         echo 'allow = [\"bash\"]' > .cairn/settings.local.toml; echo 'touch P' > .git/hooks/pre-commit; \
         echo '{}' > .mcp.json; mkdir -p /tmp/evil-common; echo /tmp/evil-common > .git/commondir; \
         echo x > .git/config.worktree; mv .git .git-old; \
         mkdir -p .git && echo '[core] fsmonitor = touch P' > .git/config; echo ok > src.txt; echo end",
    )
    .await;
    assert!(out.content.contains("end"), "{}", out.content);
    for created in [
        ".codex/config.toml",
        ".claude/settings.json",
        ".cairn/settings.local.toml",
        ".git/hooks/pre-commit",
        ".mcp.json",
        ".git/commondir",
        ".git/config.worktree",
        ".git-old",
        ".codex",
    ] {
        assert!(ctx.root.join(created).symlink_metadata().is_err(), "{created} is there: {}", out.content);
    }
    assert_eq!(std::fs::read_to_string(ctx.root.join(".git/config")).unwrap(), config);
    assert_eq!(std::fs::read_to_string(ctx.root.join("src.txt")).unwrap(), "ok\n", "the rest stays writable");
    // The command is told, and the user can be offered a run outside the sandbox.
    assert!(out.content.contains(".mcp.json") && out.sandbox_denial.is_some(), "{out:?}");
    let _ = std::fs::remove_dir_all("/tmp/evil-common");
}

#[tokio::test]
async fn a_read_only_command_reads_nothing_outside_the_project() {
    if !enforced() {
        return;
    }
    let Some(outside) = Outside::new() else { return eprintln!("skipped: no folder outside the writable roots") };
    let (_dir, ctx) = project();
    let secret = outside.file("secret", "CANARY-SECRET\n");
    std::fs::write(ctx.root.join("a.txt"), "inside\n").unwrap();
    std::os::unix::fs::symlink(&outside.0, ctx.root.join("link")).unwrap();
    let confined = workspace().for_read_only_command(&[]);
    let command = format!(
        "cat a.txt; cat {}; cat link/secret; grep -R CANARY . ; ls {}; cat /etc/shadow; echo end",
        secret.display(),
        outside.0.display()
    );
    let out = run(confined.clone(), &ctx, &command).await;
    assert!(out.content.contains("inside") && out.content.contains("end"), "{}", out.content);
    assert!(!out.content.contains("CANARY-SECRET"), "{}", out.content);
    // Nor another process's environment.
    let mut other = std::process::Command::new("sleep").arg("30").env("CAIRN_TEST_KEY", "CANARY-ENV").spawn().unwrap();
    let out = run(confined.clone(), &ctx, &format!("cat /proc/{}/environ; ps eww; echo end", other.id())).await;
    other.kill().unwrap();
    let _ = other.wait();
    assert!(!out.content.contains("CANARY-ENV"), "{}", out.content);
    // And it writes nothing, not even an attribute of its own project.
    std::fs::write(ctx.root.join("mine"), "x").unwrap();
    let before = mode_of(&ctx.root.join("mine"));
    let out = run(confined, &ctx, "chmod 600 mine; touch new; echo x > mine; echo end").await;
    assert!(out.content.contains("end"), "{}", out.content);
    assert_eq!(mode_of(&ctx.root.join("mine")), before);
    assert!(!ctx.root.join("new").exists());
    assert_eq!(std::fs::read_to_string(ctx.root.join("mine")).unwrap(), "x");
}

#[tokio::test]
async fn read_only_git_works_confined() {
    if !enforced() {
        return;
    }
    let (_dir, ctx) = project();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.email=a@b", "-c", "user.name=n", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&ctx.root)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !git(&["init", "-q"]) {
        return eprintln!("skipped: no git");
    }
    std::fs::write(ctx.root.join("a"), "x").unwrap();
    assert!(git(&["add", "a"]) && git(&["commit", "-qm", "first"]));
    let out =
        run(workspace().for_read_only_command(&[]), &ctx, "git log --oneline && git status --short && git diff HEAD")
            .await;
    assert!(!out.is_error && out.content.contains("first"), "{}", out.content);
}
