//! The prompt cache kept warm while the user is idle: the idle spell (when it began, the
//! pings sent in it), the session's earlier spells that the decision learns from, and what
//! the pings have cost. The decision itself is `context::keep_alive`'s.

use crate::context::{CostModel, KeepAlive, KeepAliveInput};

/// Gaps shorter than this between an answer and the next user message are not the user
/// being away (a hook's or cairn's own follow-up message).
const MIN_SPELL_SECS: i64 = 2;

#[derive(Default)]
pub(super) struct KeepWarm {
    /// When the user went idle, while they are.
    idle_since: Option<i64>,
    /// When the cached prefix was last read or written.
    refreshed_at: i64,
    /// Pings sent in this idle spell.
    pings: u32,
    /// This spell is over for the keep-alive (declined, off, or the cache expired).
    settled: bool,
    /// The session's idle spells, seconds.
    history: Vec<i64>,
    /// Pings sent in the session (since it was opened here) and what they cost.
    pub(super) sent: u64,
    pub(super) cost: Option<f64>,
    /// The last decision, in words, for `/context`.
    pub(super) last: Option<String>,
}

/// What the worker knows that the decision needs.
pub(super) struct Site {
    pub now: i64,
    pub ttl_secs: i64,
    pub lead_secs: i64,
    pub max_pings: u32,
    pub prefix_tokens: u64,
    pub uncached_tokens: u64,
    pub caching: bool,
    pub model: CostModel,
}

impl KeepWarm {
    /// A session opened: its stored idle spells, from (user message time, the answer before
    /// it) pairs.
    pub(super) fn load(gaps: &[(String, Option<String>)]) -> KeepWarm {
        let secs = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok().map(|t| t.timestamp());
        let history = gaps
            .iter()
            .filter_map(|(user, answer)| Some(secs(user)? - secs(answer.as_deref()?)?))
            .filter(|&g| g >= MIN_SPELL_SECS)
            .collect();
        KeepWarm { history, ..KeepWarm::default() }
    }

    /// A request was answered: the prefix is fresh in the cache.
    pub(super) fn answered(&mut self, now: i64) {
        self.refreshed_at = now;
    }

    /// The turn is over: the user may be away from now on.
    pub(super) fn idle(&mut self, now: i64) {
        self.idle_since = Some(now);
        self.pings = 0;
        self.settled = false;
    }

    /// The user sent something: the spell ends, and is remembered.
    pub(super) fn back(&mut self, now: i64) {
        if let Some(since) = self.idle_since.take()
            && now - since >= MIN_SPELL_SECS
        {
            self.history.push(now - since);
        }
        self.settled = true;
    }

    /// A ping was answered.
    pub(super) fn pinged(&mut self, now: i64, cost: Option<f64>) {
        self.refreshed_at = now;
        self.pings += 1;
        self.sent += 1;
        self.cost = match (self.cost, cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    /// An idle spell the keep-alive has not settled yet.
    pub(super) fn waiting(&self) -> bool {
        self.idle_since.is_some() && !self.settled
    }

    /// Stop for this spell, saying why.
    pub(super) fn settle(&mut self, why: String) {
        self.settled = true;
        self.last = Some(why);
    }

    /// The decision now, `None` outside an idle spell.
    pub(super) fn decide(&mut self, site: &Site) -> Option<KeepAlive> {
        let since = self.idle_since.filter(|_| !self.settled)?;
        let input = KeepAliveInput {
            now: site.now,
            idle_since: since,
            refreshed_at: self.refreshed_at,
            ttl_secs: site.ttl_secs,
            lead_secs: site.lead_secs,
            prefix_tokens: site.prefix_tokens,
            uncached_tokens: site.uncached_tokens,
            pings_so_far: self.pings,
            max_pings: site.max_pings,
            caching: site.caching,
            model: site.model,
            history: &self.history,
        };
        Some(crate::context::keep_alive(&input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spells_are_learnt_from_the_store_and_from_the_session() {
        let gaps = vec![
            ("2026-11-12T10:05:00Z".to_string(), Some("2026-11-12T10:00:00Z".to_string())),
            ("2026-11-12T10:05:01Z".to_string(), Some("2026-11-12T10:05:00.500Z".to_string())),
            ("2026-11-12T09:00:00Z".to_string(), None),
        ];
        let mut warm = KeepWarm::load(&gaps);
        assert_eq!(warm.history, vec![300], "a hook's follow-up is not a spell; the first prompt has none");
        warm.idle(1_000);
        warm.back(1_090);
        assert_eq!(warm.history, vec![300, 90]);
    }
}
