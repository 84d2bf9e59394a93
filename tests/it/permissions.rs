//! Permission rules from real files deciding real `bash` runs: compound commands checked part
//! by part, deny over allow across levels, a rule remembered with `p` honoured by the next
//! session (and ignored by git), and plan mode changing nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use cairn::config::{self, Config, SandboxMode, ToolsConfig};
use cairn::conversation::Mode;
use cairn::tools::bash::Bash;
use cairn::tools::permissions::{Call, DecidedBy, Decision, Permission, Policy, load_rules};
use cairn::tools::sandbox::{self, SandboxPolicy};
use cairn::tools::{Access, FileTracker, Tool, ToolContext, ToolOutput};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

/// A git project with four commits and a file mentioning `foo`.
fn repo() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    for i in 1..=4 {
        std::fs::write(root.join("a.txt"), format!("foo {i}\n")).unwrap();
        git(&root, &["add", "."]);
        git(&root, &["commit", "-qm", &format!("commit {i}")]);
    }
    let ctx = ToolContext {
        root,
        config: ToolsConfig::default(),
        files: Arc::new(FileTracker::default()),
        cancel: CancellationToken::new(),
        memory: None,
    };
    (dir, ctx)
}

/// A session's policy, read the way cairn reads it at start: the user's config file and the
/// project's settings files.
fn session_policy(config_path: &Path, root: &Path) -> Policy {
    let config: Config = config::load(config_path).unwrap();
    let project = config::load_project_settings(root).unwrap();
    Policy::new(load_rules(&config, config_path, &project).unwrap(), root)
}

/// Decide, then run only what is allowed (an ask is answered "no", as headless without --yes).
async fn gate(
    policy: &Policy,
    mode: Mode,
    bash: &Bash,
    ctx: &ToolContext,
    command: &str,
) -> (Decision, Option<ToolOutput>) {
    let args = json!({ "command": command });
    let decision = policy.decide(mode, &Call { tool: "bash", access: Access::Execute, args: &args, paths: &[] });
    if decision.permission != Permission::Allow {
        return (decision, None);
    }
    let prepared = bash.prepare(&args, ctx).unwrap();
    let output = bash.execute(&args, prepared, ctx).await.unwrap();
    (decision, Some(output))
}

#[tokio::test]
async fn a_git_log_rule_runs_the_pipeline_unasked_and_asks_for_what_follows() {
    let (_dir, ctx) = repo();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(ctx.root.join(".cairn")).unwrap();
    std::fs::write(ctx.root.join(".cairn/settings.local.toml"), "[permissions]\nallow = [\"bash(git log *)\"]\n")
        .unwrap();
    let policy = session_policy(&home.path().join("config.toml"), &ctx.root);
    let bash = Bash::default();

    let (d, out) = gate(&policy, Mode::Edit, &bash, &ctx, "git log --oneline | head -3").await;
    assert_eq!(d.permission, Permission::Allow);
    assert!(d.decided_by.label().contains("allow bash(git log *) (project-local"), "{}", d.decided_by.label());
    assert!(d.decided_by.label().contains("settings.local.toml:2"), "{}", d.decided_by.label());
    let out = out.unwrap();
    let lines: Vec<&str> = out.content.lines().filter(|l| l.contains("commit ")).collect();
    assert_eq!(lines.len(), 3, "{}", out.content);

    let (d, out) = gate(&policy, Mode::Edit, &bash, &ctx, "git log; touch x").await;
    assert_eq!(d.permission, Permission::Ask);
    assert!(d.reason.contains("`touch x`"), "{}", d.reason);
    assert!(out.is_none() && !ctx.root.join("x").exists());

    let (d, _) = gate(&policy, Mode::Edit, &bash, &ctx, "git log && git push").await;
    assert_eq!(d.permission, Permission::Ask);
    assert_eq!(d.choices.session.iter().map(|r| r.text()).collect::<Vec<_>>(), ["bash(git push)"]);
}

#[tokio::test]
async fn a_deny_in_the_user_config_beats_an_allow_in_the_project() {
    let (_dir, ctx) = repo();
    let home = tempfile::tempdir().unwrap();
    let config_path = home.path().join("config.toml");
    std::fs::write(&config_path, "model = \"x\"\n\n[permissions]\ndeny = [\"bash(touch *)\"]\n").unwrap();
    std::fs::create_dir(ctx.root.join(".cairn")).unwrap();
    std::fs::write(
        ctx.root.join(".cairn/settings.toml"),
        "[permissions]\nallow = [\"bash(touch *)\", \"bash(git *)\"]\n",
    )
    .unwrap();
    let policy = session_policy(&config_path, &ctx.root);

    let (d, out) = gate(&policy, Mode::Edit, &Bash::default(), &ctx, "git status && touch denied.txt").await;
    assert_eq!(d.permission, Permission::Deny);
    assert!(out.is_none() && !ctx.root.join("denied.txt").exists());
    assert!(d.reason.contains("denied by the rule `bash(touch *)` (user config"), "{}", d.reason);
    assert!(d.reason.contains(&format!("{}:4", config_path.display())), "{}", d.reason);
    assert!(matches!(&d.decided_by, DecidedBy::Rule(r) if r.starts_with("deny bash(touch *)")));
}

#[tokio::test]
async fn p_writes_the_rule_to_the_local_file_and_the_next_session_honours_it() {
    let (_dir, ctx) = repo();
    let home = tempfile::tempdir().unwrap();
    let config_path = home.path().join("config.toml");
    let bash = Bash::default();

    // Session one: asked; the user presses `p`.
    let mut first = session_policy(&config_path, &ctx.root);
    let (d, _) = gate(&first, Mode::Edit, &bash, &ctx, "touch made-by-rule.txt").await;
    assert_eq!(d.permission, Permission::Ask);
    let rules: Vec<&str> = d.choices.project.iter().map(|r| r.text()).collect();
    assert_eq!(rules, ["bash(touch *)"]);
    let written = first.remember(&d.choices.project).unwrap();
    assert_eq!(written, ctx.root.join(".cairn/settings.local.toml"));
    let (d, _) = gate(&first, Mode::Edit, &bash, &ctx, "touch other.txt").await;
    assert_eq!(d.permission, Permission::Allow, "in force at once");

    // git does not see the local file.
    let ignored = Command::new("git")
        .args(["check-ignore", "-q", ".cairn/settings.local.toml"])
        .current_dir(&ctx.root)
        .status()
        .unwrap();
    assert!(ignored.success(), "the local settings file must be git-ignored");
    let status = Command::new("git").args(["status", "--porcelain"]).current_dir(&ctx.root).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(!status.contains("settings.local.toml"), "{status}");

    // Session two: a fresh read of the files.
    let second = session_policy(&config_path, &ctx.root);
    let (d, out) = gate(&second, Mode::Edit, &bash, &ctx, "touch made-by-rule.txt").await;
    assert_eq!(d.permission, Permission::Allow);
    assert!(
        d.decided_by.label().contains("project-local") && d.decided_by.label().contains("settings.local.toml:"),
        "{}",
        d.decided_by.label()
    );
    assert!(!out.unwrap().is_error && ctx.root.join("made-by-rule.txt").exists());
}

/// Every file under `root` (`.git` included) with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[tokio::test]
async fn plan_mode_runs_read_only_commands_and_changes_no_file() {
    let (_dir, ctx) = repo();
    let home = tempfile::tempdir().unwrap();
    // Even an allow rule does not open plan mode to a write.
    std::fs::write(home.path().join("config.toml"), "[permissions]\nallow = [\"bash(touch *)\"]\n").unwrap();
    let policy = session_policy(&home.path().join("config.toml"), &ctx.root);
    // Plan mode's commands also run in the read-only sandbox where there is one.
    let bash = Bash::sandboxed(SandboxPolicy::new(SandboxMode::ReadOnly));
    let before = snapshot(&ctx.root);

    for command in ["git log", "ls -la", "rg foo"] {
        let (d, out) = gate(&policy, Mode::Plan, &bash, &ctx, command).await;
        assert_eq!(d.permission, Permission::Allow, "{command}: {}", d.reason);
        assert_eq!(d.decided_by, DecidedBy::ReadOnlySet, "{command}");
        let out = out.unwrap();
        match command {
            "git log" => assert!(out.content.contains("commit 4"), "{}", out.content),
            "ls -la" => assert!(out.content.contains("a.txt"), "{}", out.content),
            // rg may not be installed; it ran either way.
            _ => assert!(out.content.contains("foo 4") || out.exit_code == Some(127), "{}", out.content),
        }
    }
    for command in ["touch x", "echo > f", "git commit --allow-empty -m x", "find . -delete", "sed -i s/foo/bar/ a.txt"]
    {
        let (d, out) = gate(&policy, Mode::Plan, &bash, &ctx, command).await;
        assert_eq!(d.permission, Permission::Deny, "{command}");
        assert!(d.reason.contains("plan mode"), "{command}: {}", d.reason);
        assert!(out.is_none());
    }
    assert!(snapshot(&ctx.root) == before, "plan mode changed files");
    if sandbox::support().is_available() {
        // Had one slipped through, the sandbox would still have stopped it.
        let out = bash
            .execute(&json!({"command": "touch x"}), bash.prepare(&json!({"command": "touch x"}), &ctx).unwrap(), &ctx)
            .await
            .unwrap();
        assert!(out.is_error && !ctx.root.join("x").exists(), "{}", out.content);
    }
}
