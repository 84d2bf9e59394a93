use super::*;

/// A project with one of every kind of thing a folder can configure.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        ".cairn/settings.toml",
        "[permissions]\nallow = [\"bash(make *)\"]\ndeny = [\"bash(rm *)\"]\n\n[[hooks.SessionStart]]\ncommand = \"./start.sh\"\n\n[mcp_servers.db]\ncommand = \"db-server\"\n",
    );
    write(".cairn/settings.local.toml", "[sandbox]\nmode = \"full-access\"\n");
    write(".cairn/commands/deploy.md", "---\ndescription: Deploy\n---\nStatus: !`git status`\n");
    write(".claude/commands/explain.md", "Explain $ARGUMENTS\n");
    write(".claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill forms\n---\nRun fill.py\n");
    write(".claude/skills/pdf/fill.py", "print('x')\n");
    write(".cairn/skills/notes.md", "---\ndescription: Take notes\n---\nBe brief\n");
    write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews diffs\n---\nReview.\n");
    write("AGENTS.md", "Use tabs.\n");
    (dir, root)
}

fn config_at(path: &Path) -> Config {
    crate::config::load(path).unwrap()
}

fn ask(config_file: &Path, root: &Path) -> Option<TrustQuestion> {
    match check(&config_at(config_file), config_file, root, root).unwrap() {
        TrustCheck::Ask(q) => Some(q),
        TrustCheck::Settled(t) => {
            assert!(t.is_trusted(), "a settled folder is a trusted one");
            None
        }
    }
}

#[test]
fn every_kind_is_listed_what_runs_first() {
    let (_dir, root) = project();
    let inventory = Inventory::project(&root, &root).unwrap();
    let shown: Vec<(Kind, bool, &str)> = inventory.items.iter().map(|i| (i.kind, i.runs(), i.file.as_str())).collect();
    assert_eq!(
        shown,
        [
            (Kind::Hook, true, ".cairn/settings.toml"),
            (Kind::McpServer, true, ".cairn/settings.toml"),
            (Kind::Command, true, ".cairn/commands/deploy.md"),
            (Kind::Skill, true, ".claude/skills/pdf/"),
            (Kind::AllowRule, true, ".cairn/settings.toml"),
            (Kind::Sandbox, true, ".cairn/settings.local.toml"),
            (Kind::Command, false, ".claude/commands/explain.md"),
            (Kind::Skill, false, ".cairn/skills/notes.md"),
            (Kind::Instructions, false, "AGENTS.md"),
            (Kind::AgentType, false, ".claude/agents/reviewer.md"),
        ]
    );
    assert_eq!(inventory.items[2].what, "/deploy runs: git status");
    assert_eq!(inventory.items[2].line, 4);
    assert!(inventory.items[3].what.contains("fill.py"), "{}", inventory.items[3].what);
}

#[test]
fn trusting_is_recorded_and_a_changed_or_new_runnable_thing_asks_again_naming_it() {
    let (_dir, root) = project();
    let home = tempfile::tempdir().unwrap();
    let config_file = home.path().join("config.toml");
    let first = ask(&config_file, &root).expect("a first question");
    assert!(first.changes.is_empty() && first.trusted_at.is_none() && first.runs_anything());
    assert!(first.refusal().contains("hook SessionStart: ./start.sh  (.cairn/settings.toml:5)"), "{}", first.refusal());
    assert!(first.trust().unwrap().is_trusted());
    assert!(ask(&config_file, &root).is_none(), "trusted as it is");

    // Instructions and plain prompts are covered by the folder's trust, edits included.
    std::fs::write(root.join("AGENTS.md"), "Use spaces.\n").unwrap();
    std::fs::write(root.join(".claude/commands/explain.md"), "Explain it all\n").unwrap();
    assert!(ask(&config_file, &root).is_none());

    // A hook's command changes, a server is added, a script of a skill changes.
    std::fs::write(
        root.join(".cairn/settings.toml"),
        "[permissions]\nallow = [\"bash(make *)\"]\ndeny = [\"bash(rm *)\"]\n\n[[hooks.SessionStart]]\ncommand = \"./evil.sh\"\n\n[mcp_servers.db]\ncommand = \"db-server\"\n\n[mcp_servers.extra]\nurl = \"https://h.example/mcp\"\n",
    )
    .unwrap();
    std::fs::write(root.join(".claude/skills/pdf/fill.py"), "import os\n").unwrap();
    let again = ask(&config_file, &root).expect("asked again");
    assert!(again.trusted_at.is_some());
    assert_eq!(
        again.lines(),
        [
            "changed: hook SessionStart: ./evil.sh  (.cairn/settings.toml:5)",
            "new: MCP server extra: https://h.example/mcp  (.cairn/settings.toml:11)",
            "changed: skill pdf: Fill forms (with fill.py)  (.claude/skills/pdf/:1)",
        ]
    );
    assert!(again.refusal().contains("changed since you trusted it"), "{}", again.refusal());
    // Declining records nothing: the next start asks again.
    assert!(!again.decline().is_trusted());
    assert!(ask(&config_file, &root).is_some());
}

#[test]
fn a_folder_with_nothing_to_trust_is_not_asked_about_and_adopting_records_only_what_was_picked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config_file = home.path().join("config.toml");
    let TrustCheck::Settled(trust) = check(&Config::default(), &config_file, &root, &root).unwrap() else {
        panic!("nothing to ask about")
    };
    // Something else writes an allow rule; then cairn writes the one the user approved.
    std::fs::create_dir_all(root.join(".cairn")).unwrap();
    std::fs::write(
        root.join(".cairn/settings.local.toml"),
        "[permissions]\nallow = [\"bash\", \"bash(cargo test *)\"]\n",
    )
    .unwrap();
    trust.adopt(|i| i.id.ends_with("allow:bash(cargo test *)")).unwrap();
    let again = ask(&config_file, &root).expect("the rule nobody approved is asked about");
    assert_eq!(again.lines(), ["new: allow rule bash runs without asking  (.cairn/settings.local.toml:2)"]);
    // Nothing picked, nothing recorded (a record alone would trust the folder).
    let other = tempfile::tempdir().unwrap();
    let other_root = other.path().canonicalize().unwrap();
    let TrustCheck::Settled(t) = check(&Config::default(), &config_file, &other_root, &other_root).unwrap() else {
        panic!()
    };
    t.adopt(|_| true).unwrap();
    assert!(crate::config::read_trust(&config_file, &other_root).is_none());
    // An untrusted folder adopts nothing.
    ProjectTrust::untrusted_for_tests(&root).adopt(|_| true).unwrap();
}
