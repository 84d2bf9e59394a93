use std::path::PathBuf;

use super::*;
use crate::tools::permissions::shell;

fn root() -> PathBuf {
    std::env::temp_dir().join("cairn-readonly-root")
}

/// Whether every part of `command` is read-only and stays inside the project.
fn read_only_inside(command: &str) -> bool {
    let script = shell::parse(command);
    assert!(script.unparsable.is_none(), "{command}");
    script.parts.iter().all(|p| check(p, &root()).is_ok_and(|paths| paths.iter().all(|p| p.inside_project)))
}

fn why_not(command: &str) -> String {
    let script = shell::parse(command);
    script.parts.iter().find_map(|p| check(p, &root()).err()).unwrap_or_else(|| panic!("{command} is read-only"))
}

#[test]
fn everyday_reading_commands_are_read_only() {
    for command in [
        "ls -la",
        "git log --oneline | head -3",
        "git status && git diff HEAD~1 -- src",
        "git show HEAD:src/main.rs",
        "git branch -a",
        "git branch --list 'feat/*'",
        "git tag -l",
        "git config --get user.name",
        "rg -n foo src",
        "grep -rn TODO . | wc -l",
        "find . -name '*.rs' -type f",
        "cat Cargo.toml | head -20",
        "sed -n '1,20p' src/lib.rs",
        "sed 's/foo/bar/g' a.txt",
        "sort -u names.txt | uniq -c",
        "cargo tree -d",
        "wc -l < src/lib.rs",
        "ls 2>/dev/null",
        "x=1; echo $x",
        "[[ -f Cargo.toml ]] && cat Cargo.toml",
        "echo $(git rev-parse HEAD)",
        "date +%F",
    ] {
        assert!(
            read_only_inside(command),
            "{command}: {:?}",
            shell::parse(command).parts.iter().map(|p| check(p, &root()).err()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn writing_running_and_dangerous_flags_are_not() {
    for (command, why) in [
        ("touch x", "not in the read-only command set"),
        ("echo hi > f", "writes to `f`"),
        ("git commit -m x", "`git commit` is not read-only"),
        ("git push", "`git push` is not read-only"),
        ("git branch new-feature", "creates a branch"),
        ("git branch -D main", "changes branches"),
        ("git diff --output=patch.diff", "`--output=patch.diff`"),
        ("git -c core.pager=sh log", "changes where or how git runs"),
        ("git stash", "changes the working tree"),
        ("git config user.name x", "sets a value"),
        ("find . -delete", "`-delete`"),
        ("find . -name x -exec rm {} ;", "`-exec`"),
        ("sed -i s/a/b/ f", "edits files in place"),
        ("sed -i.bak s/a/b/ f", "edits files in place"),
        ("sed 's/a/b/w out' f", "may write files"),
        ("sed -n '1e rm x' f", "may write files"),
        ("sort -o out in", "writes a file"),
        ("uniq in out", "writes its last file argument"),
        ("rg --pre ./x foo", "`--pre`"),
        ("fd -x rm", "`-x`"),
        ("cat $HOME/.ssh/id_rsa", "expanded when it runs"),
        ("FOO=1 ls", "with FOO=1 set"),
        ("PATH=/tmp/evil:$PATH", "sets `PATH`"),
        ("export A=1", "changes the environment"),
        ("env rm x", "runs or changes something"),
        ("./ls", "a program cairn does not know"),
        ("cargo build", "only `cargo tree`"),
        ("python -c 'print(1)'", "runs code"),
        ("date -s 2020-01-01", "sets the clock"),
        ("awk '{print}' f", "not in the read-only command set"),
    ] {
        let got = why_not(command);
        assert!(got.contains(why), "{command}: {got}");
    }
}

#[test]
fn reads_outside_the_project_are_found() {
    let outside = |command: &str| {
        let script = shell::parse(command);
        script
            .parts
            .iter()
            .flat_map(|p| check(p, &root()).unwrap())
            .filter(|p| !p.inside_project)
            .map(|p| p.display)
            .collect::<Vec<_>>()
    };
    assert_eq!(outside("cat /etc/passwd"), ["/etc/passwd"]);
    assert_eq!(outside("ls ../other"), [root().parent().unwrap().join("other").display().to_string()]);
    assert_eq!(outside("grep -r --exclude-from=/etc/x foo ."), ["/etc/x"]);
    assert!(outside("cat ~/.ssh/id_rsa")[0].ends_with(".ssh/id_rsa"));
    assert_eq!(outside("cd").len(), 1, "cd with no target goes home");
    assert_eq!(outside("wc -l < /etc/hosts"), ["/etc/hosts"]);
    assert!(outside("git log -- src").is_empty());
}
