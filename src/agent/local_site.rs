//! The local server as the agent sees it: the news of the llama-server cairn runs (it died, it
//! was restarted), a llama-server's tokenizer for exact token counts, and what the server's own
//! timings say a prefilled and a generated token cost — so the context pipeline prices a
//! rewrite by the prefill it really causes.

use std::sync::Arc;

use crate::context::CostModel;
use crate::conversation::{SystemBlock, ToolSpec};
use crate::llm::ServerTimings;
use crate::local::{LocalServer, Tokenizer};

/// Requests measured before the server's figures replace the assumed local prices.
const MEASURED_REQUESTS: u64 = 1;

#[derive(Default)]
pub(super) struct LocalSite {
    server: Option<Arc<LocalServer>>,
    tokenizer: Option<Tokenizer>,
    /// Tokens the chat template puts around a message, once measured.
    framing: Option<u64>,
    /// Measuring it failed: counts stay estimated.
    framing_failed: bool,
    /// The session's pipeline just started counting exactly: its calibration, made on
    /// estimates, is to be made again once the messages are counted.
    pub(super) recalibrate: bool,
    costs: PrefillCosts,
}

impl LocalSite {
    pub(super) fn new(server: Option<Arc<LocalServer>>, tokenizer: Option<Tokenizer>) -> LocalSite {
        LocalSite { server, tokenizer, ..LocalSite::default() }
    }

    pub(super) fn tokenizer(&self) -> Option<Tokenizer> {
        self.tokenizer.clone()
    }

    /// After a failed request: whether the managed server died and runs again.
    pub(super) async fn recovered(&self) -> bool {
        match &self.server {
            Some(server) => server.recovered().await,
            None => false,
        }
    }

    /// What happened to the managed server since last asked.
    pub(super) fn take_notices(&self) -> Vec<String> {
        self.server.as_ref().map(|s| s.take_notices()).unwrap_or_default()
    }

    /// The template's framing: measured once, then remembered (a new session's pipeline asks
    /// again). `None` when it cannot be measured.
    pub(super) async fn framing(&mut self) -> Option<u64> {
        if self.framing.is_none() && !self.framing_failed {
            let tokenizer = self.tokenizer.as_ref()?;
            match tokenizer.framing().await {
                Ok(framing) => self.framing = Some(framing),
                Err(e) => {
                    tracing::info!(error = %e, "the chat template's framing could not be measured; token counts stay estimated");
                    self.framing_failed = true;
                }
            }
        }
        self.framing
    }

    /// A response's timings, when the server gave them.
    pub(super) fn observe(&mut self, timings: Option<&ServerTimings>) {
        if let Some(t) = timings {
            self.costs.add(t);
        }
    }

    /// The prices the server's timings show, once it has answered.
    pub(super) fn cost_model(&self) -> Option<CostModel> {
        self.costs.model()
    }
}

/// What prefill and generation took on this server, summed over the session's requests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PrefillCosts {
    requests: u64,
    prompt_n: u64,
    prompt_ms: f64,
    predicted_n: u64,
    predicted_ms: f64,
    /// A request took part of its prompt from the server's cache: a kept prefix is not
    /// prefilled again.
    reuses_prefix: bool,
}

impl PrefillCosts {
    fn add(&mut self, t: &ServerTimings) {
        self.requests += 1;
        self.prompt_n += t.prompt_n;
        self.prompt_ms += t.prompt_ms;
        self.predicted_n += t.predicted_n;
        self.predicted_ms += t.predicted_ms;
        self.reuses_prefix |= t.cache_n > 0;
    }

    /// Prices in milliseconds of the server's time: a prefilled token costs what prefill took
    /// per token; a token kept in the server's cache costs nothing once the server has shown it
    /// keeps prefixes, and a full prefill otherwise (a server without a prompt cache, where a
    /// rewrite costs nothing extra and every saved token pays on each request). A generated
    /// token costs what generation took per token.
    pub(super) fn model(&self) -> Option<CostModel> {
        if self.requests < MEASURED_REQUESTS || self.prompt_n == 0 || self.prompt_ms <= 0.0 {
            return None;
        }
        let prefill = self.prompt_ms / self.prompt_n as f64;
        let output = if self.predicted_n > 0 && self.predicted_ms > 0.0 {
            self.predicted_ms / self.predicted_n as f64
        } else {
            prefill * CostModel::local().output
        };
        // Before a second request nothing could have been reused: assume the cache works,
        // as llama-server's does by default.
        let read = if self.reuses_prefix || self.requests < 2 { 0.0 } else { prefill };
        Some(CostModel { read, write: prefill, aux_input: prefill, output })
    }
}

/// The system prompt as one text for counting (the blocks and the task list that follows them).
pub(super) fn system_text(system: &[SystemBlock], tail: Option<&str>) -> String {
    let mut text: String = system.iter().map(|b| b.text.as_str()).collect::<Vec<_>>().join("\n\n");
    if let Some(tail) = tail {
        text.push_str(tail);
    }
    text
}

/// The tool schemas as a chat template lists them: one JSON object a line.
pub(super) fn tools_text(tools: &[ToolSpec]) -> String {
    tools
        .iter()
        .map(|t| {
            serde_json::json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}})
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timings(cache_n: u64, prompt_n: u64, prompt_ms: f64, predicted_n: u64, predicted_ms: f64) -> ServerTimings {
        ServerTimings { cache_n, prompt_n, prompt_ms, predicted_n, predicted_ms }
    }

    #[test]
    fn a_server_that_keeps_prefixes_prices_only_what_it_prefills() {
        let mut costs = PrefillCosts::default();
        assert_eq!(costs.model(), None, "nothing measured yet");
        costs.add(&timings(0, 4_000, 2_000.0, 100, 5_000.0));
        costs.add(&timings(4_100, 300, 150.0, 100, 5_000.0));
        let m = costs.model().unwrap();
        assert_eq!((m.read, m.write, m.output), (0.0, 0.5, 50.0));
        // A rewrite of 1,000 tokens costs the half second their prefill takes.
        assert_eq!(m.rewrite_cost(1_000), 500.0);
    }

    #[test]
    fn a_server_that_never_reuses_its_cache_pays_every_token_each_time() {
        let mut costs = PrefillCosts::default();
        costs.add(&timings(0, 4_000, 2_000.0, 100, 5_000.0));
        costs.add(&timings(0, 4_400, 2_200.0, 100, 5_000.0));
        let m = costs.model().unwrap();
        assert_eq!(m.read, m.write, "re-sent tokens are prefilled again");
        assert_eq!(m.rewrite_cost(1_000), 0.0, "so a rewrite costs nothing extra");
        assert!(m.pays(500, 10_000, 1.0), "and any reduction pays from the next request");
    }
}
