use super::*;
use crate::tools::permissions::shell;
use crate::tools::resolve_path;

/// Whether `rule` covers every simple command of `command`.
fn covers(rule: &str, command: &str) -> Vec<bool> {
    let rule = Rule::parse(rule).unwrap();
    shell::parse(command)
        .parts
        .iter()
        .map(|p| rule.matches(Subject::Command { env: &p.env, words: &p.words }, true))
        .collect()
}

#[test]
fn a_command_prefix_covers_each_simple_command_on_its_own() {
    assert_eq!(covers("bash(git log *)", "git log --oneline | head -3"), [true, false]);
    assert_eq!(covers("bash(git log *)", "git log && git push"), [true, false]);
    assert_eq!(covers("bash(git log *)", "git log"), [true]);
    assert_eq!(covers("bash(git log *)", "git logs"), [false]);
    assert_eq!(covers("bash(git log:*)", "git log -p"), [true]);
    assert_eq!(covers("bash(cargo test)", "cargo test --release"), [false]);
    assert_eq!(covers("bash(cargo test)", "cargo test"), [true]);
    assert_eq!(covers("bash(git * --force)", "git push origin --force"), [true]);
    assert_eq!(covers("bash(npm run test*)", "npm run test:unit"), [true]);
    assert_eq!(covers("bash(npm run test*)", "npm run build"), [false]);
    assert_eq!(covers("bash", "rm -rf /"), [true]);
}

#[test]
fn only_a_whole_star_stands_for_an_expansion() {
    assert_eq!(covers("bash(cat *)", "cat $HOME/x"), [true]);
    assert_eq!(covers("bash(cat src/*)", "cat $HOME/x"), [false]);
    assert_eq!(covers("bash(git log)", "$GIT log"), [false]);
    assert_eq!(covers("bash(cargo test *)", "FOO=1 cargo test"), [false]);
    assert_eq!(covers("bash('a*b')", "a*b"), [true]);
    assert_eq!(covers("bash('a*b')", "aXb"), [false]);
}

#[test]
fn path_globs_are_relative_to_the_root_and_stay_on_their_side_of_it() {
    let root = std::env::temp_dir().join("cairn-rule-root");
    let p = |raw: &str| resolve_path(&root, raw);
    let matches = |rule: &str, raw: &str| Rule::parse(rule).unwrap().matches(Subject::Paths(&[p(raw)]), true);
    assert!(matches("file_edit(src/**)", "src/a/b.rs"));
    assert!(!matches("file_edit(src/**)", "tests/a.rs"));
    assert!(!matches("file_edit(src/*)", "src/a/b.rs"), "`*` does not cross `/`");
    assert!(matches("file_write(.env)", "config/.env"), "a name without `/` matches at any depth");
    assert!(!matches("file_write(!.env)", ".env"));
    assert!(matches("file_write(!.env)", "src/main.rs"));
    assert!(!matches("file_write(!.env)", "/etc/passwd"), "a relative negation says nothing about outside paths");
    assert!(matches("file_write(/etc/**)", "/etc/passwd"));
    assert!(matches("file_read(build/)", "build/out/x.o"));
    assert!(matches("file_edit(./Cargo.toml)", "Cargo.toml"));
    assert!(!matches("file_edit(./Cargo.toml)", "sub/Cargo.toml"), "`./` anchors at the root");
}

#[test]
fn an_allow_needs_every_path_and_a_deny_any() {
    let root = std::env::temp_dir().join("cairn-rule-root");
    let paths = [resolve_path(&root, "src/a.rs"), resolve_path(&root, "secrets/k")];
    let rule = Rule::parse("grep(src/**)").unwrap();
    assert!(!rule.matches(Subject::Paths(&paths), true));
    assert!(rule.matches(Subject::Paths(&paths), false));
}

#[test]
fn memory_and_mcp_rules() {
    let global = Rule::parse("memory_save(global)").unwrap();
    assert!(global.matches(Subject::Memory(MemoryScope::Global), true));
    assert!(!global.matches(Subject::Memory(MemoryScope::Project), true));
    let server = Rule::parse("mcp__github").unwrap();
    assert!(server.names_tool("mcp__github__create_issue"));
    assert!(!server.names_tool("mcp__githubx__create_issue"));
    assert!(!Rule::parse("bash").unwrap().names_tool("bash2"));
}

#[test]
fn bad_rules_say_what_is_wrong() {
    let err = |text: &str| Rule::parse(text).unwrap_err();
    assert!(err("bsh(ls)").contains("there is no tool `bsh`"), "{}", err("bsh(ls)"));
    assert!(err("Bash(ls)").contains("did you mean `bash`"), "{}", err("Bash(ls)"));
    assert!(err("bash(ls").contains("must end with `)`"));
    assert!(err("bash()").contains("pattern is empty"));
    assert!(err("memory_save(everywhere)").contains("`global` or `project`"));
    assert!(err("memory_search(x)").contains("takes no pattern"));
    assert!(err("file_edit(src/[)").contains("not a valid glob"), "{}", err("file_edit(src/[)"));
    assert!(err("bash('unterminated)").contains("inside a quote"));
    assert!(err("file_write(!)").contains("needs a glob"));
}
