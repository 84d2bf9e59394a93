//! The layer table of docs/ARCHITECTURE.md, checked against the code. Every path a file in
//! `src/` writes (in `use` items and in code; comments, strings and `#[cfg(test)] mod` blocks
//! aside) is resolved, through the `use` items on its way, to the module it names:
//! - it must name a module of a lower layer than the file's own, and none that the table's
//!   "must not" column names for it (a backticked module there is one it must not import);
//! - no folder, at any depth, has children importing each other in a circle;
//! - `super::super::` never climbs out of a file's folder (write the path from `crate::`).
//!
//! And no Rust file of the repository is over 600 lines. `.ci/run` runs this first, so a wrong
//! import fails fast with the file, line and rule.

mod source;
mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use tree::Tree;

/// Import circles between the files of one folder that are known and accepted, with why.
const ACCEPTED_CYCLES: &[(&str, &[&str], &str)] = &[(
    "config",
    &["defaults", "provider"],
    "the config struct holds a provider kind; the provider is chosen from the config",
)];

/// A file past this many lines is split along a seam it already has (STYLE.md).
const MAX_LINES: usize = 600;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One module's row of the table under "## Layers" in docs/ARCHITECTURE.md.
#[derive(Debug, PartialEq)]
struct Row {
    layer: u32,
    /// Modules the row's "must not" column names in backticks.
    must_not: Vec<String>,
}

/// Module name → its row.
fn layer_table(doc: &str) -> BTreeMap<String, Row> {
    let section = doc.split("\n## Layers").nth(1).expect("docs/ARCHITECTURE.md has a \"## Layers\" section");
    let rows: Vec<Vec<&str>> = section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with('|'))
        .map(|row| row.split('|').map(str::trim).collect())
        .filter(|cells: &Vec<&str>| cells.get(1).is_some_and(|c| c.parse::<u32>().is_ok()))
        .collect();
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches(".rs").trim_end_matches('/').to_string())
            .collect()
    };
    let names: BTreeSet<String> = rows.iter().flat_map(|cells| ticked(cells[2])).collect();
    let mut table = BTreeMap::new();
    for cells in &rows {
        let must_not: Vec<String> =
            cells.get(4).map_or(Vec::new(), |c| ticked(c)).into_iter().filter(|n| names.contains(n)).collect();
        for name in ticked(cells[2]) {
            table.insert(name, Row { layer: cells[1].parse().unwrap_or_default(), must_not: must_not.clone() });
        }
    }
    table
}

/// Every `.rs` file under `dir`, as (path under `dir` → text).
fn rust_files(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The top module a file is in: `agent/worker/turn.rs` → `agent`; `main.rs` → `main`.
fn top_module(rel: &str) -> &str {
    rel.split('/').next().unwrap_or(rel).trim_end_matches(".rs")
}

/// Every path against the table and against `super::super::`, as `file:line: why`.
fn layer_violations(tree: &Tree, table: &BTreeMap<String, Row>) -> Vec<String> {
    let mut problems = BTreeSet::new();
    for file in &tree.files {
        let own = top_module(&file.rel);
        if !table.contains_key(own) {
            problems.insert(format!("src/{}: module `{own}` is not in the layer table", file.rel));
        }
    }
    for r in tree.references() {
        let place = format!("src/{}:{}", r.file.rel, r.line);
        if r.escapes > 0 {
            problems
                .insert(format!("{place}: `super::super::` leaves the file's folder; write the path from `crate::`"));
        }
        let own = top_module(&r.file.rel);
        let Some(row) = table.get(own) else { continue };
        // The module as written and the one it leads to through re-exports: both must be allowed.
        let heads: BTreeSet<&str> = r.written.first().into_iter().chain(r.target.first()).map(String::as_str).collect();
        for head in heads.into_iter().filter(|h| *h != own) {
            match table.get(head) {
                Some(theirs) if theirs.layer >= row.layer => problems.insert(format!(
                    "{place}: `{own}` (layer {}) imports `{head}` (layer {}); a module imports only from layers below its own",
                    row.layer, theirs.layer
                )),
                Some(_) if row.must_not.iter().any(|m| m == head) => problems.insert(format!(
                    "{place}: `{own}` names `{}`, which its row's \"must not\" column rules out",
                    r.written.join("::")
                )),
                Some(_) => false,
                None => problems.insert(format!("{place}: `{own}` imports `{head}`, which is not in the layer table")),
            };
        }
    }
    problems.into_iter().collect()
}

/// Circles not accepted, one line each: `agent::worker: {a, b}: a → b → a (src/…:1, src/…:2)`.
fn circles(tree: &Tree) -> Vec<String> {
    tree.circles()
        .into_iter()
        .filter(|c| {
            !ACCEPTED_CYCLES
                .iter()
                .any(|(m, files, _)| c.folder.join("::") == *m && c.group.iter().all(|f| files.contains(&f.as_str())))
        })
        .map(|c| {
            let folder = if c.folder.is_empty() { "crate".to_string() } else { c.folder.join("::") };
            format!("{folder}: {{{}}}: {} ({})", c.group.join(", "), c.cycle.join(" → "), c.places.join(", "))
        })
        .collect()
}

/// Files the module map of docs/ARCHITECTURE.md does not name: each file's stem (or its path
/// inside its module) must be in backticks in the section of its module's layer.
fn unmapped_files(tree: &Tree, doc: &str, table: &BTreeMap<String, Row>) -> Vec<String> {
    let map = doc.split("\n## Module map").nth(1).unwrap_or_default();
    let section = |layer: u32| {
        let start = format!("### Layer {layer} ");
        map.split("\n### ").map(|s| format!("### {s}")).find(|s| s.starts_with(&start)).unwrap_or_default()
    };
    let mut missing = Vec::new();
    for file in &tree.files {
        let stem = file.rel.rsplit('/').next().unwrap_or(&file.rel).trim_end_matches(".rs");
        if stem == "mod" {
            continue;
        }
        let Some(row) = table.get(top_module(&file.rel)) else { continue };
        let inside = file.rel.split_once('/').map_or(file.rel.as_str(), |(_, rest)| rest).trim_end_matches(".rs");
        let text = section(row.layer);
        let named = [format!("`{stem}`"), format!("`{stem}.rs`"), format!("`{stem}/`"), format!("`{inside}`")];
        if !named.iter().any(|n| text.contains(n.as_str())) {
            missing.push(format!("src/{} (layer {})", file.rel, row.layer));
        }
    }
    missing
}

fn long_files(files: &BTreeMap<String, String>, under: &str) -> Vec<String> {
    files
        .iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(rel, lines)| format!("{under}/{rel}: {lines} lines (at most {MAX_LINES}: split it along a seam it has)"))
        .collect()
}

fn crate_tree() -> Tree {
    Tree::read(&rust_files(&manifest_dir().join("src")))
}

#[test]
fn every_import_follows_the_layer_table() {
    let doc = std::fs::read_to_string(manifest_dir().join("docs/ARCHITECTURE.md")).unwrap();
    let table = layer_table(&doc);
    assert!(table.len() >= 12, "the table names every module: {table:?}");
    assert!(table.values().any(|r| !r.must_not.is_empty()), "the \"must not\" column names modules: {table:?}");
    let problems = layer_violations(&crate_tree(), &table);
    assert!(problems.is_empty(), "imports against the layer table (docs/ARCHITECTURE.md):\n{}", problems.join("\n"));
}

#[test]
fn every_file_is_in_the_module_map() {
    let doc = std::fs::read_to_string(manifest_dir().join("docs/ARCHITECTURE.md")).unwrap();
    let missing = unmapped_files(&crate_tree(), &doc, &layer_table(&doc));
    assert!(missing.is_empty(), "files the module map of docs/ARCHITECTURE.md does not name:\n{}", missing.join("\n"));
}

#[test]
fn no_folder_has_files_importing_each_other_in_a_circle() {
    let found = circles(&crate_tree());
    assert!(found.is_empty(), "import circles inside a folder:\n{}", found.join("\n"));
}

#[test]
fn no_rust_file_is_over_600_lines() {
    let mut long = Vec::new();
    for dir in ["src", "tests", "benches"] {
        long.extend(long_files(&rust_files(&manifest_dir().join(dir)), dir));
    }
    assert!(long.is_empty(), "files too long:\n{}", long.join("\n"));
}

#[path = "checker_tests.rs"]
mod checker_tests;
