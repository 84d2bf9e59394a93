//! Which provider, endpoint, key and model to use, from flags, config and environment.

use serde::{Deserialize, Serialize};

use super::defaults::Config;
use super::models::{ModelInfo, WindowSource, lookup_model};
use super::secrets::Secret;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// Any OpenAI-compatible chat completions endpoint (OpenAI, OpenRouter, Ollama, llama-server, vLLM, LM Studio).
    Openai,
    /// The OpenAI Responses API (reasoning kept across tool calls); the default for OpenAI's own endpoint with reasoning models.
    #[serde(rename = "openai-responses", alias = "openai_responses")]
    #[value(name = "openai-responses")]
    OpenaiResponses,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::OpenaiResponses => "openai-responses",
        }
    }

    pub fn key_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai | ProviderKind::OpenaiResponses => "OPENAI_API_KEY",
        }
    }

    pub fn base_url_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_BASE_URL",
            ProviderKind::Openai | ProviderKind::OpenaiResponses => "OPENAI_BASE_URL",
        }
    }

    /// The official endpoint, spelled as the vendors' SDKs spell their base URL env vars.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai | ProviderKind::OpenaiResponses => "https://api.openai.com/v1",
        }
    }

    fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::Openai | ProviderKind::OpenaiResponses => "gpt-5",
        }
    }
}

/// Whether `base_url` is OpenAI's own API (not a compatible server).
pub fn is_openai_endpoint(base_url: &str) -> bool {
    url_host(base_url).is_some_and(|host| host.eq_ignore_ascii_case("api.openai.com"))
}

/// The host of an http(s) URL, without a URL parser (config must not pull in the network
/// stack): `https://user@HOST:443/v1` → `HOST`.
fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host =
        if host.starts_with('[') { host.split(']').next()?.trim_start_matches('[') } else { host.split(':').next()? };
    (!host.is_empty()).then_some(host)
}

/// What the command line says, which beats config and environment.
#[derive(Clone, Debug, Default)]
pub struct ProviderOverrides {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub context_window: Option<u64>,
}

/// A provider choice that needs no network to make.
#[derive(Clone, Debug)]
pub struct ResolvedProvider {
    pub kind: ProviderKind,
    pub base_url: String,
    pub api_key: Option<Secret>,
    /// `None` when the model must be asked of the server (a local endpoint with none configured).
    pub model: Option<String>,
    /// Why this provider was chosen, for `cairn doctor`.
    pub reason: String,
}

/// The outcome of detection.
#[derive(Clone, Debug)]
pub enum Detected {
    Provider(ResolvedProvider),
    /// Nothing configured: try these local OpenAI-compatible servers, in order.
    ProbeLocal(Vec<LocalCandidate>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalCandidate {
    pub name: &'static str,
    pub base_url: String,
}

/// Where local OpenAI-compatible servers listen by default, probed in this order.
pub fn local_candidates() -> Vec<LocalCandidate> {
    vec![
        LocalCandidate { name: "Ollama", base_url: "http://127.0.0.1:11434/v1".into() },
        LocalCandidate { name: "llama-server", base_url: "http://127.0.0.1:8080/v1".into() },
        LocalCandidate { name: "LM Studio", base_url: "http://127.0.0.1:1234/v1".into() },
        LocalCandidate { name: "vLLM", base_url: "http://127.0.0.1:8000/v1".into() },
    ]
}

/// Choose a provider: `--provider`, else config, else `ANTHROPIC_API_KEY` → anthropic, else
/// `OPENAI_API_KEY` or `OPENAI_BASE_URL` → openai, else probe local servers.
pub fn detect_provider(config: &Config, flags: &ProviderOverrides, env: &dyn Fn(&str) -> Option<String>) -> Detected {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let (kind, reason) = if let Some(kind) = flags.provider {
        (kind, "--provider flag".to_string())
    } else if let Some(kind) = config.provider {
        (kind, "provider in config.toml".to_string())
    } else if var("ANTHROPIC_API_KEY").is_some() {
        (ProviderKind::Anthropic, "ANTHROPIC_API_KEY is set".to_string())
    } else if var("OPENAI_API_KEY").is_some() {
        (ProviderKind::Openai, "OPENAI_API_KEY is set".to_string())
    } else if var("OPENAI_BASE_URL").is_some() {
        (ProviderKind::Openai, "OPENAI_BASE_URL is set".to_string())
    } else {
        return Detected::ProbeLocal(local_candidates());
    };
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| config.base_url.clone())
        .or_else(|| var(kind.base_url_var()))
        .unwrap_or_else(|| kind.default_base_url().to_string());
    let base_url = base_url.trim_end_matches('/').to_string();
    let api_key = var(kind.key_var()).map(Secret::new);
    let custom_endpoint = base_url != kind.default_base_url();
    let model = flags.model.clone().or_else(|| config.model.clone()).or_else(|| {
        // A custom OpenAI-compatible endpoint serves models of its own; ask it.
        (!(kind != ProviderKind::Anthropic && custom_endpoint)).then(|| kind.default_model().to_string())
    });
    // Chosen from the environment (nothing named a provider): OpenAI's own endpoint speaks the
    // Responses API, which keeps a reasoning model's reasoning across tool calls.
    let chosen = flags.provider.is_some() || config.provider.is_some();
    let (kind, reason) = match &model {
        Some(m)
            if !chosen
                && kind == ProviderKind::Openai
                && is_openai_endpoint(&base_url)
                && lookup_model(m, &config.models).thinking.reasons() =>
        {
            (ProviderKind::OpenaiResponses, format!("{reason}; {m} reasons, so the Responses API"))
        }
        Some(_) | None => (kind, reason),
    };
    Detected::Provider(ResolvedProvider { kind, base_url, api_key, model, reason })
}

/// A local server that answered the probe.
pub fn resolve_provider(candidate: &LocalCandidate, flags: &ProviderOverrides, config: &Config) -> ResolvedProvider {
    ResolvedProvider {
        kind: ProviderKind::Openai,
        base_url: candidate.base_url.clone(),
        api_key: None,
        model: flags.model.clone().or_else(|| config.model.clone()),
        reason: format!("{} answered at {}", candidate.name, candidate.base_url),
    }
}

/// The model's facts with the `--context-window` flag and `context_window` config applied.
pub fn model_info(config: &Config, flags: &ProviderOverrides, model: &str) -> ModelInfo {
    let mut info = lookup_model(model, &config.models);
    if let Some(w) = flags.context_window {
        info.context_window = w;
        info.window_source = WindowSource::Flag;
    } else if let Some(w) = config.context_window {
        info.context_window = w;
        info.window_source = WindowSource::Config;
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    fn provider(d: Detected) -> ResolvedProvider {
        match d {
            Detected::Provider(p) => p,
            Detected::ProbeLocal(_) => panic!("expected a provider"),
        }
    }

    #[test]
    fn anthropic_key_wins_over_openai_key() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant"), ("OPENAI_API_KEY", "sk-oa")]);
        let p = provider(detect_provider(&Config::default(), &ProviderOverrides::default(), &env));
        assert_eq!(p.kind, ProviderKind::Anthropic);
        assert_eq!(p.api_key.unwrap().expose(), "sk-ant");
        assert_eq!(p.model.as_deref(), Some("claude-sonnet-4-5"));
    }

    #[test]
    fn openai_reasoning_models_on_openais_endpoint_get_the_responses_api() {
        let env = env_of(&[("OPENAI_API_KEY", "sk-oa")]);
        let p = provider(detect_provider(&Config::default(), &ProviderOverrides::default(), &env));
        assert_eq!(p.kind, ProviderKind::OpenaiResponses, "{}", p.reason);
        // A model that does not reason stays on chat completions.
        let flags = ProviderOverrides { model: Some("gpt-4o".into()), ..Default::default() };
        assert_eq!(provider(detect_provider(&Config::default(), &flags, &env)).kind, ProviderKind::Openai);
        // So does any other endpoint, and a provider named explicitly.
        let other = env_of(&[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1")]);
        let flags = ProviderOverrides { model: Some("openai/gpt-5.4".into()), ..Default::default() };
        assert_eq!(provider(detect_provider(&Config::default(), &flags, &other)).kind, ProviderKind::Openai);
        let flags = ProviderOverrides { provider: Some(ProviderKind::Openai), ..Default::default() };
        assert_eq!(provider(detect_provider(&Config::default(), &flags, &env)).kind, ProviderKind::Openai);
        assert!(is_openai_endpoint("https://api.openai.com/v1") && !is_openai_endpoint("http://127.0.0.1:9/v1"));
        assert_eq!(url_host("http://[::1]:8080/v1"), Some("::1"));
    }

    #[test]
    fn openai_base_url_alone_selects_openai_and_asks_server_for_model() {
        let env = env_of(&[("OPENAI_BASE_URL", "http://localhost:1234/v1/")]);
        let p = provider(detect_provider(&Config::default(), &ProviderOverrides::default(), &env));
        assert_eq!(p.kind, ProviderKind::Openai);
        assert_eq!(p.base_url, "http://localhost:1234/v1");
        assert_eq!(p.model, None);
        assert!(p.api_key.is_none());
    }

    #[test]
    fn flag_beats_config_beats_env() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "k")]);
        let config = Config { provider: Some(ProviderKind::Openai), ..Default::default() };
        let p = provider(detect_provider(&config, &ProviderOverrides::default(), &env));
        assert_eq!(p.kind, ProviderKind::Openai);
        let flags = ProviderOverrides { provider: Some(ProviderKind::Anthropic), ..Default::default() };
        assert_eq!(provider(detect_provider(&config, &flags, &env)).kind, ProviderKind::Anthropic);
    }

    #[test]
    fn nothing_set_means_probe_local_servers() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "  ")]);
        assert!(matches!(
            detect_provider(&Config::default(), &ProviderOverrides::default(), &env),
            Detected::ProbeLocal(c) if c.len() == 4
        ));
    }
}
