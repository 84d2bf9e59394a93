//! The prompt cache, watched: the usage of the last request, whether the provider caches at
//! all, what cairn changed that will cost cache reads (so a break it caused is expected), and
//! the break analytics over the session's requests.

use crate::config::CacheTtl;
use crate::conversation::Usage;
use crate::llm::{BreakKind, CacheCounts, CacheTracker, Fingerprint};

use super::events::CacheStats;

pub(super) struct CacheWatch {
    tracker: CacheTracker,
    /// What cairn changed since the last request that will cost cache reads, named.
    expected: Vec<String>,
    /// The instruction files as the last request carried them.
    instructions: Option<u64>,
    /// The outline of earlier topics (which background summaries update) as last sent.
    outline: Option<u64>,
    /// Usage of the last agent request, for the cache figure.
    last_usage: Option<Usage>,
    /// The provider has reported cache reads or writes in this session: until it does, there
    /// is no cache rate to show (local servers never will).
    seen: bool,
    ttl_secs: i64,
    /// The break the last request showed, if any (for the session report).
    last_break: Option<crate::llm::CacheBreak>,
}

impl CacheWatch {
    pub(super) fn new(ttl: CacheTtl) -> CacheWatch {
        let ttl_secs = match ttl {
            CacheTtl::FiveMinutes => 300,
            CacheTtl::OneHour => 3_600,
        };
        CacheWatch {
            tracker: CacheTracker::default(),
            expected: Vec::new(),
            instructions: None,
            outline: None,
            last_usage: None,
            seen: false,
            ttl_secs,
            last_break: None,
        }
    }

    /// How long the provider keeps a prefix cached.
    pub(super) fn ttl_secs(&self) -> i64 {
        self.ttl_secs
    }

    /// Note a change cairn made that will cost cache reads on the next request.
    pub(super) fn expect_break(&mut self, reason: String) {
        if !self.expected.contains(&reason) {
            self.expected.push(reason);
        }
    }

    /// The instruction files as the next request carries them; a change from the last request
    /// is an expected break.
    pub(super) fn instructions_are(&mut self, fingerprint: u64) {
        if self.instructions.is_some_and(|before| before != fingerprint) {
            self.expect_break("the project's instruction files changed".into());
        }
        self.instructions = Some(fingerprint);
    }

    /// The outline of earlier topics as the next request carries it: background summaries
    /// rewrite it, and that break is cairn's own doing, not a surprise.
    pub(super) fn outline_is(&mut self, text: &str) {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let fingerprint = h.finish();
        if self.outline.is_some_and(|before| before != fingerprint) {
            self.expect_break("a background summary updated the outline of earlier topics".into());
        }
        self.outline = Some(fingerprint);
    }

    /// The request's block hashes, each message hashed once over the session.
    pub(super) fn fingerprint(&mut self, request: &crate::llm::ChatRequest) -> Fingerprint {
        self.tracker.fingerprint(request)
    }

    /// A request's usage, as reported (or as last stored, on load).
    pub(super) fn record(&mut self, usage: Usage) {
        self.last_usage = Some(usage);
        self.seen |= usage.cache_read_input_tokens + usage.cache_creation_input_tokens > 0;
    }

    /// Classify the cache behaviour of the request just answered; returns the warning for a
    /// break cairn caused without meaning to — a block before the cached position changed
    /// unannounced, which costs money and means something volatile in the prefix. A break
    /// the user can do nothing about (the provider dropped its cache, the cache expired, a
    /// change cairn named) is only counted, for `/context`.
    pub(super) fn observe(&mut self, fingerprint: Fingerprint, usage: &Usage) -> Option<String> {
        let expected = std::mem::take(&mut self.expected);
        self.last_break = None;
        let seen =
            self.tracker.observe(fingerprint, usage, chrono::Utc::now().timestamp(), self.ttl_secs, &expected)?;
        self.last_break = Some(seen.clone());
        let text = format!("prompt cache break, {}", seen.describe());
        let ours = seen.kind == BreakKind::Unexpected && seen.first_difference.is_some();
        if ours {
            tracing::warn!("{text}");
            Some(text)
        } else {
            tracing::info!("{text}");
            None
        }
    }

    /// The break the request just observed showed, if it showed one.
    pub(super) fn last_break(&self) -> Option<&crate::llm::CacheBreak> {
        self.last_break.as_ref()
    }

    /// The provider has shown that it caches prompts.
    pub(super) fn caches(&self) -> bool {
        self.seen
    }

    pub(super) fn last_usage(&self) -> Option<Usage> {
        self.last_usage
    }

    /// Share of the last request's prompt read from cache, once the provider has shown it
    /// caches.
    pub(super) fn hit_rate(&self) -> Option<f64> {
        self.last_usage.filter(|u| self.seen && u.prompt_tokens() > 0).map(|u| u.cache_hit_rate())
    }

    pub(super) fn counts(&self) -> CacheCounts {
        self.tracker.counts
    }

    /// The breaks counted since `start`.
    pub(super) fn stats_since(&self, start: &CacheCounts) -> CacheStats {
        let c = self.tracker.counts;
        CacheStats {
            read_share: 0.0,
            expected_breaks: c.expected_breaks - start.expected_breaks,
            ttl_breaks: c.ttl_breaks - start.ttl_breaks,
            unexpected_breaks: c.unexpected_breaks - start.unexpected_breaks,
        }
    }

    /// Every break of the session, each explained in one line.
    pub(super) fn breaks(&self) -> Vec<String> {
        self.tracker.breaks.iter().map(|b| b.describe()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, SystemBlock};
    use crate::llm::{ChatRequest, fingerprint};

    fn request(system: &str, messages: usize) -> Fingerprint {
        fingerprint(&ChatRequest {
            model: "m".into(),
            system: vec![SystemBlock { text: system.into(), cache_breakpoint: true }],
            messages: (0..messages).map(|i| std::sync::Arc::new(Message::user(format!("m{i}")))).collect(),
            tools: Vec::new(),
            tool_choice: crate::llm::ToolChoice::Auto,
            max_tokens: 10,
            cache: None,
            tail: None,
            reasoning: None,
            images: false,
        })
    }

    fn read(tokens: u64) -> Usage {
        Usage { cache_read_input_tokens: tokens, input_tokens: 100, ..Usage::default() }
    }

    #[test]
    fn only_a_break_cairn_caused_unannounced_is_a_warning() {
        let mut watch = CacheWatch::new(CacheTtl::FiveMinutes);
        assert_eq!(watch.observe(request("static", 2), &read(9_000)), None);
        // The provider lost its cache (a restart): same prefix, nothing read. Counted only.
        assert_eq!(watch.observe(request("static", 4), &read(0)), None);
        assert_eq!(watch.observe(request("static", 6), &read(9_000)), None);
        // A background summary rewrote the outline: cairn's own, announced change.
        watch.outline_is("outline v1");
        watch.outline_is("outline v2");
        assert_eq!(watch.observe(request("static v2", 8), &read(0)), None);
        assert_eq!(watch.observe(request("static v2", 10), &read(9_000)), None);
        // Something in the prefix changed and nobody said why: that is worth a warning.
        let warning = watch.observe(request("static v3", 12), &read(0)).unwrap();
        assert!(warning.contains("UNEXPECTED"), "{warning}");
        assert_eq!(watch.breaks().len(), 3, "every break is listed in /context");
    }
}
