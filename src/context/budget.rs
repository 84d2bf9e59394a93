//! `ContextBudget`: the four thresholds every decision and display reads (CONTEXT.md §1).

use serde::Serialize;

use crate::config::ContextConfig;

/// How full the context is, by threshold crossed (all comparisons `>=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetLevel {
    /// Below the warning threshold.
    Ok,
    /// Pruning may run.
    Warning,
    /// Compaction fires.
    Compact,
    /// Trimming fires: the next request would not fit otherwise.
    Blocking,
}

impl BudgetLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetLevel::Ok => "ok",
            BudgetLevel::Warning => "warning",
            BudgetLevel::Compact => "compact",
            BudgetLevel::Blocking => "blocking",
        }
    }
}

/// Thresholds in tokens for one window size. `warning < auto_compact < blocking < effective`
/// at every window size from 4k up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ContextBudget {
    pub window: u64,
    /// Tokens kept free for the model's reply.
    pub reserve_output: u64,
    /// `window − reserve_output`: what a request may hold.
    pub effective: u64,
    pub warning: u64,
    pub auto_compact: u64,
    pub blocking: u64,
}

/// Small windows: the reply reserve is at most this share of the window (**cairn**), so an 8k
/// model keeps room for a prompt.
const MAX_RESERVE_SHARE: f64 = 0.25;
/// Small windows: each buffer is at most this share of the effective window (**cairn**,
/// CONTEXT.md §1), so the three thresholds stay ordered and positive.
const MAX_WARNING_SHARE: f64 = 0.30;
const MAX_AUTO_COMPACT_SHARE: f64 = 0.15;
const MAX_BLOCKING_SHARE: f64 = 0.04;
/// With `compact_threshold_pct`, the warning comes this share of the window earlier.
const WARNING_LEAD_SHARE: f64 = 0.10;

impl ContextBudget {
    pub fn new(window: u64, config: &ContextConfig) -> ContextBudget {
        let share = |total: u64, s: f64| (total as f64 * s) as u64;
        let reserve_output = config.reserve_output_tokens.min(share(window, MAX_RESERVE_SHARE));
        let effective = window - reserve_output;
        let warning_buffer = config.warning_buffer_tokens.min(share(effective, MAX_WARNING_SHARE));
        let auto_buffer = config.auto_compact_buffer_tokens.min(share(effective, MAX_AUTO_COMPACT_SHARE));
        let blocking_buffer = config.blocking_buffer_tokens.min(share(effective, MAX_BLOCKING_SHARE)).max(1);
        let mut warning = effective - warning_buffer;
        let mut auto_compact = effective - auto_buffer;
        let blocking = effective - blocking_buffer;
        if let Some(pct) = config.compact_threshold_pct {
            let at = share(window, pct / 100.0).clamp(1, auto_compact);
            if at < auto_compact {
                auto_compact = at;
                warning = warning.min(at.saturating_sub(share(window, WARNING_LEAD_SHARE)).max(at / 2));
            }
        }
        // Ordering holds by construction for sane configs (validated at load); keep it for
        // any config, so no threshold is ever skipped.
        auto_compact = auto_compact.min(blocking.saturating_sub(1));
        warning = warning.min(auto_compact.saturating_sub(1));
        ContextBudget { window, reserve_output, effective, warning, auto_compact, blocking }
    }

    pub fn level(&self, tokens: u64) -> BudgetLevel {
        if tokens >= self.blocking {
            BudgetLevel::Blocking
        } else if tokens >= self.auto_compact {
            BudgetLevel::Compact
        } else if tokens >= self.warning {
            BudgetLevel::Warning
        } else {
            BudgetLevel::Ok
        }
    }

    /// Share of the window, 0–100, for the context bar.
    pub fn percent(&self, tokens: u64) -> u64 {
        (tokens * 100).checked_div(self.window).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_ordered_and_positive_at_every_window() {
        let config = ContextConfig::default();
        for window in [4_096, 8_192, 16_384, 32_768, 65_536, 128_000, 200_000, 400_000, 1_000_000, 2_000_000] {
            let b = ContextBudget::new(window, &config);
            assert!(
                0 < b.warning && b.warning < b.auto_compact && b.auto_compact < b.blocking && b.blocking < b.effective,
                "{window}: {b:?}"
            );
            assert!(b.effective <= window && b.reserve_output > 0, "{b:?}");
        }
    }

    #[test]
    fn large_windows_use_the_seed_buffers_exactly() {
        let b = ContextBudget::new(200_000, &ContextConfig::default());
        assert_eq!((b.effective, b.warning, b.auto_compact, b.blocking), (184_000, 160_000, 172_000, 181_000));
        assert_eq!(b.level(159_999), BudgetLevel::Ok);
        assert_eq!(b.level(160_000), BudgetLevel::Warning);
        assert_eq!(b.level(172_000), BudgetLevel::Compact);
        assert_eq!(b.level(181_000), BudgetLevel::Blocking);
    }

    #[test]
    fn small_windows_scale_buffers_down() {
        let b = ContextBudget::new(8_192, &ContextConfig::default());
        assert_eq!(b.reserve_output, 2_048);
        assert_eq!(b.effective, 6_144);
        assert!(b.warning >= 4_000, "pruning does not start at half the window: {b:?}");
    }

    #[test]
    fn compact_threshold_pct_fires_earlier_with_a_warning_before_it() {
        let config = ContextConfig { compact_threshold_pct: Some(50.0), ..Default::default() };
        let b = ContextBudget::new(200_000, &config);
        assert_eq!(b.auto_compact, 100_000);
        assert_eq!(b.warning, 80_000);
        assert_eq!(b.blocking, 181_000);
        // A later percentage than the buffers give changes nothing.
        let late =
            ContextBudget::new(200_000, &ContextConfig { compact_threshold_pct: Some(95.0), ..Default::default() });
        assert_eq!(late.auto_compact, 172_000);
    }
}
