//! Money: every request's usage turned into dollars the same way, wherever it is shown (the
//! status line, `/context`, the turn summary, headless JSON, `cairn usage`). Prices come from
//! [`super::price_of`] alone.

use std::collections::BTreeMap;

use super::defaults::{CacheTtl, Config};
use super::models::{ModelOverride, Prices, price_of};
use crate::conversation::Usage;

/// Dollars for one request's usage at `prices`, its cache writes priced for the cache lifetime
/// `ttl` the request asked for (Anthropic bills a 1-hour write higher than a 5-minute one).
pub fn cost(prices: &Prices, usage: &Usage, ttl: CacheTtl) -> f64 {
    let write = match ttl {
        CacheTtl::FiveMinutes => prices.cache_write,
        CacheTtl::OneHour => prices.cache_write_1h,
    };
    (usage.input_tokens as f64 * prices.input
        + usage.output_tokens as f64 * prices.output
        + usage.cache_read_input_tokens as f64 * prices.cache_read
        + usage.cache_creation_input_tokens as f64 * write)
        / 1_000_000.0
}

/// The config's overrides and the cache lifetime cairn asks for: all it takes to price any
/// request of any model.
#[derive(Clone, Debug, Default)]
pub struct Pricing {
    overrides: BTreeMap<String, ModelOverride>,
    ttl: CacheTtl,
}

impl Pricing {
    pub fn new(overrides: BTreeMap<String, ModelOverride>, ttl: CacheTtl) -> Pricing {
        Pricing { overrides, ttl }
    }

    pub fn from_config(config: &Config) -> Pricing {
        Pricing::new(config.models.clone(), config.cache.ttl)
    }

    pub fn prices(&self, model: &str) -> Option<Prices> {
        price_of(model, &self.overrides)
    }

    /// Dollars for one request of `model`; `None` when the model has no price.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.prices(model).map(|p| cost(&p, usage, self.ttl))
    }
}

/// Money as the interface shows it: `$0.0042`, `$0.42`, `$12.30`.
pub fn format_usd(usd: f64) -> String {
    if usd > 0.0 && usd < 0.01 { format!("${usd:.4}") } else { format!("${usd:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_reads_and_writes_are_priced_as_each_provider_bills_them() {
        let none = Default::default();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
        };
        let sonnet = price_of("claude-sonnet-4-5", &none).unwrap();
        // 3 input + 15 output + 0.30 read + 3.75 (5 min) or 6 (1 h) write.
        assert!((cost(&sonnet, &usage, CacheTtl::FiveMinutes) - 22.05).abs() < 1e-9);
        assert!((cost(&sonnet, &usage, CacheTtl::OneHour) - 24.30).abs() < 1e-9);
        let gpt = price_of("gpt-4.1", &none).unwrap();
        // 2 input + 8 output + 0.50 cached; OpenAI bills no write surcharge.
        assert!((cost(&gpt, &usage, CacheTtl::OneHour) - 12.50).abs() < 1e-9);
        assert_eq!(price_of("llama3.2:3b", &none), None, "local models have no price");
        assert_eq!(Pricing::default().cost("qwen2.5-coder", &usage), None);
        assert_eq!(format_usd(0.004_2), "$0.0042");
        assert_eq!(format_usd(12.3), "$12.30");
    }
}
