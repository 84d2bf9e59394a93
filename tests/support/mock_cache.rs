//! A prompt cache that behaves like the providers', for the mock: Anthropic's explicit
//! breakpoints (a hit is a cached prefix ending at, or up to 20 blocks before, a breakpoint;
//! only prefixes of 1,024 tokens or more are cached; entries live for their TTL and are
//! refreshed on use) — also behind an OpenAI-compatible endpoint that forwards `cache_control`
//! (OpenRouter) — and OpenAI's automatic longest-prefix caching (1,024 tokens and up, in steps
//! of 128), on chat completions and the Responses API. Tokens are about four characters of JSON
//! each, like the mock's usage.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::Value;

const MIN_CACHEABLE: u64 = 1_024;
const LOOKBACK_BLOCKS: usize = 20;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheOutcome {
    pub read: u64,
    pub written: u64,
    pub uncached: u64,
}

#[derive(Default)]
pub struct PrefixCache {
    entries: HashMap<u64, Instant>,
    /// Added to the real clock, so tests can let entries expire.
    pub offset: Duration,
}

struct Block {
    /// Hash of the whole prefix up to and including this block.
    chain: u64,
    /// Tokens of the prefix up to and including this block.
    cumulative: u64,
    breakpoint: Option<Duration>,
}

fn tokens(v: &Value) -> u64 {
    (v.to_string().len() as u64).div_ceil(4)
}

/// `v` without its `cache_control` marker: markers move, the content does not.
fn unmarked(v: &Value) -> (Value, Option<Duration>) {
    let mut v = v.clone();
    let ttl = v
        .as_object_mut()
        .and_then(|o| o.remove("cache_control"))
        .map(|m| if m["ttl"] == "1h" { Duration::from_secs(3_600) } else { Duration::from_secs(300) });
    (v, ttl)
}

/// Tokens of a message's framing (`{"role": …, "content": […]}`), counted with its first block.
const MESSAGE_FRAMING: u64 = 8;

/// `(block, breakpoint, starts a message)` in order → the prefix chain. `keyed`: from block
/// `at` on, every prefix is also keyed by `key` (a request parameter whose change invalidates
/// the cached blocks from there on, but not the ones before).
fn chain(blocks: impl Iterator<Item = (Value, Option<Duration>, bool)>, keyed: Option<(usize, &str)>) -> Vec<Block> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut cumulative = 0;
    blocks
        .enumerate()
        .map(|(i, (v, breakpoint, starts_message))| {
            if let Some((_, key)) = keyed.filter(|(at, _)| *at == i) {
                key.hash(&mut h);
            }
            v.to_string().hash(&mut h);
            cumulative += tokens(&v) + if starts_message { MESSAGE_FRAMING } else { 0 };
            Block { chain: h.finish(), cumulative, breakpoint }
        })
        .collect()
}

impl PrefixCache {
    fn now(&self) -> Instant {
        Instant::now() + self.offset
    }

    fn live(&self, key: u64) -> bool {
        self.entries.get(&key).is_some_and(|&until| until > self.now())
    }

    /// Forget everything, as a provider evicting a cache.
    pub fn evict(&mut self) {
        self.entries.clear();
    }

    /// An Anthropic Messages request: tools, then system blocks, then every message's blocks.
    /// The outcome's parts add up to the request's tokens as this cache counts them. As the
    /// API documents, a change of `tool_choice` invalidates the cached message blocks while
    /// tools and system stay cached: the messages' prefixes are keyed by it (absent is auto).
    pub fn anthropic(&mut self, body: &Value) -> CacheOutcome {
        let mut parts: Vec<(Value, bool)> = Vec::new();
        parts.extend(body["tools"].as_array().cloned().unwrap_or_default().into_iter().map(|t| (t, false)));
        parts.extend(body["system"].as_array().cloned().unwrap_or_default().into_iter().map(|s| (s, false)));
        let messages_from = parts.len();
        for m in body["messages"].as_array().cloned().unwrap_or_default() {
            match &m["content"] {
                Value::Array(blocks) => parts.extend(blocks.iter().cloned().enumerate().map(|(i, b)| (b, i == 0))),
                other => parts.push((other.clone(), true)),
            }
        }
        let choice = match &body["tool_choice"] {
            Value::Null => serde_json::json!({"type": "auto"}).to_string(),
            choice => choice.to_string(),
        };
        self.by_breakpoints(parts, Some((messages_from, &choice)))
    }

    /// A chat completions request to an endpoint that forwards `cache_control` to an Anthropic
    /// model: each message is its framing (role, ids, tool calls) then its content parts, and
    /// the breakpoints are where the parts carry them.
    pub fn openai_marked(&mut self, body: &Value) -> CacheOutcome {
        let mut parts: Vec<(Value, bool)> = Vec::new();
        parts.extend(body["tools"].as_array().cloned().unwrap_or_default().into_iter().map(|t| (t, false)));
        for m in body["messages"].as_array().cloned().unwrap_or_default() {
            let mut framing = m.clone();
            let content = framing.as_object_mut().and_then(|o| o.remove("content")).unwrap_or(Value::Null);
            parts.push((framing, true));
            match content {
                Value::Array(items) => parts.extend(items.into_iter().map(|p| (p, false))),
                Value::Null => {}
                // A string is the one text part it stands for.
                Value::String(text) => parts.push((serde_json::json!({"type": "text", "text": text}), false)),
                other => parts.push((other, false)),
            }
        }
        self.by_breakpoints(parts, None)
    }

    /// A Responses API request: OpenAI's automatic prefix caching over tools, instructions and
    /// the input items.
    pub fn responses(&mut self, body: &Value) -> CacheOutcome {
        let mut parts: Vec<Value> = body["tools"].as_array().cloned().unwrap_or_default();
        parts.push(body["instructions"].clone());
        parts.extend(body["input"].as_array().cloned().unwrap_or_default());
        self.automatic(parts)
    }

    fn by_breakpoints(&mut self, parts: Vec<(Value, bool)>, keyed: Option<(usize, &str)>) -> CacheOutcome {
        let blocks = chain(
            parts.iter().map(|(v, first)| {
                let (v, ttl) = unmarked(v);
                (v, ttl, *first)
            }),
            keyed,
        );
        let total = blocks.last().map(|b| b.cumulative).unwrap_or(0);
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].breakpoint.is_some()).collect();
        let mut hit: Option<usize> = None;
        for &b in &breakpoints {
            for p in (b.saturating_sub(LOOKBACK_BLOCKS)..=b).rev() {
                if self.live(blocks[p].chain) {
                    hit = Some(hit.map_or(p, |h| h.max(p)));
                    break;
                }
            }
        }
        let read = hit.map(|p| blocks[p].cumulative).unwrap_or(0);
        let now = self.now();
        if let Some(p) = hit {
            // Reading refreshes the entry's lifetime.
            let ttl =
                breakpoints.iter().filter_map(|&b| blocks[b].breakpoint).max().unwrap_or(Duration::from_secs(300));
            self.entries.insert(blocks[p].chain, now + ttl);
        }
        let mut written = 0;
        for &b in &breakpoints {
            let block = &blocks[b];
            if block.cumulative >= MIN_CACHEABLE && !self.live(block.chain) {
                self.entries.insert(block.chain, now + block.breakpoint.unwrap_or_default());
                written = block.cumulative.saturating_sub(read);
            } else if block.cumulative >= MIN_CACHEABLE {
                self.entries.insert(block.chain, now + block.breakpoint.unwrap_or_default());
            }
        }
        let read = read.min(total);
        let written = written.min(total - read);
        CacheOutcome { read, written, uncached: total - read - written }
    }

    /// An OpenAI chat completions request: the longest prefix (tools, then messages) seen
    /// before, from 1,024 tokens, in steps of 128.
    pub fn openai(&mut self, body: &Value) -> CacheOutcome {
        let mut parts: Vec<Value> = body["tools"].as_array().cloned().unwrap_or_default();
        parts.extend(body["messages"].as_array().cloned().unwrap_or_default());
        self.automatic(parts)
    }

    fn automatic(&mut self, parts: Vec<Value>) -> CacheOutcome {
        let blocks = chain(parts.iter().map(|v| (v.clone(), None, false)), None);
        let total = blocks.last().map(|b| b.cumulative).unwrap_or(0);
        let hit = blocks.iter().rev().find(|b| b.cumulative >= MIN_CACHEABLE && self.live(b.chain));
        let read = hit.map(|b| b.cumulative / 128 * 128).unwrap_or(0).min(total);
        let until = self.now() + Duration::from_secs(600);
        for b in &blocks {
            self.entries.insert(b.chain, until);
        }
        CacheOutcome { read, written: 0, uncached: total - read }
    }
}
