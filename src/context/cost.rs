//! The cost model every history rewrite consults: dedup, pruning, compaction, trimming.
//!
//! A request re-sends what the previous one sent. With prompt caching the unchanged prefix is
//! read cheaply and only what follows the first changed message is written again; without
//! caching every token is paid in full each time; on a local server the KV cache plays the role
//! of the prompt cache and a rewrite costs prefill time. So a change to what was already sent
//! at position *p* costs the tokens after *p* at (write − read), once; removing *t* tokens
//! saves *t* × read on every later request that would have carried them. Rewrite only when
//! the saving wins, or when the window forces it; when a rewrite happens anyway, everything
//! after its position costs nothing more to change, so every pending reduction there is folded
//! into it.

use serde::Serialize;

use crate::config::Prices;

/// Prices of one token by how it is sent, in any consistent unit (dollars per million for a
/// paid API, prefill time for a local server).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CostModel {
    /// A token re-sent unchanged, before the first changed message.
    pub read: f64,
    /// A token sent after the first changed message (a cache write, or plain input).
    pub write: f64,
    /// A token sent to the summariser: its own request, not cached.
    pub aux_input: f64,
    /// A token the summariser writes.
    pub output: f64,
}

/// Relative prices assumed when the catalog has none for a remote model: the usual shape of a
/// paid API with prompt caching (reads a tenth of input, writes a quarter more, output 5×).
const ASSUMED: CostModel = CostModel { read: 0.1, write: 1.25, aux_input: 1.0, output: 5.0 };

impl CostModel {
    /// A paid API. With `caching` off (or a provider that has none) every token costs input.
    pub fn from_prices(prices: &Prices, caching: bool) -> CostModel {
        if caching {
            CostModel {
                read: prices.cache_read,
                write: prices.cache_write.max(prices.cache_read),
                aux_input: prices.input,
                output: prices.output,
            }
        } else {
            CostModel::no_cache(prices.input, prices.output)
        }
    }

    /// A provider without a prompt cache: re-sent tokens cost as much as new ones, so a rewrite
    /// costs nothing extra and any reduction pays from the next request on.
    pub fn no_cache(input: f64, output: f64) -> CostModel {
        CostModel { read: input, write: input, aux_input: input, output }
    }

    /// A local server (llama-server, Ollama) that keeps its KV cache for the unchanged prefix:
    /// in prefill time a kept prefix is free and a rewrite re-processes its suffix, so nothing
    /// but the window justifies one. Generation is slower than prefill per token.
    pub fn local() -> CostModel {
        CostModel { read: 0.0, write: 1.0, aux_input: 1.0, output: 20.0 }
    }

    /// The model when nothing is known: a paid API with the usual caching ratios.
    pub fn assumed() -> CostModel {
        ASSUMED
    }

    /// The model for a session: a local server (no prices, a local address) keeps a KV cache;
    /// a paid API is priced from the catalog, with its prompt cache unless `caching` is off;
    /// an unpriced remote API gets the usual ratios.
    pub fn for_session(prices: Option<&Prices>, local: bool, caching: bool) -> CostModel {
        match (prices, local) {
            (Some(p), _) => CostModel::from_prices(p, caching),
            (None, true) => CostModel::local(),
            (None, false) if caching => ASSUMED,
            (None, false) => CostModel::no_cache(ASSUMED.aux_input, ASSUMED.output),
        }
    }

    /// What re-sending `suffix` tokens that the cache held costs, beyond reading them.
    pub fn rewrite_cost(&self, suffix: u64) -> f64 {
        suffix as f64 * (self.write - self.read).max(0.0)
    }

    /// What `tokens` fewer tokens in every one of `requests` later requests save.
    pub fn saving(&self, tokens: u64, requests: f64) -> f64 {
        tokens as f64 * self.read * requests.max(0.0)
    }

    /// Whether removing `tokens` at a position followed by `suffix` tokens (as sent after the
    /// change) pays back within `requests`.
    pub fn pays(&self, tokens: u64, suffix: u64, requests: f64) -> bool {
        tokens > 0 && self.saving(tokens, requests) > self.rewrite_cost(suffix)
    }

    /// One summariser call: `input` tokens in, `output` tokens out.
    pub fn summary_call(&self, input: u64, output: u64) -> f64 {
        input as f64 * self.aux_input + output as f64 * self.output
    }

    /// Whether compacting now, before the window forces it, is expected to cost less than
    /// waiting. `span` is the tokens the compaction would take off every later request, `cost`
    /// what it costs once (the summariser call and the rewrite after the kept prefix), `growth`
    /// the tokens a request adds, `expected` the further requests expected in the session.
    ///
    /// Compacting every `s` tokens of growth costs, per request, the reads of half a span more
    /// context and a compaction every `s / growth` requests: `read × s / 2 + cost × growth / s`,
    /// least at `s² = 2 × cost × growth / read`. Past that span, waiting for the window costs
    /// more than compacting now — provided the session goes on long enough to read the saving
    /// back `margin` times, which `expected` (conservative) must cover on its own: an early
    /// compaction loses detail the verbatim history has, and a session that ends first never
    /// needed it, so a saving that barely covers it is not taken.
    pub fn early_compaction_pays(&self, span: u64, cost: f64, growth: u64, expected: f64, margin: f64) -> bool {
        if self.read <= 0.0 || span == 0 {
            // A prefix that costs nothing to keep (a local server's KV cache) is never worth
            // summarising before the window forces it.
            return false;
        }
        let span = span as f64;
        let steady = span * span * self.read >= 2.0 * cost * growth as f64;
        let repaid = span * self.read * expected >= margin * cost;
        steady && repaid
    }
}

impl Default for CostModel {
    fn default() -> Self {
        ASSUMED
    }
}

/// How many more requests a saving made now will be felt in: the requests expected in the
/// rest of the session, but no further than the next compaction, which replaces the history
/// the saving was made in anyway.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Horizon {
    /// Requests sent so far in this session.
    pub requests_so_far: u64,
    /// Share of `requests_so_far` expected to follow (config `expected_requests_share`).
    pub share: f64,
    /// Tokens the context grows by per request, on average so far.
    pub growth: u64,
    /// Tokens until the compaction threshold, after the change.
    pub room: u64,
}

impl Horizon {
    /// Expected further requests: a session that has run `n` requests is, with no other
    /// knowledge, as likely to be in its first half as its second (the median remaining is
    /// `n`); `share` scales that down to stay conservative. At least one: the request about to
    /// be sent.
    pub fn expected_requests(&self) -> f64 {
        (self.requests_so_far as f64 * self.share).max(1.0)
    }

    /// Requests until the compaction threshold is reached at the current growth.
    pub fn until_compaction(&self) -> f64 {
        if self.growth == 0 { f64::INFINITY } else { (self.room as f64 / self.growth as f64).max(1.0) }
    }

    /// The requests a saving is felt in.
    pub fn requests(&self) -> f64 {
        self.expected_requests().min(self.until_compaction())
    }
}

/// One possible reduction of the sent view: at visible position `position`, saving `tokens`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    pub position: usize,
    pub tokens: u64,
}

/// The choice among pending reductions: apply every one at or after `from` (a rewrite from
/// there costs the same whichever of them it carries), or none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    pub from: usize,
    pub saved: u64,
    /// Expected saving minus the rewrite's cost.
    pub net: f64,
}

/// The best start among `reductions` (any order): for each candidate position, every
/// reduction at or after it is applied, and the rewrite costs the tokens from that position on
/// as they would be sent after the change (`suffix(position)` gives them as sent now). `None`
/// when no start pays.
pub fn choose(
    reductions: &[Reduction],
    suffix: impl Fn(usize) -> u64,
    model: &CostModel,
    requests: f64,
) -> Option<Choice> {
    let mut sorted: Vec<Reduction> = reductions.iter().copied().filter(|r| r.tokens > 0).collect();
    sorted.sort_by_key(|r| std::cmp::Reverse(r.position));
    let mut best: Option<Choice> = None;
    let mut saved = 0u64;
    for (k, r) in sorted.iter().enumerate() {
        saved += r.tokens;
        // Only evaluate at the earliest reduction of a position.
        if sorted.get(k + 1).is_some_and(|next| next.position == r.position) {
            continue;
        }
        let after = suffix(r.position).saturating_sub(saved);
        let net = model.saving(saved, requests) - model.rewrite_cost(after);
        if net > 0.0 && best.is_none_or(|b| net > b.net) {
            best = Some(Choice { from: r.position, saved, net });
        }
    }
    best
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
