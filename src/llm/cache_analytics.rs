//! Cache-break analytics (claw-code's, completed): compare each request with the one before, block by
//! block, and when the provider's cache reads drop sharply, say why — an expected rewrite (the
//! caller names it), the cache's time-to-live running out, or something unexpected, with the
//! first block that differs. That last kind is a bug: something volatile in a cached prefix.

use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::ChatRequest;
use super::wire_cache::WireCache;
use crate::conversation::{Message, Role, Usage};

/// A drop in cache reads smaller than this is noise, not a break (as claw-code does).
pub const MIN_DROP_TOKENS: u64 = 2_000;
/// Breaks kept for `/context`.
const KEPT_BREAKS: usize = 20;

/// Every block of a request, labelled, in the order the provider caches them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    blocks: Vec<(Label, u64)>,
}

/// Which block of a request a hash is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Tools,
    System(usize),
    Message(usize, Role),
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Tools => f.write_str("tools"),
            Label::System(i) => write!(f, "system block {i}"),
            Label::Message(i, role) => write!(f, "message {i} ({})", role.as_str()),
        }
    }
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn message_hash(message: &Message) -> u64 {
    hash_of(&serde_json::to_string(message).unwrap_or_default())
}

/// The request's fingerprint, hashing every message anew (see [`CacheTracker::fingerprint`]).
pub fn fingerprint(request: &ChatRequest) -> Fingerprint {
    CacheTracker::default().fingerprint(request)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    Expected,
    TtlExpiry,
    Unexpected,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CacheBreak {
    /// 1-based number of the request in the session (as this tracker saw them).
    pub request: u64,
    pub kind: BreakKind,
    pub dropped_tokens: u64,
    /// Index and label of the first block that differs from the previous request.
    pub first_difference: Option<(usize, String)>,
    pub reason: String,
}

impl CacheBreak {
    pub fn describe(&self) -> String {
        let block = match &self.first_difference {
            Some((i, label)) => format!(" (first difference: block {i}, {label})"),
            None => String::new(),
        };
        let kind = match self.kind {
            BreakKind::Expected => "expected",
            BreakKind::TtlExpiry => "cache expired",
            BreakKind::Unexpected => "UNEXPECTED",
        };
        format!("request {}: {kind}, {} fewer tokens read: {}{block}", self.request, self.dropped_tokens, self.reason)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheCounts {
    pub expected_breaks: u64,
    pub ttl_breaks: u64,
    pub unexpected_breaks: u64,
}

/// Follows one session's requests.
#[derive(Debug, Default)]
pub struct CacheTracker {
    previous: Option<(Fingerprint, u64, i64)>,
    requests: u64,
    pub counts: CacheCounts,
    pub breaks: Vec<CacheBreak>,
    /// Each message's hash, made once: messages do not change once sent.
    hashes: WireCache<u64>,
}

impl CacheTracker {
    /// The fingerprint of `request`, hashing only the messages not seen in recent requests.
    pub fn fingerprint(&mut self, request: &ChatRequest) -> Fingerprint {
        let mut blocks = Vec::with_capacity(request.system.len() + request.messages.len() + 1);
        let tools = serde_json::to_string(&request.tools).unwrap_or_default();
        blocks.push((Label::Tools, hash_of(&tools)));
        for (i, b) in request.system.iter().enumerate() {
            blocks.push((Label::System(i), hash_of(&b.text)));
        }
        self.hashes.begin();
        for (i, m) in request.messages.iter().enumerate() {
            blocks.push((Label::Message(i, m.role), self.hashes.get(m, message_hash)));
        }
        self.hashes.end();
        Fingerprint { blocks }
    }

    /// Record a request and its usage at `now` (unix seconds). `expected` names what the caller
    /// changed since the previous request, if anything; `ttl_secs` is the cache's lifetime.
    pub fn observe(
        &mut self,
        fingerprint: Fingerprint,
        usage: &Usage,
        now: i64,
        ttl_secs: i64,
        expected: &[String],
    ) -> Option<CacheBreak> {
        self.requests += 1;
        let previous = self.previous.replace((fingerprint.clone(), usage.cache_read_input_tokens, now));
        let (before, read_before, at) = previous?;
        let dropped = read_before.saturating_sub(usage.cache_read_input_tokens);
        if dropped < MIN_DROP_TOKENS {
            return None;
        }
        let first_difference = before
            .blocks
            .iter()
            .zip(&fingerprint.blocks)
            .position(|(a, b)| a != b)
            .or_else(|| (fingerprint.blocks.len() < before.blocks.len()).then_some(fingerprint.blocks.len()))
            .map(|i| {
                (i, fingerprint.blocks.get(i).or(before.blocks.get(i)).map(|b| b.0.to_string()).unwrap_or_default())
            });
        let (kind, reason) = if !expected.is_empty() {
            self.counts.expected_breaks += 1;
            (BreakKind::Expected, expected.join("; "))
        } else if now - at > ttl_secs {
            self.counts.ttl_breaks += 1;
            (BreakKind::TtlExpiry, format!("{} s idle, past the cache's {ttl_secs} s lifetime", now - at))
        } else {
            self.counts.unexpected_breaks += 1;
            let reason = match &first_difference {
                Some(_) => "a block before the cached position changed without cairn rewriting it".to_string(),
                None => "no block changed: the provider dropped its cache".to_string(),
            };
            (BreakKind::Unexpected, reason)
        };
        let b = CacheBreak { request: self.requests, kind, dropped_tokens: dropped, first_difference, reason };
        self.breaks.push(b.clone());
        if self.breaks.len() > KEPT_BREAKS {
            self.breaks.remove(0);
        }
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;
    use crate::conversation::SystemBlock;

    fn request(system: &str, messages: usize) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            system: vec![
                SystemBlock { text: system.into(), cache_breakpoint: true },
                SystemBlock { text: "env".into(), cache_breakpoint: false },
            ],
            messages: (0..messages).map(|i| std::sync::Arc::new(Message::user(format!("m{i}")))).collect(),
            tools: Vec::new(),
            tool_choice: crate::llm::ToolChoice::Auto,
            max_tokens: 10,
            cache: None,
            tail: None,
            reasoning: None,
            images: true,
        }
    }

    fn usage(read: u64) -> Usage {
        Usage { cache_read_input_tokens: read, input_tokens: 100, ..Default::default() }
    }

    #[test]
    fn growing_reads_are_not_breaks() {
        let mut t = CacheTracker::default();
        assert_eq!(t.observe(fingerprint(&request("static", 1)), &usage(0), 0, 300, &[]), None);
        assert_eq!(t.observe(fingerprint(&request("static", 3)), &usage(5_000), 10, 300, &[]), None);
        assert_eq!(
            t.observe(fingerprint(&request("static", 5)), &usage(4_000), 20, 300, &[]),
            None,
            "a small dip is noise"
        );
    }

    #[test]
    fn something_volatile_in_the_static_prefix_is_reported_with_its_block() {
        let mut t = CacheTracker::default();
        t.observe(fingerprint(&request("static 10:01", 2)), &usage(8_000), 0, 300, &[]);
        let b = t.observe(fingerprint(&request("static 10:02", 4)), &usage(0), 30, 300, &[]).unwrap();
        assert_eq!(b.kind, BreakKind::Unexpected);
        assert_eq!(b.first_difference, Some((1, "system block 0".to_string())));
        assert!(b.describe().contains("UNEXPECTED") && b.describe().contains("block 1, system block 0"));
        assert_eq!(t.counts.unexpected_breaks, 1);
    }

    #[test]
    fn rewrites_the_caller_names_are_expected_and_idle_sessions_expire() {
        let mut t = CacheTracker::default();
        t.observe(fingerprint(&request("s", 6)), &usage(9_000), 0, 300, &[]);
        let b = t.observe(fingerprint(&request("s", 2)), &usage(1_000), 60, 300, &["compaction".into()]).unwrap();
        assert_eq!((b.kind, b.reason.as_str()), (BreakKind::Expected, "compaction"));
        // The rewritten request is shorter: it first differs where the old one had message 2.
        assert_eq!(b.first_difference, Some((5, "message 2 (user)".to_string())));
        t.observe(fingerprint(&request("s", 4)), &usage(9_000), 70, 300, &[]);
        let b = t.observe(fingerprint(&request("s", 6)), &usage(0), 1_000, 300, &[]).unwrap();
        assert_eq!(b.kind, BreakKind::TtlExpiry);
        assert_eq!(t.counts, CacheCounts { expected_breaks: 1, ttl_breaks: 1, unexpected_breaks: 0 });
    }
}
