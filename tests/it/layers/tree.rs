//! The crate as a tree of modules, read from its files: which files ship (test modules cut),
//! where each path they write leads (through `use` re-exports), and the edges between the
//! children of every folder, at every depth, with their circles.

use std::collections::{BTreeMap, BTreeSet};

use super::source::Source;

/// A module path: `["agent", "worker", "turn"]`; the crate root is empty.
pub type ModPath = Vec<String>;

pub struct File {
    /// As under `src/`: `agent/worker/turn.rs`.
    pub rel: String,
    pub module: ModPath,
    pub source: Source,
}

/// One path a shipping file writes, resolved.
pub struct Reference<'a> {
    pub file: &'a File,
    pub line: usize,
    /// The module the path is written in (the file's, or an inline module inside it).
    pub from: ModPath,
    /// As written, with `crate`/`super`/`self` replaced by where they lead.
    pub written: ModPath,
    /// The deepest module it names, following `use` items of the modules on the way.
    pub target: ModPath,
    /// How many `super`s it starts with, beyond the inline modules it is written in.
    pub escapes: usize,
}

/// Children of one folder that import each other.
pub struct Circle {
    pub folder: ModPath,
    /// Every child in the group, sorted.
    pub group: Vec<String>,
    /// One circle through the group: `[a, b, a]`.
    pub cycle: Vec<String>,
    /// Where each edge of that circle is first written (`src/…:line`).
    pub places: Vec<String>,
}

pub struct Tree {
    /// The files that ship, by path.
    pub files: Vec<File>,
    /// Every module: files and folders.
    modules: BTreeSet<ModPath>,
    /// Per module, the names its `use` items bind and the absolute path each stands for.
    imports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

/// `agent/worker/turn.rs` → agent::worker::turn; `agent/mod.rs` → agent; `lib.rs` → the root.
fn module_of(rel: &str) -> ModPath {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The file an out-of-line `mod name;` in `rel` names (`#[path]` first).
fn declared_file(rel: &str, name: &str, path: Option<&str>) -> Vec<String> {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    let join = |p: &str| if dir.is_empty() { p.to_string() } else { format!("{dir}/{p}") };
    if let Some(path) = path {
        return vec![join(path)];
    }
    let stem = rel.rsplit('/').next().unwrap_or(rel).trim_end_matches(".rs");
    let base = if matches!(stem, "mod" | "lib" | "main") { join(name) } else { join(&format!("{stem}/{name}")) };
    vec![format!("{base}.rs"), format!("{base}/mod.rs")]
}

impl Tree {
    /// The tree of `files` (path under `src/` → text).
    pub fn read(texts: &BTreeMap<String, String>) -> Tree {
        let mut sources: BTreeMap<String, Source> =
            texts.iter().map(|(rel, text)| (rel.clone(), Source::read(text))).collect();
        // Test files: `#![cfg(test)]`, or named by a `#[cfg(test)] mod`, or inside such a module.
        let mut test_files: BTreeSet<String> =
            sources.iter().filter(|(_, s)| s.test_only).map(|(rel, _)| rel.clone()).collect();
        for (rel, source) in &sources {
            for m in &source.test_modules {
                test_files.extend(declared_file(rel, &m.name, m.path.as_deref()));
            }
        }
        let test_dirs: Vec<String> =
            test_files.iter().filter_map(|f| f.strip_suffix(".rs")).map(|d| format!("{d}/")).collect();
        sources.retain(|rel, _| !test_files.contains(rel) && !test_dirs.iter().any(|d| rel.starts_with(d)));
        let files: Vec<File> =
            sources.into_iter().map(|(rel, source)| File { module: module_of(&rel), rel, source }).collect();
        let mut modules = BTreeSet::new();
        for file in &files {
            for n in 0..=file.module.len() {
                modules.insert(file.module[..n].to_vec());
            }
        }
        let mut tree = Tree { files, modules, imports: BTreeMap::new() };
        let mut imports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
        for file in &tree.files {
            for (at, path, name) in file.source.uses() {
                let from = [file.module.clone(), file.source.inline_path(at)].concat();
                if let Some((absolute, _)) = tree.absolute(&from, &path) {
                    imports.entry(from).or_default().insert(name, absolute);
                }
            }
        }
        tree.imports = imports;
        tree
    }

    /// A path written in module `from` as an absolute one, and how many `super`s it climbs;
    /// `None` for a path into another crate.
    fn absolute(&self, from: &ModPath, path: &[String]) -> Option<(ModPath, usize)> {
        match path.first().map(String::as_str) {
            Some("crate") => Some((path[1..].to_vec(), 0)),
            Some("self") => Some(([from.clone(), path[1..].to_vec()].concat(), 0)),
            Some("super") => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let base = from[..from.len().saturating_sub(ups)].to_vec();
                Some(([base, path[ups..].to_vec()].concat(), ups))
            }
            Some(head) => {
                let child = [from.clone(), vec![head.to_string()]].concat();
                self.modules.contains(&child).then(|| ([from.clone(), path.to_vec()].concat(), 0))
            }
            None => None,
        }
    }

    /// The deepest module an absolute path names, through the `use` items on its way.
    pub fn resolve(&self, path: &[String]) -> ModPath {
        self.resolve_within(path, 8)
    }

    fn resolve_within(&self, path: &[String], hops: usize) -> ModPath {
        let mut module = ModPath::new();
        for (i, segment) in path.iter().enumerate() {
            let child = [module.clone(), vec![segment.clone()]].concat();
            if self.modules.contains(&child) {
                module = child;
                continue;
            }
            if let Some(target) = self.imports.get(&module).and_then(|m| m.get(segment)).filter(|_| hops > 0) {
                return self.resolve_within(&[target.clone(), path[i + 1..].to_vec()].concat(), hops - 1);
            }
            break;
        }
        module
    }

    /// Every path every shipping file writes, resolved.
    pub fn references(&self) -> Vec<Reference<'_>> {
        let mut found = Vec::new();
        for file in &self.files {
            for (at, path) in file.source.paths() {
                let inline = file.source.inline_path(at);
                let from = [file.module.clone(), inline.clone()].concat();
                let Some((written, ups)) = self.absolute(&from, &path) else { continue };
                found.push(Reference {
                    file,
                    line: file.source.line_of(at),
                    target: self.resolve(&written),
                    written,
                    from,
                    escapes: ups.saturating_sub(inline.len() + 1),
                });
            }
        }
        found
    }

    /// Per folder, the edges between its children: (folder, from child, to child) → where.
    pub fn edges(&self) -> BTreeMap<ModPath, BTreeMap<(String, String), String>> {
        let mut edges: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
        for r in self.references() {
            let common = r.from.iter().zip(&r.target).take_while(|(a, b)| a == b).count();
            let (Some(a), Some(b)) = (r.from.get(common), r.target.get(common)) else { continue };
            let at = format!("src/{}:{}", r.file.rel, r.line);
            edges.entry(r.from[..common].to_vec()).or_default().entry((a.clone(), b.clone())).or_insert(at);
        }
        edges
    }

    /// Every group of a folder's children that reach each other.
    pub fn circles(&self) -> Vec<Circle> {
        let mut circles = Vec::new();
        for (folder, edges) in self.edges() {
            let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for (a, b) in edges.keys() {
                next.entry(a).or_default().insert(b);
            }
            for component in strongly_connected(&next) {
                let cycle = one_cycle(&next, &component);
                let places = cycle.windows(2).map(|w| edges[&(w[0].to_string(), w[1].to_string())].clone()).collect();
                let group = component.iter().map(|s| s.to_string()).collect();
                let cycle = cycle.iter().map(|s| s.to_string()).collect();
                circles.push(Circle { folder: folder.clone(), group, cycle, places });
            }
        }
        circles
    }
}

/// The groups of more than one node that reach each other (Tarjan's algorithm).
fn strongly_connected<'a>(next: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    struct Walk<'a, 'g> {
        next: &'g BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<&'a str>>,
    }
    fn visit<'a>(w: &mut Walk<'a, '_>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        for &u in w.next.get(v).into_iter().flatten() {
            if !w.index.contains_key(u) {
                visit(w, u);
                let low = w.low[v].min(w.low[u]);
                w.low.insert(v, low);
            } else if w.stack.contains(&u) {
                let low = w.low[v].min(w.index[u]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = BTreeSet::new();
            while let Some(u) = w.stack.pop() {
                group.insert(u);
                if u == v {
                    break;
                }
            }
            if group.len() > 1 {
                w.found.push(group);
            }
        }
    }
    let mut w = Walk { next, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for &v in next.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

/// One circle through a group that reaches itself: `[a, b, c, a]`, shortest from its first node.
fn one_cycle<'a>(next: &BTreeMap<&'a str, BTreeSet<&'a str>>, group: &BTreeSet<&'a str>) -> Vec<&'a str> {
    let start = *group.iter().next().expect("a group has members");
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &u in next.get(v).into_iter().flatten().filter(|u| group.contains(*u)) {
            if u == start {
                let mut cycle = vec![v];
                while let Some(&before) = came_from.get(cycle[cycle.len() - 1]) {
                    cycle.push(before);
                }
                cycle.reverse();
                cycle.push(start);
                return cycle;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = came_from.entry(u) {
                e.insert(v);
                queue.push_back(u);
            }
        }
    }
    vec![start, start]
}
