//! Whether to keep the prompt cache warm while the user is idle (Aider's keep-alive pings,
//! claw-code's cache-aware pacing), decided by the cost model and the session's own history.
//!
//! A provider's prompt cache holds a prefix for its TTL after the last request that read or
//! wrote it. A one-token request that re-sends the last request reads the whole prefix
//! (`prefix × read`) and starts the TTL again. It pays when the user comes back in the time it
//! buys — after the cache would have run out, before the ping's own TTL ends — because that
//! next prompt then reads the prefix instead of writing it again (`prefix × (write − read)`
//! saved). So a ping pays when
//!
//! `P(back in the time bought | still idle now) × prefix × (write − read) > ping cost`.
//!
//! The probability comes from the session's own idle spells (how long the user was away
//! before each earlier prompt), counted with Laplace's rule of succession: of the earlier
//! spells that lasted at least as long as this one has so far, the share that ended in the
//! window the ping buys, with one imagined spell each way, so a session with no history
//! starts at ½ and its own behaviour takes over after a few spells. Pure: the caller passes
//! the clock.

use super::cost::CostModel;

/// Prefixes shorter than this are not cached by the providers (Anthropic's minimum for most
/// models), so there is nothing to keep warm.
pub const MIN_CACHED_PREFIX: u64 = 1_024;

/// What the keep-alive should do now.
#[derive(Clone, Debug, PartialEq)]
pub enum KeepAlive {
    /// Nothing to do in this idle spell (the reason says why, for `/context`).
    Off(&'static str),
    /// Ask again at this time (unix seconds): the moment a ping would be due.
    WaitUntil(i64),
    /// Send a ping now: it is expected to save `saving` for `cost` (the cost model's units).
    Ping { cost: f64, saving: f64, probability: f64 },
    /// A ping would not pay (or the cap is reached): let the cache expire.
    Decline { cost: f64, saving: f64, probability: f64 },
}

/// Everything the decision reads. Times are unix seconds.
#[derive(Clone, Copy, Debug)]
pub struct KeepAliveInput<'a> {
    pub now: i64,
    /// When the user went idle (the last turn ended).
    pub idle_since: i64,
    /// When the cached prefix was last read or written (the last request, or the last ping).
    pub refreshed_at: i64,
    pub ttl_secs: i64,
    /// A ping is sent this long before the cache would run out, so it lands in time.
    pub lead_secs: i64,
    /// Tokens of the prefix the cache holds (the last request's prompt).
    pub prefix_tokens: u64,
    /// Tokens the ping sends after the last breakpoint (uncached each time), and writes.
    pub uncached_tokens: u64,
    pub pings_so_far: u32,
    pub max_pings: u32,
    /// The provider caches prompts (it reported cache reads or writes, and breakpoints are
    /// sent).
    pub caching: bool,
    pub model: CostModel,
    /// How long the user was idle before each earlier prompt of the session, seconds.
    pub history: &'a [i64],
}

/// Laplace's rule of succession: `(k + 1) / (n + 2)` (see the module doc).
pub fn return_probability(history: &[i64], idle_for: i64, window: (i64, i64)) -> f64 {
    let survivors: Vec<i64> = history.iter().copied().filter(|&g| g > idle_for).collect();
    let back = survivors.iter().filter(|&&g| g > window.0 && g <= window.1).count();
    (back as f64 + 1.0) / (survivors.len() as f64 + 2.0)
}

/// The decision for this moment of an idle spell.
pub fn decide(input: &KeepAliveInput<'_>) -> KeepAlive {
    if !input.caching {
        return KeepAlive::Off("the provider keeps no prompt cache");
    }
    if input.prefix_tokens < MIN_CACHED_PREFIX {
        return KeepAlive::Off("the prompt is too short to be cached");
    }
    if input.max_pings == 0 {
        return KeepAlive::Off("keep-alive is off ([cache] keepalive_max_pings = 0)");
    }
    let expires = input.refreshed_at + input.ttl_secs;
    if input.now >= expires {
        return KeepAlive::Off("the cache has expired");
    }
    let lead = input.lead_secs.clamp(1, input.ttl_secs.max(2) - 1);
    let due = expires - lead;
    if input.now < due {
        return KeepAlive::WaitUntil(due);
    }
    // The ping reads the prefix, writes what follows the last breakpoint, and answers one
    // token.
    let m = &input.model;
    let cost = input.prefix_tokens as f64 * m.read + input.uncached_tokens as f64 * m.write + m.output;
    let idle_for = input.now - input.idle_since;
    let bought = (expires - input.idle_since, input.now + input.ttl_secs - input.idle_since);
    let probability = return_probability(input.history, idle_for, bought);
    let saving = probability * input.prefix_tokens as f64 * (m.write - m.read).max(0.0);
    if input.pings_so_far >= input.max_pings || saving <= cost {
        return KeepAlive::Decline { cost, saving, probability };
    }
    KeepAlive::Ping { cost, saving, probability }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Sonnet's prices, dollars per million tokens, with the 5-minute cache.
    const SONNET: CostModel = CostModel { read: 0.30, write: 3.75, aux_input: 3.0, output: 15.0 };

    fn input(now: i64, pings: u32, history: &[i64]) -> KeepAliveInput<'_> {
        KeepAliveInput {
            now,
            idle_since: 0,
            refreshed_at: 0,
            ttl_secs: 300,
            lead_secs: 90,
            prefix_tokens: 40_000,
            uncached_tokens: 20,
            pings_so_far: pings,
            max_pings: 2,
            caching: true,
            model: SONNET,
            history,
        }
    }

    /// A fake clock: runs an idle spell of `idle` seconds, sending every ping the decision
    /// asks for; returns the times they were sent.
    fn spell(idle: i64, max_pings: u32, history: &[i64]) -> Vec<i64> {
        let mut now = 0;
        let mut refreshed = 0;
        let mut pings = Vec::new();
        while now < idle {
            let i = KeepAliveInput { refreshed_at: refreshed, max_pings, ..input(now, pings.len() as u32, history) };
            match decide(&i) {
                KeepAlive::WaitUntil(t) => now = t,
                KeepAlive::Ping { .. } => {
                    pings.push(now);
                    refreshed = now;
                }
                KeepAlive::Off(_) | KeepAlive::Decline { .. } => break,
            }
        }
        pings.retain(|&t| t < idle);
        pings
    }

    #[test]
    fn four_idle_minutes_on_a_five_minute_cache_take_one_ping_before_it_runs_out() {
        let pings = spell(240, 2, &[]);
        assert_eq!(pings, vec![210], "one ping, 90 s before the TTL ends");
        // The next prompt at 240 s comes within the TTL the ping started again.
        assert!(240 < pings[0] + 300);
    }

    #[test]
    fn an_idle_hour_sends_no_more_pings_than_the_cap() {
        assert_eq!(spell(3_600, 2, &[]).len(), 2);
        assert_eq!(spell(3_600, 5, &[]).len(), 5);
        assert!(spell(3_600, 0, &[]).is_empty());
    }

    #[test]
    fn a_user_who_always_comes_back_late_gets_no_ping() {
        // Ten earlier spells, each over half an hour: at 3.5 idle minutes a ping buys the
        // minutes 5 to 8.5, and nobody ever came back then.
        let history = [2_000; 10];
        let decision = decide(&input(210, 0, &history));
        match decision {
            KeepAlive::Decline { probability, saving, cost } => {
                assert!((probability - 1.0 / 12.0).abs() < 1e-9, "{probability}");
                assert!(saving <= cost, "{saving} {cost}");
            }
            other => panic!("expected a decline, got {other:?}"),
        }
        // One who comes back after six minutes, as usual, does get it.
        assert!(matches!(decide(&input(210, 0, &[360; 10])), KeepAlive::Ping { .. }));
    }

    #[test]
    fn nothing_is_sent_without_a_cache_worth_keeping() {
        let no_cache = KeepAliveInput { caching: false, ..input(210, 0, &[]) };
        assert!(matches!(decide(&no_cache), KeepAlive::Off(_)));
        let short = KeepAliveInput { prefix_tokens: 500, ..input(210, 0, &[]) };
        assert!(matches!(decide(&short), KeepAlive::Off(_)));
        assert!(matches!(decide(&input(300, 0, &[])), KeepAlive::Off("the cache has expired")));
        assert_eq!(decide(&input(10, 0, &[])), KeepAlive::WaitUntil(210));
    }

    #[test]
    fn the_probability_counts_only_spells_as_long_as_this_one() {
        // Spells of 1, 2 and 10 minutes; at 4 idle minutes only the 10-minute one counts, and
        // it ended after the window 5–8 minutes.
        let p = return_probability(&[60, 120, 600], 240, (300, 480));
        assert!((p - 1.0 / 3.0).abs() < 1e-9, "{p}");
        assert!((return_probability(&[], 240, (300, 480)) - 0.5).abs() < 1e-9);
    }
}
