//! What cairn knows about models: context windows, output limits, prices, thinking and image
//! support. The data is `assets/models.toml`; config.toml's `[models."NAME"]` tables extend it.
//! Every price cairn shows comes through [`price_of`]; `pricing` turns usage into money.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use super::reasoning::ThinkingSupport;

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
    /// What the model can do with `thinking` (none for models the catalog does not know).
    pub thinking: ThinkingSupport,
    /// Whether it takes image input (no for models the catalog does not know).
    pub images: bool,
}

/// `[models."NAME"]` in config.toml, and every entry of the built-in catalog
/// (`assets/models.toml`), which has the same shape.
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
    pub thinking: Option<ThinkingSupport>,
    pub images: Option<bool>,
}

/// The window assumed for a model nobody told us about: small enough that a local model with
/// a 32k window never overflows, large enough to work.
pub const ASSUMED_WINDOW: u64 = 32_768;
const ASSUMED_MAX_OUTPUT: u32 = 8_192;

const CATALOG_TOML: &str = include_str!("../../assets/models.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    models: BTreeMap<String, ModelOverride>,
}

/// The built-in catalog, parsed once. A test proves the file parses; were it ever broken, every
/// model would be treated as unknown (and said so in the log) rather than cairn failing.
fn catalog_table() -> &'static BTreeMap<String, ModelOverride> {
    static CATALOG: OnceLock<BTreeMap<String, ModelOverride>> = OnceLock::new();
    CATALOG.get_or_init(|| match toml::from_str::<CatalogFile>(CATALOG_TOML) {
        Ok(file) => file.models,
        Err(e) => {
            tracing::error!(error = %e, "the built-in model catalog does not parse");
            BTreeMap::new()
        }
    })
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

/// Every model the catalog knows, in the file's order (newest families first).
pub fn catalog() -> Vec<CatalogModel> {
    let none = BTreeMap::new();
    // The table is keyed by name; the file's own order comes from its table headers.
    CATALOG_TOML
        .lines()
        .filter_map(|line| line.strip_prefix("[models.\"")?.strip_suffix("\"]"))
        .filter(|name| catalog_table().contains_key(*name))
        .filter_map(|name| {
            let info = lookup_model(name, &none);
            Some(CatalogModel {
                name,
                window: info.context_window,
                prices: info.prices?,
                anthropic: name.starts_with("claude"),
            })
        })
        .collect()
}

/// Whether `name` is a model cairn knows: in the catalog, or described in `[models]`.
pub fn is_known_model(name: &str, overrides: &BTreeMap<String, ModelOverride>) -> bool {
    let canon = canonical(name);
    overrides.contains_key(name) || best(catalog_table(), name, &canon).is_some()
}

/// Normalise router spellings: `anthropic/claude-sonnet-4.5` → `claude-sonnet-4-5`.
fn canonical(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    if base.starts_with("claude") { base.replace('.', "-") } else { base }
}

/// The entry of `table` that `name` (canonical) starts with, the longest such; `exact` (the
/// name as written) wins outright.
fn best<'a>(table: &'a BTreeMap<String, ModelOverride>, exact: &str, canon: &str) -> Option<&'a ModelOverride> {
    table.get(exact).or_else(|| {
        table
            .iter()
            .filter(|(key, _)| canon.starts_with(&canonical(key)))
            .max_by_key(|(key, _)| key.len())
            .map(|(_, entry)| entry)
    })
}

/// Facts about `name`: the catalog's entry, then config.toml's `[models]` over it (field by
/// field), else assumed.
pub fn lookup_model(name: &str, overrides: &BTreeMap<String, ModelOverride>) -> ModelInfo {
    let canon = canonical(name);
    let mut info = ModelInfo {
        name: name.to_string(),
        context_window: ASSUMED_WINDOW,
        window_source: WindowSource::Assumed,
        max_output_tokens: ASSUMED_MAX_OUTPUT,
        prices: None,
        thinking: ThinkingSupport::None,
        images: false,
    };
    if let Some(known) = best(catalog_table(), name, &canon) {
        apply(&mut info, known, WindowSource::Catalog);
    }
    if let Some(user) = best(overrides, name, &canon) {
        apply(&mut info, user, WindowSource::Config);
    }
    info
}

/// What `model`'s requests cost: the catalog's prices with config.toml's `[models."NAME"]`
/// corrections; `None` for a model without a known price (local models).
pub fn price_of(model: &str, overrides: &BTreeMap<String, ModelOverride>) -> Option<Prices> {
    lookup_model(model, overrides).prices
}

fn apply(info: &mut ModelInfo, entry: &ModelOverride, source: WindowSource) {
    if let Some(w) = entry.context_window {
        info.context_window = w;
        info.window_source = source;
    }
    if let Some(m) = entry.max_output_tokens {
        info.max_output_tokens = m;
    }
    if let Some(t) = entry.thinking {
        info.thinking = t;
    }
    if let Some(i) = entry.images {
        info.images = i;
    }
    let base = info.prices;
    let input = entry.input_price.or(base.map(|p| p.input));
    let output = entry.output_price.or(base.map(|p| p.output));
    if let (Some(input), Some(output)) = (input, output) {
        // A price given alone defaults the cache prices to the input price, as before.
        let replaced = entry.input_price.is_some() && entry.output_price.is_some();
        let keep = |field: Option<f64>, old: Option<f64>| field.or(if replaced { None } else { old }).unwrap_or(input);
        info.prices = Some(Prices {
            input,
            output,
            cache_read: keep(entry.cache_read_price, base.map(|p| p.cache_read)),
            cache_write: keep(entry.cache_write_price, base.map(|p| p.cache_write)),
            cache_write_1h: entry
                .cache_write_1h_price
                .or(if replaced || entry.cache_write_price.is_some() { None } else { base.map(|p| p.cache_write_1h) })
                .or(entry.cache_write_price)
                .unwrap_or(input),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_router_names_resolve() {
        let none = Default::default();
        assert_eq!(lookup_model("gpt-4.1-mini-2025-04-14", &none).prices.unwrap().input, 0.40);
        assert_eq!(lookup_model("gpt-5.4-mini", &none).prices.unwrap().input, 0.75);
        assert_eq!(lookup_model("gpt-5.4", &none).prices.unwrap().input, 2.5);
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

    #[test]
    fn the_readme_config_example_parses() {
        let readme = include_str!("../../README.md");
        let start = readme.find("```toml\nprovider = ").expect("README has the config example") + 8;
        let end = start + readme[start..].find("```").expect("the block ends");
        let config = super::super::file::parse(&readme[start..end]).expect("the README example parses");
        assert_eq!(config.thinking, Some(super::super::ThinkingSetting::Medium));
        assert_eq!(config.models["qwen2.5-coder:32b"].thinking, Some(ThinkingSupport::None));
    }

    #[test]
    fn the_catalog_parses_and_every_entry_is_complete() {
        let catalog = catalog_table();
        assert!(catalog.len() >= 30, "{} entries", catalog.len());
        for (name, entry) in catalog {
            assert!(entry.context_window.is_some() && entry.max_output_tokens.is_some(), "{name}: limits");
            assert!(entry.input_price.is_some() && entry.output_price.is_some(), "{name}: prices");
            assert!(entry.cache_read_price.is_some() && entry.cache_write_price.is_some(), "{name}: cache prices");
            assert!(entry.thinking.is_some() && entry.images.is_some(), "{name}: capabilities");
            assert_eq!(entry.cache_write_1h_price.is_some(), name.starts_with("claude"), "{name}: 1-hour write");
        }
    }

    #[test]
    fn current_models_carry_thinking_images_and_cache_prices() {
        let none = Default::default();
        let sonnet = lookup_model("claude-sonnet-5-20260630", &none);
        assert_eq!(sonnet.context_window, 1_000_000);
        assert_eq!(sonnet.thinking, ThinkingSupport::Adaptive);
        assert!(sonnet.images);
        let p = sonnet.prices.unwrap();
        assert_eq!((p.input, p.output, p.cache_read, p.cache_write), (2.0, 10.0, 0.2, 2.5));
        assert_eq!(lookup_model("claude-opus-5-5", &none).thinking, ThinkingSupport::AdaptiveAlways);
        assert_eq!(lookup_model("anthropic/claude-haiku-4.5", &none).thinking, ThinkingSupport::BudgetInterleaved);
        assert_eq!(lookup_model("gpt-5.5", &none).thinking, ThinkingSupport::Effort);
        assert_eq!(lookup_model("gpt-4o", &none).thinking, ThinkingSupport::None);
        assert_eq!(price_of("gpt-5.5", &none).unwrap().cache_read, 0.5);
        assert!(price_of("llama3", &none).is_none());
    }

    #[test]
    fn config_extends_the_catalog_by_prefix_and_corrects_it_field_by_field() {
        let mut o = std::collections::BTreeMap::new();
        o.insert(
            "qwen3-coder".to_string(),
            ModelOverride { context_window: Some(65_536), images: Some(true), ..Default::default() },
        );
        o.insert("claude-sonnet-5".to_string(), ModelOverride { cache_read_price: Some(0.1), ..Default::default() });
        let local = lookup_model("qwen3-coder:30b", &o);
        assert_eq!((local.context_window, local.window_source, local.images), (65_536, WindowSource::Config, true));
        let sonnet = lookup_model("claude-sonnet-5", &o);
        let p = sonnet.prices.unwrap();
        assert_eq!((p.input, p.cache_read, p.cache_write), (2.0, 0.1, 2.5), "only the cache read price changed");
        assert_eq!(sonnet.window_source, WindowSource::Catalog);
    }
}
