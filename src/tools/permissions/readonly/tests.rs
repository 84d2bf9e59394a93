use std::path::{Path, PathBuf};

use super::*;
use crate::tools::permissions::shell;

/// A project with a `.git`, `a.txt`, `src/lib.rs` and `.env`, and a folder beside it.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("p");
    for f in [".git/HEAD", "a.txt", "src/lib.rs", ".env", "names.txt"] {
        std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
        std::fs::write(root.join(f), "x").unwrap();
    }
    (dir, root)
}

fn check_all(root: &Path, command: &str) -> Result<Vec<Reads>, String> {
    let script = shell::parse(command);
    if let Some(why) = script.unparsable {
        return Err(format!("unparsable: {why}"));
    }
    let cwds = vec![root.to_path_buf()];
    let cx = Context { root, cwds: &cwds };
    script.parts.iter().map(|p| check(p, &cx)).collect()
}

#[test]
fn everyday_reading_commands_are_read_only() {
    let (_d, root) = project();
    for command in [
        "ls -la",
        "ls -lah --color=never src",
        "git log --oneline | head -3",
        "git log -5 --format='%h %s' --since=2.weeks",
        "git status && git diff HEAD~1 -- src",
        "git status --short --branch",
        "git show HEAD:src/lib.rs",
        "git show --stat HEAD",
        "git diff --stat --cached",
        "git blame -L 1,10 src/lib.rs",
        "git branch -a",
        "git branch --list 'feat/*'",
        "git tag -l",
        "git config --get user.name",
        "git rev-parse --abbrev-ref HEAD",
        "git ls-files -z",
        "git grep -n foo -- src",
        "rg -n foo src",
        "rg --type rust -i 'fn main' -g '*.rs'",
        "grep -rn TODO . | wc -l",
        "grep -E 'a|b' -- a.txt",
        "find . -name '*.rs' -type f",
        "find src -maxdepth 2 -newer a.txt -print0",
        "cat Cargo.toml | head -20",
        "head -n 20 a.txt",
        "tail -f -n5 a.txt",
        "sed -n '1,20p' src/lib.rs",
        "sed 's/foo/bar/g' a.txt",
        "sed -E -e 's/a/b/' -e '/x/d' a.txt",
        "sort -u names.txt | uniq -c",
        "sort --numeric-sort --reverse -k2 names.txt",
        "wc -l < src/lib.rs",
        "ls 2>/dev/null",
        "x=1; echo $x",
        "[[ -f Cargo.toml ]] && cat Cargo.toml",
        "[ -f a.txt ] && echo yes",
        "test -n \"$x\"",
        "echo $(git rev-parse HEAD)",
        "date +%F",
        "date -u '+%Y'",
        "LC_ALL=C sort names.txt",
        "du -sh src",
        "stat -c %s a.txt",
        "diff -u a.txt src/lib.rs",
        "jq '.name' a.txt",
        "cut -d: -f1 a.txt",
        "tr a-z A-Z < a.txt",
        "wc -lc a.txt src/lib.rs",
        "cat *.txt",
        "printf '%s\\n' a b",
        "command -v git",
        "type -a ls",
        "cd src && ls",
        "ps aux",
        "ps -ef",
        "md5sum a.txt",
        "basename /a/b.txt .txt",
        "realpath src",
        "uname -a",
        "echo $((1 + 2))",
        "echo ${x:-default} ${#x} ${x%.txt}",
        "bash -c 'ls && cat a.txt'",
        "tree -L 2",
        "fd -e rs",
        "xxd a.txt | head",
        "od -c a.txt",
    ] {
        assert!(check_all(&root, command).is_ok(), "{command}: {:?}", check_all(&root, command));
    }
}

#[test]
fn anything_not_proven_read_only_is_not() {
    let (_d, root) = project();
    for (command, why) in [
        // Writing, and options that write or run programs.
        ("touch x", "not in the read-only command set"),
        ("echo hi > f", "writes to `f`"),
        ("sort -o out in", "writes a file"),
        ("sort --outp=out in", "writes a file"),
        ("sort --output out in", "writes a file"),
        ("sort --compress-program=sh names.txt", "runs a program"),
        ("sort --comp sh names.txt", "runs a program"),
        ("sort -T /tmp names.txt", "temporary files"),
        ("sort --files0-from=- ", "names of the files"),
        ("sort --files0 list", "names of the files"),
        ("wc --files0-from=list", "names of the files"),
        ("uniq in out", "writes its last file argument"),
        ("date --se=2020-01-01", "sets the clock"),
        ("date -s 2020-01-01", "sets the clock"),
        ("date --set='x'", "sets the clock"),
        ("sed -es/x/touch\\ P/e a.txt", "may write files"),
        ("sed --ex='s/x/y/e' a.txt", "may write files"),
        ("sed --expression=1e\\ touch\\ P a.txt", "may write files"),
        ("sed --in s/a/b/ a.txt", "in place"),
        ("sed --in-pl=.bak s/a/b/ a.txt", "in place"),
        ("sed -ni p a.txt", "in place"),
        ("sed -i s/a/b/ f", "in place"),
        ("sed 's/a/b/w out' f", "may write files"),
        ("sed -n '1e rm x' f", "may write files"),
        ("sed -f script.sed a.txt", "script from a file"),
        ("sed --fi=script.sed a.txt", "script from a file"),
        ("sed 'r /etc/passwd' a.txt", "may write files"),
        ("git grep -O'touch P' foo", "opens the files in a program"),
        ("git grep --open-files-in-pager=sh foo", "opens the files in a program"),
        ("git grep --open foo", "opens the files in a program"),
        ("git diff --output=patch.diff", "writes a file"),
        ("git diff --outp=x", "ambiguous"),
        ("git diff --outpu=x", "ambiguous"),
        ("git diff --output=x", "writes a file"),
        ("git log --ext-diff -p", "external diff"),
        ("git log --show-signature", "runs gpg"),
        ("rg --pre ./x foo", "runs a program"),
        ("rg --pre=./x foo", "runs a program"),
        ("rg --hostname-bin=./x foo", "runs a program"),
        ("rg -z foo", "decompression"),
        ("rg --search-zip foo", "decompression"),
        ("rg --pr=./x foo", "does not know"),
        ("fd -x rm", "runs a command"),
        ("fd --exec rm", "runs a command"),
        ("fd -X rm", "runs a command"),
        ("fd --exec-batch=rm", "runs a command"),
        ("find . -delete", "deletes"),
        ("find . -name x -exec rm {} ;", "runs a command"),
        ("find . -fprint out", "writes a file"),
        ("find . -okdir rm {} ;", "runs a command"),
        ("find . -files0-from list", "names of its starting points"),
        ("tree -o out", "writes a file"),
        ("file -C -m x", "compiled magic"),
        ("file --compile", "compiled magic"),
        ("file -f names.txt", "names of the files"),
        ("diff -l a b", "runs `pr`"),
        ("diff --pag a b", "runs `pr`"),
        ("md5sum -c sums", "checksum file"),
        ("sha256sum --check sums", "checksum file"),
        ("xxd -r dump out", "turns a dump back"),
        ("xxd a.txt out", "writes its second file"),
        ("jq -L /tmp 'import \"x\" as x; .' f", "modules"),
        ("jq 'import \"evil\" as e; .' f", "modules"),
        ("ps eww", "environment"),
        ("ps auxe", "environment"),
        ("ls --frobnicate", "does not know"),
        ("cat --number --bogus a.txt", "does not know"),
        ("head -Q a.txt", "does not know"),
        // Evaluation contexts.
        ("printf -v 'a[$(touch P)]' x", "assigns a variable"),
        ("printf -v PATH /tmp/evil", "assigns a variable"),
        ("printf $fmt x", "may be `-v`"),
        ("test -v 'a[$(touch P)]'", "evaluates a variable name"),
        ("[ -v 'a[$(touch P)]' ]", "evaluates"),
        ("[ \"$op\" x ]", "unparsable"),
        ("test \"$op\" x", "could be `-v`"),
        ("[[ -v a ]]", "bash evaluates"),
        ("[[ $x -eq 1 ]]", "bash evaluates"),
        ("echo $((x))", "bash evaluates"),
        ("echo $((x + 1))", "bash evaluates"),
        ("echo $[x]", "bash evaluates"),
        ("((x++))", "bash evaluates"),
        ("echo ${!x}", "bash evaluates"),
        ("echo ${a[$i]}", "bash evaluates"),
        ("echo ${x@P}", "bash evaluates"),
        ("echo ${x:=y}", "bash evaluates"),
        ("a[$i]=1", "bash evaluates"),
        ("for ((i=0; i<3; i++)); do echo $i; done", "bash evaluates"),
        ("x='a[$(touch P)]'; echo $((x))", "bash evaluates"),
        // Environment before the command, and variables that steer what follows.
        ("FOO=1 ls", "with FOO=1 set"),
        ("BASH_ENV=/tmp/x bash -c 'cat f'", "with BASH_ENV"),
        ("PS4='$(touch P)' bash -x -c 'cat f'", "with PS4"),
        ("LC_ALL=/tmp/evil sort a.txt", "with LC_ALL"),
        ("TZ=/etc/shadow date", "with TZ"),
        ("PATH=/tmp/evil:$PATH", "sets `PATH`"),
        ("export A=1", "changes the environment"),
        ("declare -i x", "changes the environment"),
        ("bash -i -c 'ls'", "not in the read-only command set"),
        ("bash --rcfile x -c 'ls'", "not in the read-only command set"),
        // Programs that run other programs.
        ("env rm x", "runs or changes something"),
        ("env -S 'cat a.txt'", "runs or changes something"),
        ("command rm x", "runs the command"),
        ("./ls", "not a system program"),
        ("xargs cat", "not in the read-only command set"),
        ("awk '{print}' f", "not in the read-only command set"),
        ("cargo tree", "choose which programs"),
        ("cargo --version", "choose which programs"),
        ("rustc --version", "choose which programs"),
        ("npm --version", "choose which programs"),
        ("python3 --version", "runs code"),
        ("python3 -m pytest", "`python3` runs code"),
        ("node -e 1", "`node` runs code"),
        ("make -n", "choose which programs"),
        ("git -c core.pager=sh log", "changes which repository"),
        ("git -C /tmp log", "changes which repository"),
        ("git --git-dir=/tmp/x log", "changes which repository"),
        ("git --exec-path=/tmp log", "changes which repository"),
        ("git commit -m x", "`git commit` is not read-only"),
        ("git push", "`git push` is not read-only"),
        ("git branch new-feature", "creates a branch"),
        ("git branch -D main", "may change branches"),
        ("git stash", "changes the working tree"),
        ("git config user.name x", "sets a value"),
        ("git config --global --get x", "may set a value or read another file"),
        ("git remote show origin", "contacts one"),
        ("git help -w log", "not read-only"),
        // Expansions where a file or an option goes.
        ("cat $HOME/.ssh/id_rsa", "expanded when it runs"),
        ("cat $(echo a.txt)", "expanded when it runs"),
        ("$x a.txt", "computed when it runs"),
        ("cd -", "only the shell knows"),
        ("cd $dir", "expanded when it runs"),
    ] {
        let got = match check_all(&root, command) {
            Ok(_) => panic!("{command} passed as read-only"),
            Err(e) => e,
        };
        assert!(got.contains(why), "{command}: {got}");
    }
}

#[test]
fn a_name_a_pattern_matches_can_be_an_option() {
    let (_d, root) = project();
    std::fs::write(root.join("--output=pwned"), "").unwrap();
    assert!(check_all(&root, "sort *").unwrap_err().contains("writes a file"));
    let (_d2, other) = project();
    std::fs::write(other.join("-i"), "").unwrap();
    assert!(check_all(&other, "sed p *").unwrap_err().contains("in place"));
}

#[test]
fn git_in_another_repository_is_not_read_only() {
    let (_d, root) = project();
    std::fs::create_dir_all(root.join("vendor.git/objects")).unwrap();
    std::fs::create_dir_all(root.join("vendor.git/refs")).unwrap();
    std::fs::write(root.join("vendor.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("sub/.git")).unwrap();
    let cwds = vec![root.clone(), root.join("vendor.git")];
    let cx = Context { root: &root, cwds: &cwds };
    assert!(check(&shell::parse("git log").parts[0], &cx).unwrap_err().contains("another repository"));
    let cwds = vec![root.clone(), root.join("sub")];
    let cx = Context { root: &root, cwds: &cwds };
    let part = &shell::parse("git status").parts[0];
    assert!(check(part, &cx).unwrap_err().contains("another repository"));
    let bare = tempfile::tempdir().unwrap();
    let cwds = vec![bare.path().to_path_buf()];
    assert!(check(part, &Context { root: bare.path(), cwds: &cwds }).unwrap_err().contains("not a git repository"));
}

#[test]
fn what_a_command_reads_is_reported() {
    let (_d, root) = project();
    let reads =
        |command: &str| check_all(&root, command).unwrap().into_iter().flat_map(|r| r.paths).collect::<Vec<_>>();
    assert_eq!(reads("cat /etc/passwd"), ["/etc/passwd"]);
    assert_eq!(reads("grep -r --exclude-from=/etc/x foo ."), ["/etc/x", "."]);
    assert_eq!(reads("grep -r foo"), ["."]);
    assert_eq!(reads("rg foo"), ["."]);
    assert_eq!(reads("cat .en?"), [".env"]);
    assert_eq!(reads("wc -l < /etc/hosts"), ["/etc/hosts"]);
    assert!(reads("git log -- src").contains(&"src".to_string()));
    assert!(reads("git diff").contains(&".".to_string()), "a patch of the whole repository");
    assert!(reads("git log --oneline").is_empty(), "messages only");
    let git = check_all(&root, "git show HEAD:.env").unwrap();
    assert_eq!(git[0].repo_paths, [".env"]);
    assert!(check_all(&root, "grep -R x .").unwrap()[0].follows_links);
    assert!(!check_all(&root, "grep -r x .").unwrap()[0].follows_links);
    assert!(check_all(&root, "find -L .").unwrap()[0].follows_links);
    assert_eq!(check_all(&root, "cd src").unwrap()[0].cd.as_deref(), Some("src"));
    let home = std::env::var("HOME").unwrap();
    assert_eq!(check_all(&root, "cd").unwrap()[0].cd.as_deref(), Some(home.as_str()));
}
