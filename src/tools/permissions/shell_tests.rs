use super::*;

/// Each part as `kind: words`, words of an expansion in ‹›.
fn parts(command: &str) -> Vec<String> {
    let script = parse(command);
    assert_eq!(script.unparsable, None, "{command}");
    script
        .parts
        .iter()
        .map(|p| {
            let words: Vec<String> =
                p.words.iter().map(|w| if w.literal { w.text.clone() } else { format!("‹{}›", w.text) }).collect();
            let env = if p.env.is_empty() { String::new() } else { format!("{} ", p.env.join(" ")) };
            format!("{:?}: {env}{}", p.kind, words.join(" "))
        })
        .collect()
}

#[test]
fn lists_pipelines_and_sequences_split_into_simple_commands() {
    assert_eq!(parts("git log --oneline | head -3"), ["Command: git log --oneline", "Command: head -3"]);
    assert_eq!(parts("git log && git push"), ["Command: git log", "Command: git push"]);
    assert_eq!(parts("a || b; c & d"), ["Command: a", "Command: b", "Command: c", "Command: d"]);
    assert_eq!(parts("git log; touch x"), ["Command: git log", "Command: touch x"]);
}

#[test]
fn subshells_groups_bodies_and_substitutions_are_looked_into() {
    assert_eq!(parts("(cd sub && ls) || { echo no; }"), ["Command: cd sub", "Command: ls", "Command: echo no"]);
    assert_eq!(parts("echo $(rm -rf /)"), ["Command: rm -rf /", "Command: echo ‹$(rm -rf /)›"]);
    assert_eq!(parts("echo `touch x`"), ["Command: touch x", "Command: echo ‹`touch x`›"]);
    assert_eq!(parts("diff <(ls a) <(ls b)"), ["Command: ls a", "Command: ls b", "Command: diff ‹<(ls a)› ‹<(ls b)›"]);
    assert_eq!(parts("for f in *.rs; do wc -l $f; done"), ["Command: wc -l ‹$f›"]);
    assert_eq!(
        parts("if [[ -f x ]]; then cat x; else rm y; fi"),
        ["Test: [[ -f x ]]", "Command: cat x", "Command: rm y"]
    );
    assert_eq!(parts("f() { rm -rf build; }; f"), ["Command: rm -rf build", "Command: f"]);
    assert_eq!(
        parts("x=$(git rev-parse HEAD)"),
        ["Command: git rev-parse HEAD", "Assignment: ‹x=$(git rev-parse HEAD)›"]
    );
    assert_eq!(parts("cat <<EOF\nhi $(whoami)\nEOF"), ["Command: cat", "Command: whoami"]);
}

#[test]
fn redirections_to_files_are_writes_and_descriptors_are_not() {
    assert_eq!(parts("echo hi > f"), ["Command: echo hi", "Write: f"]);
    assert_eq!(parts("cargo test >> log.txt 2>&1"), ["Command: cargo test", "Write: log.txt"]);
    assert_eq!(parts("make &> out"), ["Command: make", "Write: out"]);
    assert_eq!(parts("ls 2>/dev/null >&2"), ["Command: ls"]);
    assert_eq!(parts("sort < in.txt"), ["Command: sort", "Read: in.txt"]);
    assert_eq!(parts("cat <<'EOF' > notes.md\ntext\nEOF"), ["Command: cat", "Write: notes.md"]);
    assert_eq!(parts("(a; b) > out"), ["Command: a", "Command: b", "Write: out"]);
    assert_eq!(parts("echo > \"$HOME/y\""), ["Command: echo", "Write: ‹\"$HOME/y\"›"]);
}

#[test]
fn quotes_are_removed_and_expansions_are_marked() {
    assert_eq!(parts(r#"git log --format='%H %s' "a b" c\ d"#), ["Command: git log --format=%H %s a b c d"]);
    assert_eq!(parts("cat $HOME/.ssh/id_rsa"), ["Command: cat ‹$HOME/.ssh/id_rsa›"]);
    assert_eq!(parts("rm -rf {build,/}"), ["Command: rm -rf build /"], "braces expand as bash expands them");
    assert_eq!(parts("$'\\x72m' -rf x"), ["Command: rm -rf x"]);
    assert_eq!(parts("find . -exec rm {} \\;"), ["Command: find . -exec rm {} ;"]);
    assert_eq!(parts("FOO=1 BAR=2 cargo test"), ["Command: FOO=1 BAR=2 cargo test"]);
    assert_eq!(parts("export PATH=/evil:$PATH"), ["Declaration: export ‹PATH=/evil:$PATH›"]);
}

#[test]
fn bash_c_with_a_literal_script_is_parsed_in_turn() {
    assert_eq!(parts("bash -lc 'git status && git push'"), ["Command: git status", "Command: git push"]);
    assert_eq!(parts("sh -c \"ls\" arg0"), ["Command: ls"]);
    assert_eq!(parts("bash -c \"$CMD\""), ["Command: bash -c ‹\"$CMD\"›"]);
    assert_eq!(parts("bash script.sh"), ["Command: bash script.sh"]);
}

#[test]
fn what_cannot_be_read_is_unparsable() {
    for bad in ["echo \"unterminated", "ls )", "if then fi", "bash -c 'ls )'"] {
        assert!(parse(bad).unparsable.is_some(), "{bad}");
    }
    let nested = "bash -c \"bash -c 'bash -c \\\"bash -c ls\\\"'\"";
    assert!(parse(nested).unparsable.is_some_and(|w| w.contains("deep")), "{:?}", parse(nested));
}

#[test]
fn display_quotes_only_what_needs_it() {
    let script = parse("git commit -m 'fix: a bug' > log");
    let shown: Vec<String> = script.parts.iter().map(Part::display).collect();
    assert_eq!(shown, ["git commit -m 'fix: a bug'", "> log"]);
}

#[test]
fn deep_nesting_is_refused_before_it_is_walked() {
    for (open, close) in [("(", ")"), ("$(", ")"), ("{ ", ";}"), ("echo $((", "))"), ("`", "`")] {
        let command = format!("{}true{}", open.repeat(10_000), close.repeat(10_000));
        let script = parse(&command);
        assert!(script.unparsable.is_some(), "{open}: {:?}", script.unparsable);
    }
    let shallow = format!("{}true{}", "(".repeat(20), ")".repeat(20));
    assert_eq!(parse(&shallow).unparsable, None);
}

#[test]
fn evaluation_contexts_become_parts_of_their_own() {
    let kinds = |command: &str| parse(command).parts.iter().map(|p| p.kind).collect::<Vec<_>>();
    for command in ["echo $((x))", "echo ${!x}", "a[$i]=1", "[[ $x -eq 1 ]]", "((x++))", "echo ${a[$i]}", "[[ -v x ]]"]
    {
        assert!(kinds(command).contains(&PartKind::Evaluation), "{command}: {:?}", kinds(command));
    }
    for command in ["echo $((1 + 2))", "echo ${x:-y} ${#x}", "[[ -f x ]]", "[[ 1 -eq 1 ]]", "echo ${a[0]}"] {
        assert!(!kinds(command).contains(&PartKind::Evaluation), "{command}: {:?}", kinds(command));
    }
}
