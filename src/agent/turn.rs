//! One prompt to its answer: request, stream, store, dispatch tools, repeat.

use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ContextReport, NoticeLevel, TurnOutcome, TurnStats, TurnSummary};
use super::worker::Worker;
use crate::config::ProviderKind;
use crate::context::{check_request, sanitize_pairs};
use crate::conversation::{Message, Mode};
use crate::llm::{ChatRequest, ChatResponse, LlmError, StopReason, StreamEvent, send_with_retries};
use crate::prompt::{self, Environment};

/// Appended to a partial answer kept after an interrupt, so the model knows it was cut.
pub(super) const INTERRUPTED_MARK: &str = "[interrupted by the user]";

impl Worker {
    pub(super) async fn run_turn(&mut self, prompt: String, cancel: CancellationToken) -> TurnSummary {
        let mut stats = TurnStats::default();
        self.emit(AgentEvent::TurnStarted { prompt: prompt.clone() });
        self.persist(Message::user(prompt), None);
        let outcome = loop {
            if let Some(limit) = self.max_turns
                && stats.requests >= limit
            {
                break TurnOutcome::MaxTurns { limit };
            }
            let mode = self.current_mode();
            let request = self.build_request(mode);
            debug_assert_eq!(check_request(&request.messages), Ok(()), "every request satisfies the invariant");
            let (result, partial) = self.call_model(&request, &cancel).await;
            let response = match result {
                Ok(response) => response,
                Err(LlmError::Cancelled) => {
                    let partial = partial.trim_end().to_string();
                    if !partial.is_empty() {
                        self.persist(Message::assistant(format!("{partial}\n\n{INTERRUPTED_MARK}")), None);
                    }
                    break TurnOutcome::Interrupted { partial };
                }
                Err(e) => break TurnOutcome::Failed { error: e.to_string() },
            };
            stats.requests += 1;
            stats.all_requests += 1;
            stats.usage.add(&response.usage);
            self.record_response(&response);
            stats.context = self.context_report();
            self.emit(AgentEvent::Usage { usage: response.usage, context: stats.context });
            self.emit(AgentEvent::Context(self.context_status()));

            if !response.message.has_tool_calls() {
                let text = response.message.text();
                if response.stop == StopReason::MaxTokens {
                    self.notice(NoticeLevel::Warning, "the answer was cut off at the output token limit");
                }
                break TurnOutcome::Completed { text };
            }
            let calls: Vec<_> = response.message.tool_calls().cloned().collect();
            self.dispatch(&calls, &cancel, &mut stats).await;
            if cancel.is_cancelled() {
                break TurnOutcome::Interrupted { partial: response.message.text() };
            }
        };
        stats.context = self.context_report();
        TurnSummary { outcome, stats }
    }

    /// Store the assistant message and its usage, and remember the usage for the context bar.
    fn record_response(&mut self, response: &ChatResponse) {
        self.usage_covers = self.history.len();
        let message_id =
            if response.message.content.is_empty() { None } else { self.persist(response.message.clone(), None) };
        self.emit(AgentEvent::AssistantMessage(response.message.clone()));
        if let Err(e) = self.store.record_usage(&self.session.id, message_id, "turn", &response.model, &response.usage)
        {
            self.store_error(&e);
        }
        self.last_usage = Some(response.usage);
    }

    pub(super) fn context_report(&self) -> ContextReport {
        ContextReport {
            window: self.model.context_window,
            last_request_tokens: self.last_usage.map(|u| u.prompt_tokens()).unwrap_or(0),
            ..ContextReport::default()
        }
    }

    pub(super) fn build_request(&self, mode: Mode) -> ChatRequest {
        let env = Environment::detect(&self.root, &self.cwd, chrono::Local::now().date_naive());
        let messages = sanitize_pairs(&self.history);
        let cache = (self.provider_kind == ProviderKind::Anthropic && self.config.cache.enabled)
            .then_some(self.config.cache.ttl);
        ChatRequest {
            model: self.model.name.clone(),
            system: prompt::build(mode, &env),
            messages,
            tools: self.registry.specs(mode),
            max_tokens: self.max_output_tokens(),
            cache,
        }
    }

    /// The reply may use the headroom the budget reserves for it, within the model's limit.
    fn max_output_tokens(&self) -> u32 {
        let reserve = u32::try_from(self.config.context.reserve_output_tokens).unwrap_or(u32::MAX);
        reserve.min(self.model.max_output_tokens).max(1)
    }

    /// Send with retries, forwarding stream events; returns the text streamed by the last
    /// attempt too, which is what an interrupt keeps.
    async fn call_model(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> (Result<ChatResponse, LlmError>, String) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let send = send_with_retries(self.provider.as_ref(), request, &tx, cancel, &self.retry);
        tokio::pin!(send);
        let mut partial = String::new();
        let result = loop {
            tokio::select! {
                result = &mut send => break result,
                Some(event) = rx.recv() => self.forward(event, &mut partial),
            }
        };
        while let Ok(event) = rx.try_recv() {
            self.forward(event, &mut partial);
        }
        (result, partial)
    }

    fn forward(&self, event: StreamEvent, partial: &mut String) {
        match event {
            StreamEvent::TextDelta(text) => {
                partial.push_str(&text);
                self.emit(AgentEvent::TextDelta(text));
            }
            StreamEvent::ToolCallStarted { id, name } => {
                self.emit(AgentEvent::ToolCallStreaming { call_id: id, tool: name })
            }
            StreamEvent::Retrying { attempt, max_attempts, delay, reason } => {
                partial.clear();
                tracing::warn!(attempt, max_attempts, ?delay, %reason, "retrying model request");
                self.emit(AgentEvent::Retrying { attempt, max_attempts, delay, reason });
            }
        }
    }
}
