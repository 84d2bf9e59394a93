use super::*;

/// Every program the command line runs, as `name args` or `?` for what cannot be known.
fn runs(command: &str) -> Vec<String> {
    let script = shell::parse(command);
    assert_eq!(script.unparsable, None, "{command}");
    script
        .parts
        .iter()
        .flat_map(invocations)
        .map(|inv| match inv {
            Invocation::Argv { words, .. } => {
                words.iter().map(|w| if w.literal { w.text.clone() } else { "‹›".into() }).collect::<Vec<_>>().join(" ")
            }
            Invocation::Opaque(_) => "?".into(),
        })
        .collect()
}

fn runs_rm(command: &str) -> bool {
    runs(command).iter().any(|r| r == "?" || r.split(' ').next().is_some_and(|n| n.ends_with("rm")))
}

#[test]
fn wrappers_are_followed_to_the_program_they_run() {
    for command in [
        "exec -a x rm f",
        "env --chdir . rm f",
        "env -C . rm f",
        "env -i FOO=1 rm f",
        "env -S 'rm f'",
        "env --split-string='rm f'",
        "timeout -s KILL 5 rm f",
        "nice -n 5 rm f",
        "nohup rm f",
        "command rm f",
        "builtin exec rm f",
        "stdbuf -o0 rm f",
        "setsid rm f",
        "sudo -u root rm f",
        "busybox rm f",
        "xargs rm",
        "xargs --arg-file F rm",
        "xargs -a F -I{} rm {}",
        "find . -name x -exec rm {} ;",
        "find . -execdir rm -f {} +",
        "sh -c 'rm f'",
        "bash -ec 'rm f'",
        "bash -o pipefail -c 'rm f'",
        "sh -c \"sh -c 'rm f'\"",
        "eval 'rm f'",
        "su -c 'rm f'",
        "flock /tmp/l -c 'rm f'",
        "watch -n1 rm f",
        "git -c alias.x='!rm -rf ~' x",
        "git -c alias.x='!sh -c \"rm f\"' x arg",
    ] {
        assert!(runs_rm(command), "{command}: {:?}", runs(command));
    }
}

#[test]
fn what_cannot_be_known_is_opaque() {
    for command in [
        "x=rm; $x f",
        "$(echo rm) f",
        "python3 -c 'import os; os.remove(\"f\")'",
        "perl -e 'unlink \"f\"'",
        "node -e 'x'",
        "echo rm f | bash",
        "bash -s",
        "source ./x.sh",
        ". ./x.sh",
        "awk 'BEGIN { system(\"rm f\") }'",
        "sed 's/x/rm f/e' a",
        "git -c core.pager='rm f' log",
        "git frobnicate",
        "printf -v 'a[$(rm f)]' x",
        "let 'x=a[$(rm f)]'",
        "echo $((x))",
        "echo ${!x}",
        "declare -n r=x",
        "PATH=/tmp/evil ls",
        "test -v 'a[$(rm f)]'",
        "eval \"$cmd\"",
    ] {
        assert!(runs(command).contains(&"?".to_string()), "{command}: {:?}", runs(command));
    }
}

#[test]
fn plain_commands_run_only_themselves() {
    assert_eq!(runs("git log --oneline"), ["git log --oneline"]);
    assert_eq!(runs("cat a | grep b"), ["cat a", "grep b"]);
    assert_eq!(runs("awk '{print $1}' f"), ["awk {print $1} f"]);
    assert_eq!(runs("sed -i s/a/b/ f"), ["sed -i s/a/b/ f"]);
    assert_eq!(runs("python3 script.py"), ["python3 script.py"]);
    assert_eq!(runs("git -c color.ui=never status"), ["git -c color.ui=never status"]);
}

#[test]
fn options_that_name_a_program_are_followed() {
    for command in [
        "fd -x rm",
        "fd . --exec rm {} ;",
        "fd -X rm",
        "rg --pre rm x",
        "rg --pre=rm x",
        "sort --compress-program=rm a",
        "sort --co=rm a",
        "sort --compress-program rm a",
        "tar -I rm -cf x a",
        "tar cIf rm x a",
        "tar --to-command='rm f' -xf x",
        "tar --checkpoint=1 --checkpoint-action=exec='rm f' -cf x a",
        "man -P 'rm f' ls",
        "rsync -e 'rm f' a b",
        "zip -T -TT 'rm f' x a",
        "socat - EXEC:'rm f'",
        "nc -e rm host 1",
        "tmux new-session 'rm f'",
        "at now",
        "git submodule foreach --recursive 'rm f'",
        "git bisect run rm f",
        "git rebase --exec 'rm f' HEAD~1",
        "git rebase --ex='rm f' HEAD~1",
        "git rebase -x'rm f' HEAD~1",
        "git difftool --extcmd='rm f'",
        "git difftool -x 'rm f'",
        "git fetch --upload-pack='rm f' .",
        "git clone -u 'rm f' . ../x",
        "git grep -O'rm f' x",
        "git send-email --to-cmd='rm f' x",
        "GIT_EDITOR='rm f' git commit",
        "GIT_SEQUENCE_EDITOR='rm f' git rebase -i",
        "GIT_SSH_COMMAND='rm f' git fetch",
        "GIT_EXTERNAL_DIFF='rm f' git diff",
        "LD_PRELOAD=./x.so ls",
        "PAGER='rm f' man ls",
    ] {
        assert!(runs_rm(command), "{command}: {:?}", runs(command));
    }
    // Options that look alike but run nothing.
    for command in [
        "git show --cc HEAD",
        "git log --exit-code",
        "git grep -O alpha",
        "git log -t",
        "sort -o out a",
        "tar -czf x a",
    ] {
        assert!(!runs_rm(command) && runs(command).len() == 1, "{command}: {:?}", runs(command));
    }
}
