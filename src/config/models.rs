//! What cairn knows about models: context windows, output limits and prices. Every price cairn
//! shows comes through [`price_of`]; `pricing` turns usage into money.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Prices in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    /// Anthropic's 5-minute cache write (1.25 × input); OpenAI has no write surcharge (equal
    /// to input).
    pub cache_write: f64,
    /// Anthropic's 1-hour cache write (2 × input); OpenAI: equal to input.
    pub cache_write_1h: f64,
}

impl Prices {
    /// Anthropic bills cache reads at 0.1 × input, writes at 1.25 × (5 min) or 2 × (1 h).
    const fn anthropic(input: f64, output: f64) -> Prices {
        Prices { input, output, cache_read: input * 0.1, cache_write: input * 1.25, cache_write_1h: input * 2.0 }
    }

    /// OpenAI bills cached input at its own discounted price and nothing extra for writing it.
    const fn openai(input: f64, output: f64, cached: f64) -> Prices {
        Prices { input, output, cache_read: cached, cache_write: input, cache_write_1h: input }
    }
}

/// What `model`'s requests cost: the config's `[models."NAME"]` prices, else the catalog's;
/// `None` for a model without a known price (local models).
pub fn price_of(model: &str, overrides: &BTreeMap<String, ModelOverride>) -> Option<Prices> {
    if let Some(o) = overrides.get(model)
        && let (Some(input), Some(output)) = (o.input_price, o.output_price)
    {
        let write = o.cache_write_price.unwrap_or(input);
        return Some(Prices {
            input,
            output,
            cache_read: o.cache_read_price.unwrap_or(input),
            cache_write: write,
            cache_write_1h: o.cache_write_1h_price.unwrap_or(write),
        });
    }
    known(model).map(|k| k.prices)
}

/// Where the context window figure came from, so `doctor` and the status line can say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    Flag,
    Config,
    Catalog,
    /// Reported by the server (llama-server's `/props`, Ollama's `/api/ps`).
    Server,
    /// Unknown model: a conservative default was assumed.
    Assumed,
    /// Assumed until Ollama loads the model (at the first request) and reports its window.
    AssumedUntilLoaded,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelInfo {
    pub name: String,
    pub context_window: u64,
    pub window_source: WindowSource,
    pub max_output_tokens: u32,
    pub prices: Option<Prices>,
}

/// `[models."NAME"]` in config.toml.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelOverride {
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u32>,
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
    pub cache_read_price: Option<f64>,
    /// The 5-minute cache write (and the 1-hour one unless that is given too).
    pub cache_write_price: Option<f64>,
    pub cache_write_1h_price: Option<f64>,
}

/// The window assumed for a model nobody told us about: small enough that a local model with
/// a 32k window never overflows, large enough to work.
pub const ASSUMED_WINDOW: u64 = 32_768;
const ASSUMED_MAX_OUTPUT: u32 = 8_192;

struct Known {
    prefix: &'static str,
    window: u64,
    max_output: u32,
    prices: Prices,
}

/// One model of the catalog, for the `/model` picker.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CatalogModel {
    pub name: &'static str,
    pub window: u64,
    pub prices: Prices,
    /// `claude-…` models are Anthropic's; the rest are OpenAI's.
    pub anthropic: bool,
}

/// Every model the catalog knows, in its order (newest families first).
pub fn catalog() -> Vec<CatalogModel> {
    CATALOG
        .iter()
        .map(|k| CatalogModel {
            name: k.prefix,
            window: k.window,
            prices: k.prices,
            anthropic: k.prefix.starts_with("claude"),
        })
        .collect()
}

/// Whether `name` is a model cairn knows: in the catalog, or described in `[models]`.
pub fn is_known_model(name: &str, overrides: &BTreeMap<String, ModelOverride>) -> bool {
    overrides.contains_key(name) || known(name).is_some()
}

/// Longest matching prefix wins, so `gpt-4.1-mini` is not priced as `gpt-4.1`.
const CATALOG: &[Known] = &[
    Known { prefix: "claude-opus-4-5", window: 200_000, max_output: 64_000, prices: Prices::anthropic(5.0, 25.0) },
    Known { prefix: "claude-opus-4-1", window: 200_000, max_output: 32_000, prices: Prices::anthropic(15.0, 75.0) },
    Known { prefix: "claude-opus-4", window: 200_000, max_output: 32_000, prices: Prices::anthropic(15.0, 75.0) },
    Known { prefix: "claude-sonnet-4-5", window: 200_000, max_output: 64_000, prices: Prices::anthropic(3.0, 15.0) },
    Known { prefix: "claude-sonnet-4", window: 200_000, max_output: 64_000, prices: Prices::anthropic(3.0, 15.0) },
    Known { prefix: "claude-3-7-sonnet", window: 200_000, max_output: 64_000, prices: Prices::anthropic(3.0, 15.0) },
    Known { prefix: "claude-3-5-sonnet", window: 200_000, max_output: 8_192, prices: Prices::anthropic(3.0, 15.0) },
    Known { prefix: "claude-haiku-4-5", window: 200_000, max_output: 64_000, prices: Prices::anthropic(1.0, 5.0) },
    Known { prefix: "claude-3-5-haiku", window: 200_000, max_output: 8_192, prices: Prices::anthropic(0.8, 4.0) },
    Known { prefix: "gpt-5-mini", window: 400_000, max_output: 128_000, prices: Prices::openai(0.25, 2.0, 0.025) },
    Known { prefix: "gpt-5-nano", window: 400_000, max_output: 128_000, prices: Prices::openai(0.05, 0.40, 0.005) },
    Known { prefix: "gpt-5", window: 400_000, max_output: 128_000, prices: Prices::openai(1.25, 10.0, 0.125) },
    Known { prefix: "gpt-4.1-mini", window: 1_047_576, max_output: 32_768, prices: Prices::openai(0.40, 1.60, 0.10) },
    Known { prefix: "gpt-4.1-nano", window: 1_047_576, max_output: 32_768, prices: Prices::openai(0.10, 0.40, 0.025) },
    Known { prefix: "gpt-4.1", window: 1_047_576, max_output: 32_768, prices: Prices::openai(2.0, 8.0, 0.50) },
    Known { prefix: "gpt-4o-mini", window: 128_000, max_output: 16_384, prices: Prices::openai(0.15, 0.60, 0.075) },
    Known { prefix: "gpt-4o", window: 128_000, max_output: 16_384, prices: Prices::openai(2.50, 10.0, 1.25) },
    Known { prefix: "o4-mini", window: 200_000, max_output: 100_000, prices: Prices::openai(1.10, 4.40, 0.275) },
    Known { prefix: "o3", window: 200_000, max_output: 100_000, prices: Prices::openai(2.0, 8.0, 0.50) },
];

/// Normalise router spellings: `anthropic/claude-sonnet-4.5` → `claude-sonnet-4-5`.
fn canonical(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    if base.starts_with("claude") { base.replace('.', "-") } else { base }
}

/// The catalog's entry for `name`: the longest prefix of its canonical spelling.
fn known(name: &str) -> Option<&'static Known> {
    let canon = canonical(name);
    CATALOG.iter().filter(|k| canon.starts_with(k.prefix)).max_by_key(|k| k.prefix.len())
}

/// Facts about `name`, from overrides first, then the catalog, else assumed.
pub fn lookup_model(name: &str, overrides: &BTreeMap<String, ModelOverride>) -> ModelInfo {
    let mut info = match known(name) {
        Some(k) => ModelInfo {
            name: name.to_string(),
            context_window: k.window,
            window_source: WindowSource::Catalog,
            max_output_tokens: k.max_output,
            prices: Some(k.prices),
        },
        None => ModelInfo {
            name: name.to_string(),
            context_window: ASSUMED_WINDOW,
            window_source: WindowSource::Assumed,
            max_output_tokens: ASSUMED_MAX_OUTPUT,
            prices: None,
        },
    };
    if let Some(o) = overrides.get(name) {
        if let Some(w) = o.context_window {
            info.context_window = w;
            info.window_source = WindowSource::Config;
        }
        if let Some(m) = o.max_output_tokens {
            info.max_output_tokens = m;
        }
        if o.input_price.is_some() && o.output_price.is_some() {
            info.prices = price_of(name, overrides);
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_router_names_resolve() {
        let none = Default::default();
        assert_eq!(lookup_model("gpt-4.1-mini-2025-04-14", &none).prices.unwrap().input, 0.40);
        assert_eq!(lookup_model("gpt-4.1", &none).prices.unwrap().input, 2.0);
        let routed = lookup_model("anthropic/claude-sonnet-4.5", &none);
        assert_eq!(routed.context_window, 200_000);
        assert_eq!(routed.window_source, WindowSource::Catalog);
    }

    #[test]
    fn unknown_model_is_assumed_and_says_so() {
        let info = lookup_model("qwen2.5-coder:7b", &Default::default());
        assert_eq!(info.window_source, WindowSource::Assumed);
        assert_eq!(info.context_window, ASSUMED_WINDOW);
        assert!(info.prices.is_none());
    }

    #[test]
    fn override_sets_window_and_prices() {
        let mut o = std::collections::BTreeMap::new();
        o.insert(
            "local".to_string(),
            ModelOverride {
                context_window: Some(8_192),
                input_price: Some(0.0),
                output_price: Some(0.0),
                ..Default::default()
            },
        );
        let info = lookup_model("local", &o);
        assert_eq!((info.context_window, info.window_source), (8_192, WindowSource::Config));
        assert_eq!(info.prices.unwrap().output, 0.0);
    }
}
