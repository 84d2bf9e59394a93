//! The model a session talks to: the provider and its client, the model and its window (as
//! configured, switched by `/model`, or learned from the server), the retry policy, and the
//! auxiliary model that summarises and extracts.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::auxiliary::{AuxModel, UsageRecorder};
use super::events::NoticeLevel;
use crate::config::{
    CacheConfig, CacheTtl, CompactionConfig, Config, ModelInfo, ModelOverride, Prices, ProviderKind, WindowSource,
    lookup_model,
};
use crate::context::CostModel;
use crate::llm::{ChatRequest, ChatResponse, LlmError, Provider, RetryPolicy, ServedWindow, StreamEvent};

#[derive(Clone)]
pub(super) struct ModelSlot {
    provider: Arc<dyn Provider>,
    kind: ProviderKind,
    info: ModelInfo,
    /// `--context-window`, kept across `/model` switches.
    window_override: Option<u64>,
    retry: RetryPolicy,
    /// `[compaction]`: the auxiliary model, when it is not the main one.
    auxiliary: CompactionConfig,
    /// `[models]` overrides, for the windows of models switched to.
    catalog: BTreeMap<String, ModelOverride>,
}

impl ModelSlot {
    pub(super) fn new(
        provider: Arc<dyn Provider>,
        kind: ProviderKind,
        info: ModelInfo,
        window_override: Option<u64>,
        config: &Config,
    ) -> ModelSlot {
        ModelSlot {
            provider,
            kind,
            info,
            window_override,
            retry: RetryPolicy::from_config(&config.retry),
            auxiliary: config.compaction.clone(),
            catalog: config.models.clone(),
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.info.name
    }

    pub(super) fn kind(&self) -> ProviderKind {
        self.kind
    }

    pub(super) fn window(&self) -> u64 {
        self.info.context_window
    }

    pub(super) fn window_source(&self) -> WindowSource {
        self.info.window_source
    }

    pub(super) fn max_output_tokens(&self) -> u32 {
        self.info.max_output_tokens
    }

    /// The prices the context pipeline weighs history rewrites with: the catalog's (or
    /// `[models]`') prices with the provider's prompt cache — Anthropic's when `[cache]` is on,
    /// an OpenAI-compatible API's automatic one; a server that reported its own window and has
    /// no prices is local, where a kept prefix costs nothing and a rewrite costs prefill. A
    /// rewrite's cache write is priced for the lifetime `[cache] ttl` asks for.
    pub(super) fn cost_model(&self, cache: &CacheConfig) -> CostModel {
        cost_model(&self.info, self.kind, cache)
    }

    /// What the model can do with thinking, as the catalog says.
    pub(super) fn thinking_support(&self) -> crate::config::ThinkingSupport {
        self.info.thinking
    }

    /// Whether the model takes images.
    pub(super) fn takes_images(&self) -> bool {
        self.info.images
    }

    /// Whether requests may carry `cache_control` breakpoints (Anthropic, and OpenAI-compatible
    /// endpoints that honour them).
    pub(super) fn honours_cache_control(&self) -> bool {
        self.provider.honours_cache_control(&self.info.name)
    }

    /// `/model NAME`: the new model, and a warning when its window is only assumed.
    pub(super) fn switch(&mut self, name: &str) -> Option<String> {
        let mut info = lookup_model(name, &self.catalog);
        if let Some(w) = self.window_override {
            info.context_window = w;
            info.window_source = WindowSource::Flag;
        }
        let warning = (info.window_source == WindowSource::Assumed).then(|| {
            format!(
                "{name} is not a model cairn knows; assuming a {}-token window. Check the name, or set [models.\"{name}\"] context_window in config.toml.",
                info.context_window
            )
        });
        self.info = info;
        warning
    }

    /// What to tell the user about a window that is not known for sure, at session start.
    pub(super) fn window_notice(&self) -> Option<(NoticeLevel, String)> {
        let name = &self.info.name;
        let window = self.info.context_window;
        match self.info.window_source {
            WindowSource::Assumed => Some((
                NoticeLevel::Warning,
                format!(
                    "the context window of {name} is unknown; assuming {window} tokens. Set --context-window or [models.\"{name}\"] context_window in config.toml."
                ),
            )),
            WindowSource::AssumedUntilLoaded => Some((
                NoticeLevel::Info,
                format!(
                    "Ollama has not loaded {name} yet; assuming a {window}-token window until it reports its own after the first request."
                ),
            )),
            WindowSource::Flag | WindowSource::Config | WindowSource::Catalog | WindowSource::Server => None,
        }
    }

    /// Ollama decides a model's window when it loads the model, at the first request: ask then,
    /// once, and budget for what it says. A window smaller than assumed is worth a warning,
    /// because Ollama silently drops the start of a prompt that does not fit.
    pub(super) async fn learn_served_window(&mut self) -> Option<(NoticeLevel, String)> {
        if self.info.window_source != WindowSource::AssumedUntilLoaded {
            return None;
        }
        let assumed = self.info.context_window;
        let name = self.info.name.clone();
        let ServedWindow::Reported(window) = self.provider.served_window(&name).await else {
            self.info.window_source = WindowSource::Assumed;
            return Some((
                NoticeLevel::Warning,
                format!(
                    "Ollama did not report the window of {name}; still assuming {assumed} tokens. Set --context-window to what the server runs (`ollama ps` shows it)."
                ),
            ));
        };
        self.info.context_window = window;
        self.info.window_source = WindowSource::Server;
        tracing::info!(model = %name, window, assumed, "the server reported the model's window");
        Some(if window < assumed {
            (
                NoticeLevel::Warning,
                format!(
                    "Ollama runs {name} with a {window}-token window, not the {assumed} assumed; cairn now budgets for {window}. For more room, restart Ollama with OLLAMA_CONTEXT_LENGTH set higher."
                ),
            )
        } else {
            (NoticeLevel::Info, format!("Ollama runs {name} with a {window}-token window; cairn now budgets for it."))
        })
    }

    /// One request with the session's retries, stream events forwarded to `events`.
    pub(super) async fn send(
        &self,
        request: &ChatRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        crate::llm::send_with_retries(self.provider.as_ref(), request, events, cancel, &self.retry).await
    }

    /// Whether compaction summaries are written by the session's own model, which can read
    /// the conversation in place (from the provider's cache); a `[compaction] model` of another
    /// name cannot.
    pub(super) fn summarizes_in_place(&self) -> bool {
        self.auxiliary.model.as_deref().is_none_or(|m| m == self.info.name)
    }

    /// The model for auxiliary calls (`[compaction] model`, else the main one), its usage
    /// going to `recorder`.
    pub(super) fn auxiliary(&self, cancel: CancellationToken, recorder: UsageRecorder) -> AuxModel {
        let model = self.auxiliary.model.clone().unwrap_or_else(|| self.info.name.clone());
        let window = match (&self.auxiliary.model, self.auxiliary.context_window) {
            (_, Some(w)) => w,
            (None, None) => self.info.context_window,
            (Some(m), None) => lookup_model(m, &self.catalog).context_window,
        };
        AuxModel {
            provider: self.provider.clone(),
            model,
            window,
            retry: self.retry.clone(),
            cancel,
            recorder: Some(recorder),
        }
    }
}

/// See [`ModelSlot::cost_model`].
fn cost_model(info: &ModelInfo, kind: ProviderKind, cache: &CacheConfig) -> CostModel {
    let local = info.prices.is_none()
        && match info.window_source {
            WindowSource::Server | WindowSource::AssumedUntilLoaded => true,
            WindowSource::Flag | WindowSource::Config | WindowSource::Catalog | WindowSource::Assumed => false,
        };
    let caching = match kind {
        ProviderKind::Anthropic => cache.enabled,
        ProviderKind::Openai | ProviderKind::OpenaiResponses => true,
    };
    // A rewrite is written to the cache again at the price of the lifetime cairn asks for:
    // Anthropic bills a 1-hour write at 2× input, a 5-minute one at 1.25×.
    let prices = info.prices.map(|p| match cache.ttl {
        CacheTtl::FiveMinutes => p,
        CacheTtl::OneHour => Prices { cache_write: p.cache_write_1h, ..p },
    });
    CostModel::for_session(prices.as_ref(), local, caching)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(prices: Option<Prices>, window_source: WindowSource) -> ModelInfo {
        ModelInfo {
            name: "m".into(),
            context_window: 32_000,
            window_source,
            max_output_tokens: 4_096,
            prices,
            thinking: crate::config::ThinkingSupport::None,
            images: false,
        }
    }

    #[test]
    fn the_pipeline_is_priced_from_the_catalog_and_the_provider_cache() {
        let sonnet = Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 };
        let priced = info(Some(sonnet), WindowSource::Catalog);
        let on = CacheConfig { enabled: true, ttl: CacheTtl::FiveMinutes, ..CacheConfig::default() };
        let off = CacheConfig { enabled: false, ..on.clone() };
        assert_eq!(cost_model(&priced, ProviderKind::Anthropic, &on), CostModel::from_prices(&sonnet, true));
        // `[cache] ttl = "1h"`: a rewrite is written again at the 1-hour price.
        let hour = cost_model(&priced, ProviderKind::Anthropic, &CacheConfig { ttl: CacheTtl::OneHour, ..on.clone() });
        assert_eq!(hour.rewrite_cost(1), 6.0 - 0.3);
        assert_eq!(cost_model(&priced, ProviderKind::Anthropic, &on).rewrite_cost(1), 3.75 - 0.3);
        // `[cache] enabled = false`: every re-sent token is full input, so reductions pay at once.
        assert_eq!(cost_model(&priced, ProviderKind::Anthropic, &off), CostModel::no_cache(3.0, 15.0));
        // OpenAI caches prefixes itself, whatever `[cache]` says.
        assert_eq!(cost_model(&priced, ProviderKind::Openai, &off), CostModel::from_prices(&sonnet, true));
        // A server that reported its window and has no prices is local: only the window rewrites.
        assert_eq!(cost_model(&info(None, WindowSource::Server), ProviderKind::Openai, &on), CostModel::local());
        // An unknown hosted model gets the usual ratios.
        assert_eq!(cost_model(&info(None, WindowSource::Assumed), ProviderKind::Openai, &on), CostModel::assumed());
    }
}
