//! The checker's own logic on small trees written here: what it sees, what it cuts, what fails.

use std::collections::BTreeMap;

use super::source::{Source, code_only};
use super::tree::Tree;
use super::{Row, circles, layer_table, layer_violations, long_files, unmapped_files};

fn tree(files: &[(&str, &str)]) -> Tree {
    Tree::read(&files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect())
}

fn table() -> BTreeMap<String, Row> {
    layer_table(
        "\n## Layers\n| layer | module | owns | must not |\n| --- | --- | --- | --- |\n\
         | 0 | `conversation` | data | do IO |\n| 2 | `store` | SQL | hold rules |\n\
         | 4 | `agent` | turns | draw |\n| 5 | `tui` | screen | decide anything; name the database (`store`) |\n",
    )
}

#[test]
fn the_checker_sees_imports_in_groups_and_code_but_not_in_comments_or_strings() {
    let source = Source::read(
        "use crate::{conversation::Message, tools::{Tool, Registry}};\n// crate::tui in a comment\nlet s = \"crate::agent\";\nlet c = '\"'; let x = crate::store::open();\nfn f<'a>(x: &'a str) -> crate::llm::X {}\n",
    );
    let found: Vec<(usize, String)> =
        source.paths().into_iter().map(|(at, p)| (source.line_of(at), p[1..].join("::"))).collect();
    let found: Vec<(usize, &str)> = found.iter().map(|(l, p)| (*l, p.as_str())).collect();
    assert_eq!(
        found,
        [(1, "conversation::Message"), (1, "tools::Tool"), (1, "tools::Registry"), (4, "store::open"), (5, "llm::X")]
    );
    assert!(!code_only("let s = r#\"crate::x\"#;").contains("crate"));
    let table = layer_table(
        "# x\n## Layers\n\n| layer | module | owns | must not |\n| --- | --- | --- | --- |\n| 0 | `conversation` | x | y |\n| 6 | `main.rs`, `cli/` | x | name `conversation` or `nope` |\n\n## Next\n| 9 | `nope` |\n",
    );
    let layers: Vec<(&str, u32, &[String])> =
        table.iter().map(|(n, r)| (n.as_str(), r.layer, &r.must_not[..])).collect();
    let conv = ["conversation".to_string()];
    assert_eq!(layers, [("cli", 6, &conv[..]), ("conversation", 0, &[][..]), ("main", 6, &conv[..])]);
}

#[test]
fn a_circle_two_folders_deep_fails() {
    let files = [
        ("lib.rs", "pub mod agent;"),
        ("agent/mod.rs", "mod worker;"),
        ("agent/worker/mod.rs", "mod calls;"),
        ("agent/worker/calls/mod.rs", "mod decide; mod run;"),
        ("agent/worker/calls/decide.rs", "use super::run::Ran;\npub struct Decision;"),
        ("agent/worker/calls/run.rs", "pub struct Ran;\nfn f() -> crate::agent::worker::calls::decide::Decision {}"),
    ];
    assert_eq!(
        circles(&tree(&files)),
        [
            "agent::worker::calls: {decide, run}: decide → run → decide (src/agent/worker/calls/decide.rs:1, src/agent/worker/calls/run.rs:2)"
        ]
    );
    // The same two files without the way back: no circle.
    let mut one_way = files;
    one_way[5].1 = "pub struct Ran;";
    assert!(circles(&tree(&one_way)).is_empty());
}

#[test]
fn a_circle_through_a_re_export_or_after_a_test_function_is_seen() {
    let files = [
        ("agent/mod.rs", "mod worker; mod toolbox;"),
        ("agent/worker/mod.rs", "mod turn; mod parts;\nuse parts::Books;"),
        ("agent/worker/parts.rs", "pub struct Books;"),
        ("agent/worker/turn.rs", "#[cfg(test)]\nfn helper() {}\nuse crate::agent::toolbox::Toolbox;"),
        ("agent/toolbox.rs", "pub struct Toolbox;\nfn f(b: crate::agent::worker::Books) {}"),
    ];
    let found = circles(&tree(&files));
    assert_eq!(
        found,
        ["agent: {toolbox, worker}: toolbox → worker → toolbox (src/agent/toolbox.rs:2, src/agent/worker/turn.rs:3)"]
    );
}

#[test]
fn test_modules_and_their_files_are_cut_but_nothing_after_them() {
    let files = [
        ("store/mod.rs", "mod a; mod b;"),
        ("store/a.rs", "#[cfg(test)]\nmod tests { use super::super::b::B; }\nuse super::b::B;\npub struct A;"),
        ("store/b.rs", "pub struct B;\n#[cfg(test)]\n#[path = \"b_tests.rs\"]\nmod tests;\n"),
        ("store/b_tests.rs", "use super::super::a::A;"),
        ("store/c.rs", "#![cfg(test)]\nuse super::a::A;"),
    ];
    let tree = tree(&files);
    let shipped: Vec<&str> = tree.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(shipped, ["store/a.rs", "store/b.rs", "store/mod.rs"]);
    let places: Vec<String> = tree.references().iter().map(|r| format!("{}:{}", r.file.rel, r.line)).collect();
    assert_eq!(places, ["store/a.rs:3"], "the `use` after the test module counts; the test code does not");
    assert!(circles(&tree).is_empty());
}

#[test]
fn super_super_leaving_the_folder_is_refused_but_not_from_an_inline_module() {
    let files = [
        ("agent/mod.rs", "mod worker; mod extensions;"),
        ("agent/extensions.rs", "pub struct Extensions;"),
        ("agent/worker/mod.rs", "mod subagent; mod watch;"),
        ("agent/worker/subagent.rs", "fn f(ext: super::super::extensions::Extensions) {}"),
        ("agent/worker/watch.rs", "mod linux {\n    use super::super::subagent;\n}"),
    ];
    let problems = layer_violations(&tree(&files), &table());
    assert_eq!(
        problems,
        ["src/agent/worker/subagent.rs:1: `super::super::` leaves the file's folder; write the path from `crate::`"]
    );
}

#[test]
fn a_layer_above_or_a_must_not_fails_even_through_a_re_export() {
    let files = [
        ("store/mod.rs", "pub struct SessionSummary;"),
        ("agent/mod.rs", "pub use crate::store::SessionSummary;\nfn f() -> crate::tui::App {}"),
        ("tui/mod.rs", "use crate::agent::SessionSummary;\nuse crate::conversation::Message;"),
        ("conversation/mod.rs", "pub struct Message;"),
    ];
    let problems = layer_violations(&tree(&files), &table());
    assert_eq!(
        problems,
        [
            "src/agent/mod.rs:2: `agent` (layer 4) imports `tui` (layer 5); a module imports only from layers below its own",
            "src/tui/mod.rs:1: `tui` names `agent::SessionSummary`, which its row's \"must not\" column rules out",
        ]
    );
}

#[test]
fn a_file_over_600_lines_fails() {
    let files = BTreeMap::from([
        ("short.rs".to_string(), "fn f() {}\n".repeat(600)),
        ("long.rs".to_string(), "fn f() {}\n".repeat(601)),
    ]);
    assert_eq!(long_files(&files, "src"), ["src/long.rs: 601 lines (at most 600: split it along a seam it has)"]);
}

#[test]
fn a_file_the_module_map_does_not_name_fails() {
    let files = [
        ("store/mod.rs", "mod sessions; mod lock;"),
        ("store/sessions.rs", ""),
        ("store/lock.rs", ""),
        ("tui/mod.rs", "mod keys;"),
        ("tui/keys.rs", ""),
    ];
    // `lock` is named, but under another layer's heading.
    let doc = "\n## Module map\n### Layer 2 — `store/`\n- `sessions`\n### Layer 5 — `tui/`\n- `keys`, `lock`\n";
    assert_eq!(unmapped_files(&tree(&files), doc, &table()), ["src/store/lock.rs (layer 2)"]);
}
