//! The layer table of docs/ARCHITECTURE.md, checked against the code: every `crate::` path in
//! `src/` (in `use` lines and in code, comments and strings aside) must name a module of a
//! lower layer than the file's own, and no module's files may import each other in a circle
//! (test code aside: a file that is `#![cfg(test)]`, and what follows a file's `#[cfg(test)]`).
//! `.ci/run` runs this first, so a wrong import fails fast with the file, line and rule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Import cycles between the files of one module that are known and accepted, with why.
const ACCEPTED_CYCLES: &[(&str, &[&str], &str)] = &[(
    "config",
    &["defaults", "provider"],
    "the config struct holds a provider kind; the provider is chosen from the config",
)];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Module name → layer, from the table under "## Layers" in docs/ARCHITECTURE.md.
fn layer_table(doc: &str) -> BTreeMap<String, u32> {
    let mut layers = BTreeMap::new();
    let section = doc.split("\n## Layers").nth(1).expect("docs/ARCHITECTURE.md has a \"## Layers\" section");
    for row in section.lines().take_while(|l| !l.starts_with("## ")).filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else { continue };
        for name in cells[2].split('`').skip(1).step_by(2) {
            layers.insert(name.trim_end_matches(".rs").trim_end_matches('/').to_string(), layer);
        }
    }
    layers
}

/// The source with comments, strings and char literals blanked (newlines kept, so offsets
/// still give line numbers).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#')) && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = src[start..].find(&close).map_or(b.len(), |n| start + n + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            // A char literal ('x', '\n', '"'); a lifetime ('a) has no closing quote.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let end = src[i + 3..].find('\'').map_or(b.len(), |n| i + 3 + n + 1);
                blank(&mut out, i, end);
                i = end;
            }
            b'\'' if src[i + 1..].chars().nth(1) == Some('\'') => {
                let end = i + 1 + src[i + 1..].chars().next().map_or(0, char::len_utf8) + 1;
                blank(&mut out, i, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: only ASCII spaces replace whole literals")
}

fn ident_at(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// The first path segment of every item in a `{…}` group starting at `s` (just after `{`).
fn group_heads(s: &str) -> Vec<String> {
    let (mut depth, mut item, mut heads) = (1, String::new(), Vec::new());
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 || (depth == 1 && c == ',') {
            if let Some(head) = ident_at(item.trim_start()) {
                heads.push(head.to_string());
            }
            item.clear();
            if depth == 0 {
                break;
            }
        } else if depth >= 1 {
            item.push(c);
        }
    }
    heads
}

/// (line, first segment) of every `crate::` path in `code`.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && (code.as_bytes()[at - 1] == b'$' || code.as_bytes()[at - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => found.extend(group_heads(group).into_iter().map(|h| (line, h))),
            None => found.extend(ident_at(rest).map(|h| (line, h.to_string()))),
        }
    }
    found
}

/// (line, submodule) of every reference from a file of a module to a sibling file's module:
/// `super::x` from a direct child, `crate::module::x` from anywhere in it.
fn sibling_paths(code: &str, module: &str, direct_child: bool) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    if direct_child {
        for (at, _) in code.match_indices("super::") {
            if let Some(name) = ident_at(&code[at + "super::".len()..]).filter(|n| *n != "super") {
                found.push((line_of(at), name.to_string()));
            }
        }
    }
    let prefix = format!("crate::{module}::");
    for (at, _) in code.match_indices(&prefix) {
        if let Some(name) = ident_at(&code[at + prefix.len()..]) {
            found.push((line_of(at), name.to_string()));
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file belongs to (`src/agent/worker/turn.rs` → `agent`; `src/main.rs` → `main`),
/// and its file-level child of that module (`worker`), if it is not the module's root.
fn module_of(rel: &Path) -> (String, Option<String>) {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    let child = parts.get(1).filter(|c| *c != "mod").cloned();
    (parts[0].clone(), child)
}

/// Every import against the table, as `file:line: why`.
fn layer_violations(src: &Path, layers: &BTreeMap<String, u32>) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
        let (module, _) = module_of(rel);
        let Some(&own) = layers.get(&module) else {
            problems.push(format!("src/{}: module `{module}` is not in the layer table", rel.display()));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (line, target) in crate_paths(&code) {
            if target == module {
                continue;
            }
            match layers.get(&target) {
                Some(&theirs) if theirs < own => {}
                Some(&theirs) => problems.push(format!(
                    "src/{}:{line}: `{module}` (layer {own}) imports `{target}` (layer {theirs}); a module imports only from layers below its own",
                    rel.display()
                )),
                None => problems.push(format!(
                    "src/{}:{line}: `{module}` imports `{target}`, which is not in the layer table",
                    rel.display()
                )),
            }
        }
    }
    problems
}

/// Circles of imports between the files of one module (`a` imports `b` imports `a`).
fn module_cycles(src: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
        let (module, Some(child)) = module_of(rel) else { continue };
        // Tests beside code (`foo_tests.rs`) are children of `foo`, not siblings.
        if child.ends_with("_tests") || child.ends_with("_props") {
            continue;
        }
        let direct = rel.components().count() == 2;
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        // Test code may use a sibling's fixtures: only what ships counts.
        if code.contains("#![cfg(test)]") {
            continue;
        }
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        let edges = graph.entry((module.clone(), child.clone())).or_default();
        for (_, target) in sibling_paths(code, &module, direct) {
            if target != child {
                edges.insert(target);
            }
        }
    }
    let mut cycles = Vec::new();
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut path = vec![start.1.clone()];
        find_cycles(&graph, &start.0, &mut path, &mut done, &mut cycles);
        done.insert(start.clone());
    }
    cycles
}

fn find_cycles(
    graph: &BTreeMap<(String, String), BTreeSet<String>>,
    module: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<(String, String)>,
    cycles: &mut Vec<Vec<String>>,
) {
    let here = path.last().unwrap().clone();
    for next in graph.get(&(module.to_string(), here)).into_iter().flatten() {
        if done.contains(&(module.to_string(), next.clone())) {
            continue;
        }
        if next == &path[0] {
            let mut cycle = vec![module.to_string()];
            cycle.extend(path.iter().cloned());
            cycles.push(cycle);
        } else if !path.contains(next) {
            path.push(next.clone());
            find_cycles(graph, module, path, done, cycles);
            path.pop();
        }
    }
}

#[test]
fn every_import_follows_the_layer_table() {
    let doc = std::fs::read_to_string(manifest_dir().join("docs/ARCHITECTURE.md")).unwrap();
    let layers = layer_table(&doc);
    assert!(layers.len() >= 12, "the table names every module: {layers:?}");
    let problems = layer_violations(&manifest_dir().join("src"), &layers);
    assert!(problems.is_empty(), "imports against the layer table (docs/ARCHITECTURE.md):\n{}", problems.join("\n"));
}

#[test]
fn no_module_has_files_importing_each_other_in_a_circle() {
    let cycles: Vec<String> = module_cycles(&manifest_dir().join("src"))
        .into_iter()
        .filter(|c| {
            !ACCEPTED_CYCLES
                .iter()
                .any(|(m, files, _)| c[0] == *m && c[1..].iter().all(|f| files.contains(&f.as_str())))
        })
        .map(|c| format!("{}: {} → {}", c[0], c[1..].join(" → "), c[1]))
        .collect();
    assert!(cycles.is_empty(), "import cycles inside a module:\n{}", cycles.join("\n"));
}

#[test]
fn the_checker_sees_imports_in_groups_and_code_but_not_in_comments_or_strings() {
    let code = code_only(
        "use crate::{conversation::Message, tools::{Tool, Registry}};\n// crate::tui in a comment\nlet s = \"crate::agent\";\nlet c = '\"'; let x = crate::store::open();\nfn f<'a>(x: &'a str) -> crate::llm::X {}\n",
    );
    let found: Vec<(usize, String)> = crate_paths(&code);
    let names: Vec<(usize, &str)> = found.iter().map(|(l, n)| (*l, n.as_str())).collect();
    assert_eq!(names, [(1, "conversation"), (1, "tools"), (4, "store"), (5, "llm")]);
    let table = layer_table(
        "# x\n## Layers\n\n| layer | module |\n| --- | --- |\n| 0 | `conversation` |\n| 6 | `main.rs`, `cli/` |\n\n## Next\n| 9 | `nope` |\n",
    );
    assert_eq!(table, BTreeMap::from([("conversation".into(), 0), ("main".into(), 6), ("cli".into(), 6)]));
}
