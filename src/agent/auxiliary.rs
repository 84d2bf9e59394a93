//! Auxiliary model calls — compaction summaries (read in place, or from a transcript), and
//! the stand-alone calls of a `[compaction] model`: the session's retries, and (in a session)
//! the usage recorded under its purpose and counted in the turn's stats.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::context::{Summarizer, SummaryError};
use crate::conversation::{Message, SystemBlock, Usage};
use crate::llm::{ChatRequest, LlmError, Provider, RetryPolicy, StopReason, send_with_retries};
use crate::store::Store;

/// Usage of auxiliary calls, collected until a turn's stats take it.
#[derive(Clone, Copy, Debug, Default)]
pub struct UsageTally {
    pub usage: Usage,
    pub requests: u32,
    /// Dollars of those calls at the catalog's prices (`None`: none had a price).
    pub cost_usd: Option<f64>,
}

/// Where an auxiliary call's usage goes: the session's usage rows and the turn's tally.
#[derive(Clone)]
pub struct UsageRecorder {
    pub store: Arc<Store>,
    pub session: String,
    pub tally: Arc<Mutex<UsageTally>>,
    pub pricing: crate::config::Pricing,
}

/// A model used for auxiliary calls.
#[derive(Clone)]
pub struct AuxModel {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// Its context window, for chunking what it is sent.
    pub window: u64,
    pub retry: RetryPolicy,
    pub cancel: CancellationToken,
    pub recorder: Option<UsageRecorder>,
}

impl AuxModel {
    /// One call; the reply's text and why it stopped (a summary cut at `max_tokens` must not
    /// be stored as if it were whole).
    async fn reply(
        &self,
        purpose: &str,
        system: &str,
        user: &str,
        max_tokens: u32,
    ) -> Result<(String, StopReason), LlmError> {
        let request = ChatRequest {
            model: self.model.clone(),
            system: vec![SystemBlock { text: system.to_string(), cache_breakpoint: false }],
            messages: vec![Arc::new(Message::user(user))],
            tools: Vec::new(),
            tool_choice: crate::llm::ToolChoice::Auto,
            max_tokens,
            cache: None,
            tail: None,
            reasoning: None,
            images: false,
        };
        self.send(purpose, &request).await
    }

    /// Send `request`, recording its usage under `purpose`.
    async fn send(&self, purpose: &str, request: &ChatRequest) -> Result<(String, StopReason), LlmError> {
        // Nobody watches an auxiliary stream; its deltas are dropped.
        let (events, _ignored) = tokio::sync::mpsc::unbounded_channel();
        let response = send_with_retries(self.provider.as_ref(), request, &events, &self.cancel, &self.retry).await?;
        if let Some(r) = &self.recorder {
            if let Err(e) = r.store.record_usage(&r.session, None, purpose, &response.model, &response.usage) {
                tracing::error!(error = %e, purpose, "could not record usage");
            }
            let mut tally = r.tally.lock().unwrap_or_else(|p| p.into_inner());
            tally.usage.add(&response.usage);
            tally.requests += 1;
            tally.cost_usd = super::spend::add_cost(tally.cost_usd, r.pricing.cost(&response.model, &response.usage));
        }
        Ok((response.message.text(), response.stop))
    }
}

/// A summary reply as the pipeline reads it: cut at `max_tokens`, refused, too long or failed.
fn summary_result(reply: Result<(String, StopReason), LlmError>) -> Result<String, SummaryError> {
    match reply {
        Ok((text, StopReason::MaxTokens)) => Err(SummaryError::Cut(text)),
        Ok((text, StopReason::EndTurn | StopReason::ToolUse | StopReason::StopSequence | StopReason::Other(_))) => {
            Ok(text)
        }
        Ok((_, StopReason::Refusal)) => Err(SummaryError::Failed("the model refused to summarise".into())),
        Err(LlmError::ContextLength { .. }) => Err(SummaryError::TooLong),
        Err(e) => Err(SummaryError::Failed(e.to_string())),
    }
}

/// Compaction by the session's own model, reading the provider's cache: `template` is the
/// request the summary call follows — model, system prompt, tools, tool choice, breakpoints and
/// thinking as it sent them — and the call sends its messages again with the instruction as
/// the tail, after every breakpoint. Without a template (a `[compaction] model` of its own),
/// the summary is asked for on its own, from a transcript.
pub struct SessionSummarizer {
    pub aux: AuxModel,
    pub template: Option<ChatRequest>,
}

impl Summarizer for SessionSummarizer {
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        self.aux.summarize(system, user, max_tokens)
    }

    fn window(&self) -> u64 {
        self.aux.window
    }

    fn in_place(&self) -> bool {
        self.template.is_some()
    }

    fn summarize_conversation<'a>(
        &'a self,
        messages: &'a [Arc<Message>],
        instruction: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move {
            let Some(template) = &self.template else {
                return Err(SummaryError::Failed("no request to summarise in place".into()));
            };
            // Thinking stays as the conversation had it (a change would cost the cached
            // messages); a thinking budget comes on top of the summary's length.
            let thinking = match template.reasoning {
                Some(crate::llm::Reasoning::Budget { tokens, .. }) => tokens,
                _ => 0,
            };
            let request = ChatRequest {
                messages: messages.to_vec(),
                tail: Some(instruction.to_string()),
                max_tokens: max_tokens.saturating_add(thinking),
                ..template.clone()
            };
            summary_result(self.aux.send("compaction", &request).await)
        })
    }
}

impl Summarizer for AuxModel {
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async move { summary_result(self.reply("compaction", system, user, max_tokens).await) })
    }

    fn window(&self) -> u64 {
        self.window
    }
}
