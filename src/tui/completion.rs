//! Completion for the composer: slash commands from the agent's one command table, and
//! `@path` mentions matched fuzzily (nucleo, as helix uses it) against the project's files,
//! which the command line lists in the background and hands in.

use std::sync::{Arc, Mutex};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// Suggestions shown at once.
pub const MAX_ITEMS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Command,
    File,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub label: String,
    pub detail: String,
    /// What replaces the typed token.
    pub insert: String,
    /// A command that takes words after it (a custom command always may): Tab leaves a space.
    pub takes_argument: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub kind: CompletionKind,
    pub items: Vec<Candidate>,
    pub selected: usize,
    /// Row and char column where the replaced token starts, and its length in chars.
    pub row: usize,
    pub col: usize,
    pub len: usize,
}

impl Completion {
    pub fn select_next(&mut self) {
        self.selected = (self.selected + 1) % self.items.len().max(1);
    }

    pub fn select_prev(&mut self) {
        let n = self.items.len().max(1);
        self.selected = (self.selected + n - 1) % n;
    }

    pub fn current(&self) -> Option<&Candidate> {
        self.items.get(self.selected)
    }
}

/// The project's files, filled in the background.
#[derive(Clone, Default)]
pub struct FileIndex {
    files: Arc<Mutex<Option<Arc<Vec<String>>>>>,
}

impl FileIndex {
    /// The project's files, once listed (by the command line, in the background).
    pub fn fill(&self, files: Vec<String>) {
        *self.files.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(files));
    }

    /// An index over a fixed list (tests, benchmarks).
    pub fn from_files(files: Vec<String>) -> FileIndex {
        FileIndex { files: Arc::new(Mutex::new(Some(Arc::new(files)))) }
    }

    pub fn files(&self) -> Option<Arc<Vec<String>>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What to suggest for `lines` with the cursor at (`row`, `col` in chars), if anything.
#[cfg(test)]
pub fn complete(lines: &[String], row: usize, col: usize, files: &FileIndex) -> Option<Completion> {
    complete_with(lines, row, col, files, &[])
}

/// What to suggest for `lines` with the cursor at (`row`, `col` in chars), if anything; the
/// custom commands and skills complete like the built-in commands.
pub fn complete_with(
    lines: &[String],
    row: usize,
    col: usize,
    files: &FileIndex,
    custom: &[crate::agent::CommandInfo],
) -> Option<Completion> {
    let line = lines.get(row)?;
    let before: Vec<char> = line.chars().take(col).collect();
    let start = before.iter().rposition(|c| c.is_whitespace()).map_or(0, |i| i + 1);
    let token: String = before[start..].iter().collect();
    let token_len = line.chars().skip(start).take_while(|c| !c.is_whitespace()).count();
    if row == 0 && start == 0 && lines.len() == 1 && token.starts_with('/') {
        let items = commands(&token, custom);
        return (!items.is_empty()).then_some(Completion {
            kind: CompletionKind::Command,
            items,
            selected: 0,
            row,
            col: start,
            len: token_len,
        });
    }
    let query = token.strip_prefix('@')?;
    let files = files.files()?;
    let items = fuzzy_files(query, &files);
    (!items.is_empty()).then_some(Completion {
        kind: CompletionKind::File,
        items,
        selected: 0,
        row,
        col: start,
        len: token_len,
    })
}

fn commands(typed: &str, custom: &[crate::agent::CommandInfo]) -> Vec<Candidate> {
    let typed = typed.to_ascii_lowercase();
    // (name, argument hint, help, takes an argument)
    let all: Vec<(String, String, String, bool)> = crate::agent::COMMANDS
        .iter()
        .map(|(n, a, h)| (n.to_string(), a.to_string(), h.to_string(), !a.is_empty()))
        .chain(custom.iter().map(|c| (c.name.clone(), c.argument_hint.clone(), c.description.clone(), true)))
        .collect();
    let mut hits: Vec<&(String, String, String, bool)> = all.iter().filter(|c| c.0.starts_with(&typed)).collect();
    if hits.is_empty() {
        let names: Vec<&str> = all.iter().map(|c| c.0.as_str()).collect();
        let mut matcher = Matcher::new(Config::DEFAULT);
        let pattern = Pattern::parse(typed.trim_start_matches('/'), CaseMatching::Ignore, Normalization::Smart);
        let ranked = pattern.match_list(names, &mut matcher);
        hits = ranked.iter().filter_map(|(n, _)| all.iter().find(|c| c.0 == *n)).collect();
    }
    hits.into_iter()
        .take(MAX_ITEMS)
        .map(|(name, arg, help, takes_argument)| Candidate {
            label: if arg.is_empty() { name.to_string() } else { format!("{name} {arg}") },
            detail: help.to_string(),
            // A command whose argument is optional (`[ID]`, `[N|last]`) runs from the list at once
            // (its picker opens, or it runs as it is); one that needs an argument waits for it.
            insert: if arg.is_empty() || arg.starts_with('[') { name.to_string() } else { format!("{name} ") },
            takes_argument: *takes_argument,
        })
        .collect()
}

fn fuzzy_files(query: &str, files: &[String]) -> Vec<Candidate> {
    let mut config = Config::DEFAULT;
    config.set_match_paths();
    let mut matcher = Matcher::new(config);
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let ranked = if query.is_empty() {
        files.iter().take(MAX_ITEMS).map(|f| (f, 0)).collect()
    } else {
        let mut ranked = pattern.match_list(files.iter(), &mut matcher);
        // Equal scores: shorter paths first (closer to the root, more likely meant).
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.len().cmp(&b.0.len())));
        ranked
    };
    ranked
        .into_iter()
        .take(MAX_ITEMS)
        .map(|(f, _)| Candidate {
            label: f.clone(),
            detail: String::new(),
            insert: format!("@{f}"),
            takes_argument: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.split('\n').map(String::from).collect()
    }

    #[test]
    fn a_slash_at_the_start_suggests_commands_from_the_table() {
        let c = complete(&lines("/me"), 0, 3, &FileIndex::default()).unwrap();
        assert_eq!(c.kind, CompletionKind::Command);
        assert_eq!(c.items[0].label, "/memories");
        let c = complete(&lines("/mo"), 0, 3, &FileIndex::default()).unwrap();
        assert_eq!(c.items.iter().map(|i| i.insert.as_str()).collect::<Vec<_>>(), ["/mode ", "/model"]);
        assert!(complete(&lines("/"), 0, 1, &FileIndex::default()).unwrap().items.len() >= 8);
    }

    #[test]
    fn commands_are_not_suggested_mid_prompt() {
        assert_eq!(complete(&lines("fix /me"), 0, 7, &FileIndex::default()), None);
        assert_eq!(complete(&lines("/mode plan"), 0, 10, &FileIndex::default()), None);
        let fix = crate::agent::CommandInfo {
            name: "/fix".into(),
            argument_hint: "[issue]".into(),
            description: "Fix an issue".into(),
        };
        let c = complete_with(&lines("/fi"), 0, 3, &FileIndex::default(), &[fix]).unwrap();
        assert_eq!((c.items[0].label.as_str(), c.items[0].insert.as_str()), ("/fix [issue]", "/fix"));
    }

    #[test]
    fn at_paths_match_fuzzily_and_prefer_short_paths() {
        let files = FileIndex::from_files(vec![
            "src/tui/composer.rs".into(),
            "docs/components.md".into(),
            "src/main.rs".into(),
            "tests/it/tui_e2e.rs".into(),
        ]);
        let c = complete(&lines("look at @cmpsr please"), 0, 14, &files).unwrap();
        assert_eq!(c.kind, CompletionKind::File);
        assert_eq!(c.items[0].insert, "@src/tui/composer.rs");
        assert_eq!((c.col, c.len), (8, 6));
        let c = complete(&lines("@main"), 0, 5, &files).unwrap();
        assert_eq!(c.items[0].label, "src/main.rs");
    }
}
