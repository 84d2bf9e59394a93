//! The compaction model call: the pipeline's `Summarizer`, made of the session's provider.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::context::{Summarizer, SummaryError};
use crate::conversation::{Message, Usage};
use crate::llm::{ChatRequest, LlmError, Provider, RetryPolicy, SystemBlock, send_with_retries};
use crate::store::Store;

/// Usage of auxiliary calls, collected until a turn's stats take it.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsageTally {
    pub usage: Usage,
    pub requests: u32,
}

pub(super) struct ProviderSummarizer {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub window: u64,
    pub retry: RetryPolicy,
    pub store: Arc<Store>,
    pub session: String,
    pub tally: Arc<Mutex<UsageTally>>,
    pub cancel: CancellationToken,
}

impl Summarizer for ProviderSummarizer {
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            let request = ChatRequest {
                model: self.model.clone(),
                system: vec![SystemBlock { text: system.to_string(), cache_breakpoint: false }],
                messages: vec![Message::user(user)],
                tools: Vec::new(),
                max_tokens,
                cache: None,
            };
            // Nobody watches a summary stream; its deltas are dropped.
            let (events, _ignored) = tokio::sync::mpsc::unbounded_channel();
            match send_with_retries(self.provider.as_ref(), &request, &events, &self.cancel, &self.retry).await {
                Ok(response) => {
                    if let Err(e) =
                        self.store.record_usage(&self.session, None, "compaction", &response.model, &response.usage)
                    {
                        tracing::error!(error = %e, "could not record compaction usage");
                    }
                    let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
                    tally.usage.add(&response.usage);
                    tally.requests += 1;
                    Ok(response.message.text())
                }
                Err(LlmError::ContextLength { .. }) => Err(SummaryError::TooLong),
                Err(e) => Err(SummaryError::Failed(e.to_string())),
            }
        })
    }

    fn window(&self) -> u64 {
        self.window
    }
}
