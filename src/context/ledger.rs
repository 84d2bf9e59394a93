//! The incremental ledger: every stored message once, with what the stages need to know about
//! it computed when it is appended — token estimate, tool facts, what later reasoning refers to
//! it — so a pre-flight never re-reads the whole history.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::estimate::estimate_message_tokens;
use super::facts::{Effect, ToolFacts, facts_of};
use crate::conversation::{Message, Role, ToolCall};

/// One stored message and its facts.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Position in the stored history; strictly increasing.
    pub seq: i64,
    pub message: Arc<Message>,
    /// Rough tokens of the message as stored.
    pub tokens: u64,
    /// For a tool result: facts of the call it answers.
    pub facts: Option<ToolFacts>,
    /// For a tool result: later assistant messages that mention its file or quote it.
    pub references: u32,
    /// For a tool result: the next assistant message used decision language.
    pub decided_on: bool,
    /// For a tool result: earlier results of the same call (tool and arguments) with the same
    /// output, oldest first.
    pub identical_to: Vec<usize>,
    /// The message was dropped for an empty one of its role ([`Ledger::release_through`]): the
    /// model no longer sees it and the store holds it whole.
    pub released: bool,
}

impl Entry {
    pub fn role(&self) -> Role {
        self.message.role
    }

    /// A cut may fall before this entry without splitting a tool group.
    pub fn starts_unit(&self) -> bool {
        self.message.role != Role::Tool
    }
}

/// A call whose repeat with the same output says nothing new: reads, searches, listings and
/// commands that succeeded (a write or a foreign tool is not compared).
fn repeatable(facts: &ToolFacts) -> bool {
    !facts.is_error
        && match facts.effect {
            Effect::Read { .. } | Effect::Search { .. } | Effect::List { .. } | Effect::Command { .. } => true,
            Effect::Write { .. } | Effect::Other => false,
        }
}

/// Phrases that show a result shaped a decision (seed 001).
const DECISION_PHRASES: &[&str] = &[
    "based on",
    "i'll use",
    "i will use",
    "the issue is",
    "the problem is",
    "the bug is",
    "the cause is",
    "root cause",
    "this means",
    "so we need",
    "that's why",
];

/// Quoted lines shorter than this are too common to count as a reference.
const MIN_QUOTE_CHARS: usize = 24;
/// Distinctive lines remembered per result, for quote detection.
const QUOTE_LINES_PER_RESULT: usize = 6;

fn line_key(line: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    line.trim().hash(&mut h);
    h.finish()
}

#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<Entry>,
    chars_per_token: f64,
    /// Call id → the call, from assistant messages seen so far.
    calls: HashMap<String, ToolCall>,
    /// File name or path mentioned → results about it.
    names: HashMap<String, Vec<usize>>,
    /// Hash of a distinctive result line → results holding it.
    quotes: HashMap<u64, Vec<usize>>,
    /// Results since the last assistant message (the ones it reacts to).
    unanswered_results: Vec<usize>,
    /// Indices of user messages, in order.
    users: Vec<usize>,
    /// (arguments, output) identity → results with it, oldest first.
    identical: HashMap<(u64, u64), Vec<usize>>,
}

impl Ledger {
    pub fn new(chars_per_token: f64) -> Ledger {
        Ledger { chars_per_token, ..Ledger::default() }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn chars_per_token(&self) -> f64 {
        self.chars_per_token
    }

    /// Indices of user messages, oldest first.
    pub fn user_indices(&self) -> &[usize] {
        &self.users
    }

    pub fn call(&self, id: &str) -> Option<&ToolCall> {
        self.calls.get(id)
    }

    /// The index of the entry with `seq`.
    pub fn index_of(&self, seq: i64) -> Option<usize> {
        self.entries.binary_search_by_key(&seq, |e| e.seq).ok()
    }

    /// Append a stored message. `seq` must be larger than every earlier one.
    pub fn push(&mut self, seq: i64, message: impl Into<Arc<Message>>) -> usize {
        let message: Arc<Message> = message.into();
        let index = self.entries.len();
        debug_assert!(self.entries.last().is_none_or(|e| e.seq < seq), "seqs increase");
        let tokens = estimate_message_tokens(&message, self.chars_per_token);
        let mut facts = None;
        let mut identical_to = Vec::new();
        match message.role {
            Role::User => self.users.push(index),
            Role::Assistant => {
                self.note_references(index, &message);
                for call in message.tool_calls() {
                    self.calls.insert(call.id.clone(), call.clone());
                }
            }
            Role::Tool => {
                if let Some(result) = message.tool_result() {
                    let f = facts_of(self.calls.get(&result.call_id), result);
                    self.index_result(index, &f, &result.content);
                    if repeatable(&f) {
                        let earlier = self.identical.entry((f.args_key, f.content_key)).or_default();
                        identical_to = earlier.clone();
                        earlier.push(index);
                    }
                    facts = Some(f);
                    self.unanswered_results.push(index);
                }
            }
        }
        self.entries.push(Entry {
            seq,
            message,
            tokens,
            facts,
            references: 0,
            decided_on: false,
            identical_to,
            released: false,
        });
        index
    }

    /// Drop the messages up to `through_seq` that a summary now stands for, so a session of
    /// thousands of turns holds only what the model still sees: each becomes an empty message
    /// of its role, and its entry keeps its facts (call id, effect, size) for the stages that
    /// walk the whole ledger. User messages stay whole (they are the goal and the corrections
    /// the pipeline carries). The store keeps every message whole; whoever needs an old one
    /// reads it from there. Returns the indices released now.
    pub fn release_through(&mut self, through_seq: i64) -> Vec<usize> {
        let mut released = Vec::new();
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.seq > through_seq {
                break;
            }
            if e.released || e.message.role == Role::User {
                continue;
            }
            for call in e.message.tool_calls() {
                self.calls.remove(&call.id);
            }
            released.push(i);
        }
        // One empty message per role stands for every released one: what is left of an entry
        // is its facts, role and size.
        let bare = |role| Arc::new(Message { role, content: Vec::new() });
        let (assistant, tool) = (bare(Role::Assistant), bare(Role::Tool));
        for &i in &released {
            let e = &self.entries[i];
            let message = e.message.clone();
            if let (Some(facts), Some(result)) = (e.facts.clone(), message.tool_result()) {
                self.unindex_result(i, &facts, &result.content);
            }
            let e = &mut self.entries[i];
            e.message = match message.role {
                Role::Assistant => assistant.clone(),
                Role::Tool => tool.clone(),
                Role::User => message,
            };
            e.released = true;
        }
        released
    }

    /// Remember how a later assistant message could refer to this result: by file name, or by
    /// quoting one of its distinctive lines.
    fn index_result(&mut self, index: usize, facts: &ToolFacts, content: &str) {
        if let Some(name) = name_of(facts) {
            self.names.entry(name.to_string()).or_default().push(index);
        }
        for key in quote_keys(content) {
            self.quotes.entry(key).or_default().push(index);
        }
    }

    /// Forget a released result in the reference indexes: nothing credits it any more.
    fn unindex_result(&mut self, index: usize, facts: &ToolFacts, content: &str) {
        let keys: Vec<u64> = quote_keys(content).collect();
        for key in keys {
            forget(&mut self.quotes, &key, index);
        }
        if let Some(name) = name_of(facts) {
            forget(&mut self.names, name, index);
        }
    }

    /// Credit earlier results that this assistant message mentions, quotes or decides on.
    fn note_references(&mut self, _index: usize, message: &Message) {
        let text = message.text();
        let reacting_to = std::mem::take(&mut self.unanswered_results);
        if text.is_empty() {
            return;
        }
        let mut credited: Vec<usize> = Vec::new();
        for word in text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | '(' | ')' | ',' | ':')) {
            let word = word.trim_end_matches(['.', ';', '!', '?']);
            let name = word.rsplit('/').next().unwrap_or(word);
            if let Some(hits) = self.names.get(name) {
                credited.extend(hits);
            }
        }
        for line in text.lines() {
            let line = line.trim().trim_start_matches(['>', '-', '*', ' ']);
            if line.len() >= MIN_QUOTE_CHARS
                && let Some(hits) = self.quotes.get(&line_key(line))
            {
                credited.extend(hits);
            }
        }
        credited.sort_unstable();
        credited.dedup();
        for i in credited {
            self.entries[i].references += 1;
        }
        let lower = text.to_lowercase();
        if DECISION_PHRASES.iter().any(|p| lower.contains(p)) {
            for i in reacting_to {
                self.entries[i].decided_on = true;
            }
        }
    }
}

/// The file name a result is about, for mentions ("config.rs").
fn name_of(facts: &ToolFacts) -> Option<&str> {
    let path = match &facts.effect {
        Effect::Read { path, .. } | Effect::Write { path } => path.as_str(),
        Effect::Search { scope, .. } if scope != "." => scope.as_str(),
        Effect::Search { .. } | Effect::List { .. } | Effect::Command { .. } | Effect::Other => return None,
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    (name.len() >= 3).then_some(name)
}

/// Keys of a result's most distinctive lines (the longest), which a quote would match.
fn quote_keys(content: &str) -> impl Iterator<Item = u64> + '_ {
    let mut lines: Vec<&str> =
        content.lines().map(str::trim).filter(|l| l.len() >= MIN_QUOTE_CHARS && l.len() <= 400).collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.len()));
    lines.dedup();
    lines.into_iter().take(QUOTE_LINES_PER_RESULT).map(line_key)
}

/// Take `index` out of the list under `key`, and the key once its list is empty.
fn forget<K, Q>(map: &mut HashMap<K, Vec<usize>>, key: &Q, index: usize)
where
    K: std::borrow::Borrow<Q> + Eq + Hash,
    Q: Eq + Hash + ?Sized,
{
    if let Some(list) = map.get_mut(key) {
        list.retain(|&i| i != index);
        if list.is_empty() {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Block, ToolResult};

    fn assistant_calling(id: &str, name: &str, args: &str, text: &str) -> Message {
        let mut m = Message::assistant(text);
        m.content.push(Block::ToolCall(ToolCall::new(id, name, args)));
        m
    }

    #[test]
    fn later_mentions_quotes_and_decisions_are_credited_to_results() {
        let mut l = Ledger::new(3.2);
        l.push(1, Message::user("go"));
        l.push(2, assistant_calling("a", "file_read", r#"{"path":"src/server/config.rs"}"#, ""));
        let read = l.push(
            3,
            Message::tool(ToolResult::ok("a", "file_read", "     1\tpub const TIMEOUT_SECONDS: u64 = 30; // tuned")),
        );
        l.push(4, assistant_calling("b", "bash", r#"{"command":"ls"}"#, ""));
        let listing = l.push(5, Message::tool(ToolResult::ok("b", "bash", "x\n[exit code 0]")));
        l.push(
            6,
            Message::assistant(
                "The issue is in config.rs: `pub const TIMEOUT_SECONDS: u64 = 30; // tuned` is too short.",
            ),
        );
        let e = &l.entries()[read];
        assert_eq!(e.references, 1, "mention and quote in one message count once");
        assert!(l.entries()[listing].decided_on && !e.decided_on, "decision language credits the results just seen");
        assert_eq!(l.user_indices(), &[0]);
        assert_eq!(l.index_of(5), Some(listing));
    }

    #[test]
    fn a_released_message_keeps_its_facts_and_size_but_not_its_body_and_is_no_longer_credited() {
        let mut l = Ledger::new(3.2);
        l.push(1, Message::user("read the config"));
        l.push(2, assistant_calling("a", "file_read", r#"{"path":"src/config.rs"}"#, "reading it"));
        let quoted = "pub const TIMEOUT_SECONDS: u64 = 30; // tuned by hand";
        let read = l.push(3, Message::tool(ToolResult::ok("a", "file_read", format!("     1\t{quoted}"))));
        l.push(4, Message::assistant("done"));
        l.push(5, Message::user("now the tests"));
        let tokens: Vec<u64> = l.entries().iter().map(|e| e.tokens).collect();

        assert_eq!(l.release_through(4), vec![1, 2, 3], "everything up to seq 4 but the user's words");
        assert!(l.release_through(4).is_empty(), "released once");
        let e = &l.entries()[read];
        assert!(e.released && e.message.content.is_empty() && e.role() == Role::Tool);
        assert_eq!(e.facts.as_ref().map(|f| f.call_id.as_str()), Some("a"), "facts stay");
        assert_eq!(l.entries().iter().map(|e| e.tokens).collect::<Vec<_>>(), tokens, "sizes stay");
        assert_eq!(l.entries()[0].message.text(), "read the config", "user messages stay whole");
        assert!(!l.entries()[4].released);
        assert!(l.call("a").is_none(), "the call's arguments are dropped too");

        // A later message naming the file or quoting the line credits nothing released.
        l.push(6, Message::assistant(format!("config.rs says `{quoted}`")));
        assert_eq!(l.entries()[read].references, 0);
        assert!(l.names.is_empty() && l.quotes.is_empty(), "nothing indexed is left of it");
    }
}
