use serde_json::json;

use super::*;
use crate::tools::permissions::Level;
use crate::tools::resolve_path;

fn policy(rules: &[(Effect, Level, &str)]) -> Policy {
    let mut set = Rules::new();
    for (effect, level, text) in rules {
        set.push(
            *effect,
            *level,
            super::super::rule::Rule::parse(text).unwrap(),
            super::super::rules::Origin::Unwritten,
        );
    }
    Policy::new(set, root())
}

/// A project folder that is a git repository, shared by the tests of this file and by every run
/// (one folder in the temp dir, not one left behind per test process).
fn root() -> std::path::PathBuf {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join("cairn-decide-root");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        dir.canonicalize().unwrap()
    })
    .clone()
}

fn bash(policy: &Policy, mode: Mode, command: &str) -> Decision {
    let args = json!({ "command": command });
    policy.decide(mode, &Call { tool: "bash", access: Access::Execute, args: &args, paths: &[] })
}

fn file(policy: &Policy, mode: Mode, tool: &str, access: Access, path: &str) -> Decision {
    let paths = [resolve_path(&policy.root, path)];
    let args = json!({ "path": path });
    policy.decide(mode, &Call { tool, access, args: &args, paths: &paths })
}

#[test]
fn a_git_log_rule_covers_the_pipeline_but_not_what_follows_it() {
    let p = policy(&[(Effect::Allow, Level::ProjectLocal, "bash(git log *)")]);
    let d = bash(&p, Mode::Edit, "git log --oneline | head -3");
    assert_eq!(d.permission, Permission::Allow);
    assert!(d.decided_by.label().contains("allow bash(git log *) (project-local)"), "{}", d.decided_by.label());
    let d = bash(&p, Mode::Edit, "git log; touch x");
    assert_eq!(d.permission, Permission::Ask);
    assert!(d.reason.contains("`touch x`"), "{}", d.reason);
    assert_eq!(d.parts.iter().map(|p| p.permission).collect::<Vec<_>>(), [Permission::Allow, Permission::Ask]);
    let d = bash(&p, Mode::Edit, "git log && git push");
    assert_eq!(d.permission, Permission::Ask);
    assert_eq!(d.choices.exact.iter().map(|r| r.text()).collect::<Vec<_>>(), ["bash(git push)"]);
    assert_eq!(d.choices.prefix.iter().map(|r| r.text()).collect::<Vec<_>>(), ["bash(git push *)"]);
}

#[test]
fn deny_beats_allow_whatever_the_levels() {
    let p = policy(&[(Effect::Allow, Level::Cli, "bash(git *)"), (Effect::Deny, Level::User, "bash(git push *)")]);
    let d = bash(&p, Mode::Edit, "git status && git push --force");
    assert_eq!(d.permission, Permission::Deny);
    assert!(d.reason.contains("denied by the rule `bash(git push *)` (user config)"), "{}", d.reason);
    // Through a wrapper too.
    assert_eq!(bash(&p, Mode::Edit, "timeout 60 git push").permission, Permission::Deny);
    assert_eq!(bash(&p, Mode::Edit, "env GIT_TRACE=1 git push").permission, Permission::Deny);
    assert_eq!(bash(&p, Mode::Edit, "bash -c 'git push'").permission, Permission::Deny);
}

#[test]
fn among_equal_effects_the_most_specific_level_is_named() {
    let p = policy(&[
        (Effect::Allow, Level::User, "bash(cargo test *)"),
        (Effect::Allow, Level::Session, "bash(cargo test)"),
    ]);
    let d = bash(&p, Mode::Edit, "cargo test");
    assert!(d.decided_by.label().contains("(session)"), "{}", d.decided_by.label());
    let p =
        policy(&[(Effect::Allow, Level::Cli, "bash(cargo *)"), (Effect::Ask, Level::User, "bash(cargo publish *)")]);
    let d = bash(&p, Mode::Edit, "cargo publish");
    assert_eq!(d.permission, Permission::Ask, "ask beats allow");
    assert!(d.choices.is_empty(), "an ask rule offers nothing to remember: an allow would not change it");
}

#[test]
fn read_only_commands_run_unasked_and_the_rest_asks_in_edit_mode() {
    let p = policy(&[]);
    let d = bash(&p, Mode::Edit, "rg -n foo src | head");
    assert_eq!((d.permission, d.decided_by.short()), (Permission::Allow, "read-only set".to_string()));
    let d = bash(&p, Mode::Edit, "cargo test");
    assert_eq!((d.permission, d.decided_by.clone()), (Permission::Ask, DecidedBy::Mode(Mode::Edit)));
    assert_eq!((d.decided_by.short(), d.decided_by.label()), ("mode".to_string(), "mode: edit".to_string()));
    assert_eq!(d.choices.exact[0].text(), "bash(cargo test)");
    assert_eq!(d.choices.prefix[0].text(), "bash(cargo test *)");
    let d = bash(&p, Mode::Edit, "rm -rf build");
    assert!(d.choices.prefix.is_empty(), "no prefix for rm");
    assert_eq!(d.choices.exact[0].text(), "bash(rm -rf build)");
    assert_eq!(bash(&p, Mode::Edit, "cat /etc/hosts").permission, Permission::Ask);
    assert_eq!(bash(&p, Mode::Edit, "echo hi > notes.txt").choices.exact[0].text(), "file_write(./notes.txt)");
}

#[test]
fn plan_mode_runs_the_read_only_set_and_refuses_everything_else() {
    let p =
        policy(&[(Effect::Allow, Level::User, "bash(cargo test *)"), (Effect::Allow, Level::User, "file_write(**)")]);
    for ok in ["git log", "ls -la", "rg foo", "git diff HEAD~1 | wc -l", "find . -name '*.rs'"] {
        assert_eq!(bash(&p, Mode::Plan, ok).permission, Permission::Allow, "{ok}");
    }
    for refused in [
        "touch x",
        "echo > f",
        "git commit -m x",
        "find . -delete",
        "sed -i s/a/b/ f",
        "cargo test",
        "cat /etc/passwd",
        "ls )",
    ] {
        let d = bash(&p, Mode::Plan, refused);
        assert_eq!(d.permission, Permission::Deny, "{refused}");
        assert!(d.reason.contains("plan mode"), "{refused}: {}", d.reason);
    }
    assert_eq!(file(&p, Mode::Plan, "file_write", Access::Write, "a.txt").permission, Permission::Deny);
    assert_eq!(file(&p, Mode::Plan, "file_read", Access::Read, "/etc/hosts").permission, Permission::Deny);
    assert_eq!(file(&p, Mode::Plan, "file_read", Access::Read, "src/lib.rs").permission, Permission::Allow);
}

#[test]
fn a_file_read_deny_rule_holds_for_cat_too() {
    let p = policy(&[(Effect::Deny, Level::Project, "file_read(.env)")]);
    assert_eq!(file(&p, Mode::Edit, "file_read", Access::Read, "config/.env").permission, Permission::Deny);
    let d = bash(&p, Mode::Edit, "cat config/.env");
    assert_eq!(d.permission, Permission::Deny);
    assert!(d.reason.contains("file_read(.env)"), "{}", d.reason);
    assert_eq!(bash(&p, Mode::Edit, "wc -l < .env").permission, Permission::Deny);
}

#[test]
fn file_rules_with_negation() {
    let p = policy(&[(Effect::Allow, Level::Project, "file_write(!.env)")]);
    assert_eq!(file(&p, Mode::Edit, "file_write", Access::Write, "src/a.rs").permission, Permission::Allow);
    let d = file(&p, Mode::Edit, "file_write", Access::Write, ".env");
    assert_eq!(d.permission, Permission::Ask);
    assert_eq!(d.choices.exact[0].text(), "file_write(./.env)");
    let d = file(&p, Mode::Edit, "file_edit", Access::Write, "src/deep/a.rs");
    assert_eq!(d.choices.prefix[0].text(), "file_edit(src/deep/)");
    assert_eq!(file(&p, Mode::Edit, "file_write", Access::Write, "/etc/x").permission, Permission::Ask);
}

#[test]
fn a_global_memory_needs_approval_in_every_mode() {
    let p = policy(&[(Effect::Allow, Level::Cli, "memory_save")]);
    for mode in [Mode::Edit, Mode::Plan] {
        let args = json!({"type": "user", "title": "t", "content": "c", "scope": "global"});
        let d = p.decide(mode, &Call { tool: "memory_save", access: Access::Memory, args: &args, paths: &[] });
        assert_eq!(d.permission, Permission::Ask, "{mode:?}");
        assert!(d.decided_by.label().contains("memory_save(global) (built-in)"), "{}", d.decided_by.label());
        assert!(d.choices.is_empty(), "only once: a global memory is approved one at a time");
        let args = json!({"type": "user", "title": "t", "content": "c"});
        let d = p.decide(mode, &Call { tool: "memory_save", access: Access::Memory, args: &args, paths: &[] });
        assert_eq!(d.permission, Permission::Allow, "{mode:?}");
    }
}

#[test]
fn unparsable_commands_ask_and_ask_mode_refuses() {
    let p = policy(&[(Effect::Allow, Level::User, "bash(echo *)")]);
    let d = bash(&p, Mode::Edit, "echo \"unterminated");
    assert_eq!((d.permission, d.decided_by.clone()), (Permission::Ask, DecidedBy::Unparsable));
    assert!(d.choices.is_empty());
    assert_eq!(bash(&p, Mode::Ask, "ls").permission, Permission::Deny);
    let p = policy(&[(Effect::Deny, Level::User, "bash")]);
    assert_eq!(bash(&p, Mode::Edit, "ls").permission, Permission::Deny);
    assert_eq!(bash(&p, Mode::Edit, "ls )").permission, Permission::Deny);
}

#[test]
fn a_new_file_is_created_and_an_existing_one_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = policy(&[]);
    p.root = dir.path().canonicalize().unwrap();
    std::fs::write(p.root.join("old.txt"), "x").unwrap();
    assert_eq!(file(&p, Mode::Edit, "file_write", Access::Write, "new.txt").reason, "creates new.txt");
    assert_eq!(file(&p, Mode::Edit, "file_write", Access::Write, "old.txt").reason, "changes old.txt");
    assert_eq!(bash(&p, Mode::Edit, "git push origin main").reason, "`git push` is not read-only", "one command: why");
}

#[test]
fn a_deny_rule_matches_the_program_however_it_is_named() {
    let p = policy(&[(Effect::Deny, Level::User, "bash(rm *)"), (Effect::Allow, Level::Project, "bash(git *)")]);
    for spelled in [
        "/bin/rm -f x",
        "\\rm x",
        "'r''m' x",
        "$'\\x72m' x",
        "x=rm; $x f",
        "{rm,f}",
        "r{m,} x",
        "exec -a x rm f",
        "env --chdir . rm f",
        "env -S 'rm f'",
        "xargs --arg-file F rm",
        "sh -c 'sh -c \"rm f\"'",
        "find . -exec rm {} ;",
        "git -c alias.x='!rm -rf ~' x",
        "timeout 5 rm f",
        "FOO=1 rm f",
        "python3 -c 'import shutil'",
        "echo $((x))",
        "eval 'rm f'",
        "bash -c \"$cmd\"",
        "bash -c 'bash -c \"bash -c \\\"bash -c rm\\\"\"'",
    ] {
        for mode in [Mode::Edit, Mode::Plan] {
            let d = bash(&p, mode, spelled);
            assert_eq!(d.permission, Permission::Deny, "{spelled} ({mode:?}): {}", d.reason);
            assert!(matches!(d.decided_by, DecidedBy::Rule(_)), "{spelled}: {:?}", d.decided_by);
        }
    }
    // What no deny rule could match still goes by the other rules.
    assert_eq!(bash(&p, Mode::Edit, "git log --oneline").permission, Permission::Allow);
    assert_eq!(bash(&p, Mode::Edit, "ls -la").permission, Permission::Allow);
}

#[test]
fn an_allow_rule_does_not_cover_what_its_command_runs_in_turn() {
    let p =
        policy(&[(Effect::Allow, Level::Project, "bash(git *)"), (Effect::Allow, Level::Project, "bash(timeout *)")]);
    for command in
        ["git -c alias.x='!touch P' x", "timeout 5 touch P", "git frobnicate", "git -c core.pager='touch P' log"]
    {
        assert_eq!(bash(&p, Mode::Edit, command).permission, Permission::Ask, "{command}");
    }
    assert_eq!(bash(&p, Mode::Edit, "timeout 5 ls").permission, Permission::Allow);
    assert_eq!(bash(&p, Mode::Edit, "git commit -m x").permission, Permission::Allow);
}

#[test]
fn a_file_read_deny_rule_holds_for_what_bash_reads() {
    let p = policy(&[(Effect::Deny, Level::Project, "file_read(.env)")]);
    std::fs::write(p.root.join(".env"), "KEY=secret").unwrap();
    for command in [
        "cat .en?",
        "cat .e*",
        "cat ./.[e]nv",
        "grep -r KEY .",
        "grep -R KEY",
        "rg KEY",
        "git show HEAD:.env",
        "git grep KEY",
        "git cat-file -p :.env",
        "cp .env /tmp/x",
        "awk 1 .env",
        "python3 x.py .env",
        "sort --random-source=.env a",
        "tail -n +1 ./.env",
        "cd sub/.. && cat .env",
    ] {
        let d = bash(&p, Mode::Edit, command);
        assert_eq!(d.permission, Permission::Deny, "{command}: {}", d.reason);
    }
    assert_eq!(bash(&p, Mode::Edit, "grep -r KEY src").permission, Permission::Allow);
    assert_eq!(bash(&p, Mode::Edit, "cat a.txt").permission, Permission::Allow);
}

#[test]
fn unanalysable_commands_are_refused_not_asked_when_a_deny_rule_could_match() {
    let p = policy(&[(Effect::Deny, Level::User, "bash(git push *)")]);
    for command in ["{git,push}", "echo \"unterminated", "git $sub"] {
        let d = bash(&p, Mode::Edit, command);
        assert_eq!(d.permission, Permission::Deny, "{command}");
        assert!(matches!(d.decided_by, DecidedBy::Rule(_)), "{command}");
    }
    let p = policy(&[]);
    assert_eq!(bash(&p, Mode::Edit, "{git,push}").permission, Permission::Ask, "no deny rule: it asks");
}

#[test]
fn read_only_lines_say_so_for_the_sandbox() {
    let p = policy(&[(Effect::Allow, Level::Project, "bash(git log *)")]);
    assert!(bash(&p, Mode::Edit, "ls -la | wc -l").read_only);
    assert!(!bash(&p, Mode::Edit, "git log | wc -l").read_only, "a rule allowed a part: the configured sandbox");
    assert!(!bash(&p, Mode::Edit, "touch x").read_only);
}

#[test]
fn plan_mode_reads_resolve_after_tilde_patterns_and_links() {
    let p = policy(&[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f"), "x").unwrap();
    let link = p.root.join("link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(outside.path(), &link).unwrap();
    for command in [
        "cat ~root/.profile",
        "cat ~/.profile",
        "cat ~+/../outside/f",
        "cd ~+/.. && cat f",
        "cat link/f",
        "cat lin[k]/f",
        "cat link/../f",
        "ls /",
        "cd / && cat etc/hostname",
        "sort --files0-from=- ",
    ] {
        let d = bash(&p, Mode::Plan, command);
        assert_eq!(d.permission, Permission::Deny, "{command}: {}", d.reason);
    }
    let _ = std::fs::remove_file(&link);
}

#[test]
fn mcp_rules_name_a_server_or_one_tool_exactly() {
    let p = policy(&[(Effect::Allow, Level::Project, "mcp__evil__search")]);
    let call = |tool| Call { tool, access: Access::Execute, args: &serde_json::Value::Null, paths: &[] };
    assert_eq!(p.decide(Mode::Edit, &call("mcp__evil__search")).permission, Permission::Allow);
    assert_eq!(p.decide(Mode::Edit, &call("mcp__evil__search__wipe")).permission, Permission::Ask);
    let p = policy(&[(Effect::Allow, Level::Project, "mcp__evil")]);
    assert_eq!(p.decide(Mode::Edit, &call("mcp__evil__search__wipe")).permission, Permission::Allow);
    assert_eq!(p.decide(Mode::Edit, &call("mcp__evilish__x")).permission, Permission::Ask);
}

#[test]
fn protected_paths_ask_and_only_the_user_may_approve() {
    let p = policy(&[
        (Effect::Allow, Level::Project, "file_write"),
        (Effect::Allow, Level::ProjectLocal, "file_edit(.git/**)"),
    ]);
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        ".cairn/settings.local.toml",
        ".claude/settings.json",
        ".mcp.json",
        ".codex/x",
    ] {
        for tool in ["file_write", "file_edit"] {
            let d = file(&p, Mode::Edit, tool, Access::Write, path);
            assert_eq!(d.permission, Permission::Ask, "{tool} {path}");
            assert!(d.needs_user, "{tool} {path}");
        }
    }
    let d = bash(&p, Mode::Edit, "echo x > .git/config");
    assert!(d.permission == Permission::Ask && d.needs_user, "{d:?}");
    // Whatever the rules: not even the user's own rule naming the path, at any level.
    for level in [Level::User, Level::Cli, Level::Session] {
        let own = policy(&[(Effect::Allow, level, "file_edit(.git/config)")]);
        let d = file(&own, Mode::Edit, "file_edit", Access::Write, ".git/config");
        assert!(d.permission == Permission::Ask && d.needs_user, "{level:?}: {d:?}");
        assert!(d.choices.exact.is_empty() && d.choices.prefix.is_empty(), "no rule to remember: {d:?}");
    }
}
