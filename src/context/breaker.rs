//! The compaction circuit breaker (CONTEXT.md §5): automatic compaction stops after failures in
//! a row, or after compactions in a row that freed too little of the window to be worth their
//! cost; it half-opens after a cooldown and closes on a useful compaction or when the pressure
//! is gone. While it is open, trimming handles pressure; `/compact` by hand always tries.

use serde::{Deserialize, Serialize};

use crate::config::ContextConfig;

/// The breaker's persisted record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breaker {
    pub consecutive_failures: u32,
    /// Compactions in a row that freed less than a useful share of the window.
    pub ineffective_in_row: u32,
    /// Unix seconds when it opened; `None` while closed.
    pub opened_at: Option<i64>,
}

/// Where the breaker stands at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Automatic compaction runs.
    Closed,
    /// Automatic compaction is skipped until the cooldown ends.
    Open,
    /// The cooldown is over: the next automatic compaction is a trial; a failure re-opens.
    HalfOpen,
}

/// The breaker's thresholds, from `[context]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerSettings {
    pub failures: u32,
    pub cooldown_secs: u64,
    pub ineffective_in_row: u32,
    /// A compaction that frees less than this share of the effective window is ineffective.
    pub useful_share: f64,
}

impl BreakerSettings {
    pub fn from_config(config: &ContextConfig) -> BreakerSettings {
        BreakerSettings {
            failures: config.breaker_failures.max(1),
            cooldown_secs: config.breaker_cooldown_secs,
            ineffective_in_row: config.breaker_ineffective_in_row.max(1),
            useful_share: config.breaker_useful_share,
        }
    }
}

/// What a successful compaction told the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It freed a useful share of the window.
    Useful,
    /// It freed too little; the next compaction should take more (keep a shorter tail).
    Ineffective,
    /// Too little, too often: the breaker opened.
    Opened,
}

impl Breaker {
    pub fn state(&self, now: i64, settings: &BreakerSettings) -> BreakerState {
        match self.opened_at {
            None => BreakerState::Closed,
            Some(at) if now - at >= settings.cooldown_secs as i64 => BreakerState::HalfOpen,
            Some(_) => BreakerState::Open,
        }
    }

    /// Whether an automatic compaction may run now.
    pub fn allows(&self, now: i64, settings: &BreakerSettings) -> bool {
        match self.state(now, settings) {
            BreakerState::Closed | BreakerState::HalfOpen => true,
            BreakerState::Open => false,
        }
    }

    /// A compaction failed. Opens after enough in a row; a failed trial re-opens at once.
    pub fn record_failure(&mut self, now: i64, settings: &BreakerSettings) {
        self.consecutive_failures += 1;
        if self.consecutive_failures >= settings.failures || self.opened_at.is_some() {
            self.opened_at = Some(now);
        }
    }

    /// A compaction succeeded and freed `freed` tokens of an `effective` window.
    pub fn record_success(&mut self, freed: u64, effective: u64, now: i64, settings: &BreakerSettings) -> Outcome {
        self.consecutive_failures = 0;
        if (freed as f64) < effective as f64 * settings.useful_share {
            self.ineffective_in_row += 1;
            if self.ineffective_in_row >= settings.ineffective_in_row {
                self.opened_at = Some(now);
                return Outcome::Opened;
            }
            return Outcome::Ineffective;
        }
        self.ineffective_in_row = 0;
        self.opened_at = None;
        Outcome::Useful
    }

    /// Pressure is gone (below the warning threshold): the breaker closes. True when that
    /// changed anything.
    pub fn relieve(&mut self) -> bool {
        let changed = *self != Breaker::default();
        *self = Breaker::default();
        changed
    }

    /// The last compaction freed too little: the next one should reach further back.
    pub fn widen_next(&self) -> bool {
        self.ineffective_in_row > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: BreakerSettings =
        BreakerSettings { failures: 3, cooldown_secs: 300, ineffective_in_row: 2, useful_share: 0.2 };

    #[test]
    fn closed_opens_after_three_failures_and_half_opens_after_the_cooldown() {
        let mut b = Breaker::default();
        assert_eq!(b.state(0, &S), BreakerState::Closed);
        b.record_failure(10, &S);
        b.record_failure(20, &S);
        assert!(b.allows(20, &S), "two failures keep it closed");
        b.record_failure(30, &S);
        assert_eq!(b.state(31, &S), BreakerState::Open);
        assert!(!b.allows(329, &S));
        assert_eq!(b.state(330, &S), BreakerState::HalfOpen);
        assert!(b.allows(330, &S));
    }

    #[test]
    fn a_failed_trial_reopens_and_a_useful_compaction_closes() {
        let mut b = Breaker { consecutive_failures: 3, ineffective_in_row: 0, opened_at: Some(0) };
        assert_eq!(b.state(400, &S), BreakerState::HalfOpen);
        b.record_failure(400, &S);
        assert_eq!(b.state(401, &S), BreakerState::Open, "the trial failed: another cooldown");
        assert_eq!(b.record_success(5_000, 20_000, 800, &S), Outcome::Useful);
        assert_eq!(b.state(800, &S), BreakerState::Closed);
        assert_eq!(b, Breaker::default());
    }

    #[test]
    fn compactions_that_free_too_little_of_the_window_widen_then_open() {
        let mut b = Breaker::default();
        // 20 % of a 12k effective window is 2.4k: freeing 2k is not worth a compaction.
        assert_eq!(b.record_success(2_000, 12_000, 0, &S), Outcome::Ineffective);
        assert!(b.widen_next() && b.allows(0, &S));
        assert_eq!(b.record_success(2_000, 12_000, 60, &S), Outcome::Opened);
        assert_eq!(b.state(61, &S), BreakerState::Open);
        // The same saving is useful at a window where it is a larger share.
        let mut small = Breaker::default();
        assert_eq!(small.record_success(2_000, 6_000, 0, &S), Outcome::Useful);
    }

    #[test]
    fn relief_closes_it() {
        let mut b = Breaker { consecutive_failures: 1, ineffective_in_row: 1, opened_at: Some(5) };
        assert!(b.relieve());
        assert!(!b.relieve(), "already closed: nothing changed");
        assert_eq!(b.state(6, &S), BreakerState::Closed);
    }
}
