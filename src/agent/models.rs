//! The models a session may switch to: the catalog's (of the provider's family), those the
//! provider lists, and those `[models]` in the config describes. `/model` alone shows them in
//! a picker; `/model NAME` with a name none of them knows is refused with the list.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::events::{ModelChoice, ModelList};
use crate::config::{ModelOverride, ProviderKind, WindowSource, catalog, is_known_model, lookup_model};

/// Asks the provider which models it serves (`GET /v1/models`).
pub type ModelLister = Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<String>, String>> + Send + Sync>;

/// Why `/model NAME` was refused, and what the user can choose instead.
pub(super) struct Refusal {
    pub known: Vec<String>,
}

/// Shared by the router (which answers the list at once, even mid-turn) and the worker (which
/// checks a name before switching).
#[derive(Clone)]
pub(super) struct ModelDirectory {
    kind: ProviderKind,
    lister: Option<ModelLister>,
    overrides: BTreeMap<String, ModelOverride>,
    current: Arc<Mutex<String>>,
    /// The llama-server cairn runs, whose model and window the list shows.
    local: Option<Arc<crate::local::LocalServer>>,
}

impl ModelDirectory {
    pub(super) fn new(
        kind: ProviderKind,
        lister: Option<ModelLister>,
        overrides: BTreeMap<String, ModelOverride>,
        current: &str,
    ) -> ModelDirectory {
        ModelDirectory { kind, lister, overrides, current: Arc::new(Mutex::new(current.to_string())), local: None }
    }

    /// The list shows `server` and its model with the window it serves.
    pub(super) fn with_local_server(mut self, server: Option<Arc<crate::local::LocalServer>>) -> ModelDirectory {
        self.local = server;
        self
    }

    pub(super) fn set_current(&self, name: &str) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = name.to_string();
    }

    fn current(&self) -> String {
        self.current.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    async fn provider_models(&self) -> Result<Vec<String>, String> {
        match &self.lister {
            Some(list) => list().await,
            None => Err("this provider cannot be asked for its models".into()),
        }
    }

    /// Every model to choose from: the provider's first (in its order), then the catalog's,
    /// then the config's.
    pub(super) async fn list(&self) -> ModelList {
        let (listed, provider_error) = match self.provider_models().await {
            Ok(names) => (names, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let local_server = self.local.as_ref().map(|s| s.info());
        let mut models = self.choices(&listed);
        if let (Some(server), Some(info)) = (&self.local, &local_server) {
            for m in models.iter_mut().filter(|m| m.name == server.model_name()) {
                if let Some(window) = info.window {
                    m.window = window;
                    m.window_assumed = false;
                }
            }
        }
        ModelList { current: self.current(), models, provider_error, local_server }
    }

    fn choices(&self, listed: &[String]) -> Vec<ModelChoice> {
        let anthropic = self.kind == ProviderKind::Anthropic;
        let mut names: Vec<String> = listed.to_vec();
        names.extend(catalog().into_iter().filter(|m| m.anthropic == anthropic).map(|m| m.name.to_string()));
        names.extend(self.overrides.keys().cloned());
        let mut seen = std::collections::HashSet::new();
        names
            .into_iter()
            .filter(|n| seen.insert(n.clone()))
            .map(|name| {
                let info = lookup_model(&name, &self.overrides);
                ModelChoice {
                    listed: listed.contains(&name),
                    window: info.context_window,
                    window_assumed: info.window_source == WindowSource::Assumed,
                    prices: info.prices,
                    name,
                }
            })
            .collect()
    }

    /// `Ok` when `name` is a model the catalog, the config or the provider knows.
    pub(super) async fn check(&self, name: &str) -> Result<(), Refusal> {
        if is_known_model(name, &self.overrides) {
            return Ok(());
        }
        let listed = self.provider_models().await.unwrap_or_default();
        if listed.iter().any(|m| m == name) {
            return Ok(());
        }
        Err(Refusal { known: self.choices(&listed).into_iter().map(|c| c.name).collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(listed: Vec<&'static str>) -> ModelDirectory {
        let lister: ModelLister = Arc::new(move || {
            let listed = listed.iter().map(|s| s.to_string()).collect();
            Box::pin(async move { Ok(listed) })
        });
        ModelDirectory::new(ProviderKind::Anthropic, Some(lister), BTreeMap::new(), "claude-sonnet-4-5")
    }

    #[tokio::test]
    async fn the_list_has_the_providers_models_then_the_catalogs_of_its_family() {
        let list = directory(vec!["mock-model", "claude-haiku-4-5"]).list().await;
        assert_eq!(list.current, "claude-sonnet-4-5");
        assert_eq!(list.models[0].name, "mock-model");
        assert!(list.models[0].listed && list.models[0].window_assumed && list.models[0].prices.is_none());
        let haiku = list.models.iter().filter(|m| m.name == "claude-haiku-4-5").collect::<Vec<_>>();
        assert_eq!(haiku.len(), 1, "listed once");
        assert!(haiku[0].listed && haiku[0].prices.is_some());
        assert!(list.models.iter().all(|m| !m.name.starts_with("gpt")), "only the provider's family");
    }

    #[tokio::test]
    async fn unknown_names_are_refused_with_what_is_known() {
        let d = directory(vec!["mock-model"]);
        assert!(d.check("claude-opus-4-5").await.is_ok(), "the catalog knows it");
        assert!(d.check("mock-model").await.is_ok(), "the provider lists it");
        let refusal = d.check("claude-sonet-4-5").await.err().unwrap();
        assert!(refusal.known.contains(&"mock-model".to_string()) && refusal.known.len() > 3);
    }
}
