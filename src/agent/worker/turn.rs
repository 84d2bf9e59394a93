//! One prompt to its answer: pre-flight, request, stream, store, dispatch tools, repeat.

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::saved_outputs;
use super::local::{MAX_UNPARSED_TOOL_CALLS, unparsed_tool_call, unparsed_tool_call_reply};
use crate::agent::events::{AgentEvent, CompactionTrigger, NoticeLevel, TurnOutcome, TurnStats, TurnSummary};
use crate::agent::spend::add_cost;
use crate::context::{BudgetLevel, PreflightInput, StageReport, Urgency, check_request};
use crate::conversation::{Message, Mode};
use crate::llm::{ChatRequest, ChatResponse, LlmError, StopReason, StreamEvent};
use crate::prompt::{self, Environment};

/// Appended to a partial answer kept after an interrupt, so the model knows it was cut.
pub const INTERRUPTED_MARK: &str = "[interrupted by the user]";

/// Times a Stop hook may send the model back to work in one turn: a hook that always says
/// "go on" must not loop forever.
const MAX_STOP_HOOK_ROUNDS: u32 = 3;

/// A request ready to send, its rough size for calibration, and its blocks for cache analytics.
pub(super) struct Prepared {
    request: ChatRequest,
    raw_tokens: u64,
    /// The rough tokens of its system prompt and tools, kept with its usage.
    overhead: u64,
    fingerprint: crate::llm::Fingerprint,
    /// The context's parts as estimated at sending, for the report.
    parts: [u64; 4],
}

impl Worker {
    pub(super) async fn run_turn(&mut self, prompt: String, cancel: CancellationToken) -> TurnSummary {
        self.run_turn_shown(prompt, None, cancel).await
    }

    /// [`Worker::run_turn`], the transcript showing `shown` (`/init`) instead of the prompt.
    pub(super) async fn run_turn_shown(
        &mut self,
        prompt: String,
        shown: Option<&str>,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let start = self.session.pipeline().counters();
        let cache_start = self.cache.counts();
        let mut stats = TurnStats::default();
        self.session.clear_failure();
        self.link.emit(AgentEvent::TurnStarted { prompt: shown.map_or_else(|| prompt.clone(), str::to_string) });
        let prompt = match self.prompt_hooks(prompt, &cancel).await {
            Ok(prompt) => prompt,
            Err(error) => return TurnSummary { outcome: TurnOutcome::Failed { error }, stats },
        };
        let (attached, shown) = self.attach_mentions(&prompt, &cancel).await;
        self.wait_for_starting_servers(&cancel).await;
        let prompt = self.spill_long_prompt(prompt);
        let limits = crate::tools::image::ImageLimits::from_config(&self.place.config().tools);
        let images =
            crate::agent::attachments::user_message(&prompt, self.place.root(), self.place.cwd(), limits).await;
        // Images first (as Anthropic recommends), then the prompt, then the files it attached.
        let mut shown_all = images.items;
        shown_all.extend(shown);
        if !shown_all.is_empty() {
            self.link.emit(AgentEvent::Attached(shown_all));
        }
        let mut message = images.message;
        message.content.extend(attached);
        self.session.persist(message, None);
        self.checkpoints.begin_turn(self.session.last_seq());
        self.auto_recall(self.session.last_seq(), &prompt);
        let mut overflow_retried = false;
        let mut server_retried = false;
        let mut unparsed_rounds = 0;
        let mut stop_hook_rounds = 0;
        let outcome = loop {
            if self.session.has_failed() {
                break TurnOutcome::Failed { error: String::new() };
            }
            if let Some(limit) = self.max_turns
                && stats.requests >= limit
            {
                break TurnOutcome::MaxTurns { limit };
            }
            let mode = self.link.mode();
            let prepared = match self.prepare_request(mode, &cancel).await {
                Ok(p) => p,
                Err(outcome) => break outcome,
            };
            let (result, partial) = self.call_model(&prepared.request, &cancel).await;
            let response = match result {
                Ok(response) => response,
                Err(LlmError::Cancelled) => {
                    let partial = partial.trim_end().to_string();
                    if !partial.is_empty() {
                        self.session.persist(Message::assistant(format!("{partial}\n\n{INTERRUPTED_MARK}")), None);
                    }
                    break TurnOutcome::Interrupted { partial };
                }
                Err(LlmError::ContextLength { message }) if !overflow_retried => {
                    // Our estimate was wrong; shrink now and try exactly once more.
                    overflow_retried = true;
                    tracing::warn!(%message, "context length exceeded; shrinking and retrying once");
                    self.link.notice(
                        NoticeLevel::Warning,
                        "the provider found the request too long; shrinking the context and retrying",
                    );
                    self.shrink_after_overflow(mode, prepared.raw_tokens, &cancel).await;
                    continue;
                }
                Err(e) => {
                    // The local server died under the request and cairn restarted it: send again.
                    if !server_retried && self.local.recovered().await {
                        server_retried = true;
                        continue;
                    }
                    break TurnOutcome::Failed { error: e.to_string() };
                }
            };
            stats.requests += 1;
            stats.all_requests += 1;
            stats.usage.add(&response.usage);
            let usage_id = self.record_response(&response, prepared.raw_tokens, prepared.overhead);
            let answered = (prepared.request.clone(), response.usage.prompt_tokens());
            if let Some(job) = self.background.take_deferred() {
                // The request is answered and in the provider's cache: summarise reading it.
                self.launch_compaction(job, vec![answered.clone()]);
            }
            self.background.answered(answered.0, answered.1);
            stats.cost_usd = add_cost(stats.cost_usd, self.spend.request(&response.model, &response.usage));
            if let Some((level, text)) = self.model.learn_served_window().await {
                self.link.notice(level, text);
            }
            self.observe_cache(prepared.fingerprint, &response.usage);
            if let Some(id) = usage_id {
                let figures = self.requests.figures(
                    &self.budget(),
                    prepared.parts,
                    response.usage.prompt_tokens(),
                    self.cache.last_break(),
                );
                self.session.record_figures(id, &figures);
            }
            self.keep_warm.answered(chrono::Utc::now().timestamp());
            let status = self.context_status();
            self.link.emit(AgentEvent::Usage { usage: response.usage, context: self.context_report(&start) });
            self.link.emit(AgentEvent::Context(status));

            if !response.message.has_tool_calls() {
                let text = response.message.text();
                if let Some(marker) = unparsed_tool_call(&text, !prepared.request.tools.is_empty()) {
                    // A call the server could not parse arrived as text: nothing ran.
                    unparsed_rounds += 1;
                    self.link.notice(
                        NoticeLevel::Warning,
                        format!("the model wrote a tool call ({marker}) the server could not parse; no tool ran"),
                    );
                    if unparsed_rounds > MAX_UNPARSED_TOOL_CALLS {
                        break TurnOutcome::Failed {
                            error: format!(
                                "the model's tool calls did not parse {unparsed_rounds} times in a row ({marker}); the turn stops here. Try again, or a model that calls tools in its server's format"
                            ),
                        };
                    }
                    self.session.persist(Message::user(unparsed_tool_call_reply(marker)), None);
                    continue;
                }
                if stop_hook_rounds < MAX_STOP_HOOK_ROUNDS
                    && let Some(reason) = self.stop_hooks(stop_hook_rounds > 0, &cancel).await
                {
                    stop_hook_rounds += 1;
                    self.session.persist(Message::user(format!("[A Stop hook asks you to go on] {reason}")), None);
                    continue;
                }
                let text = response.message.text();
                if response.stop == StopReason::MaxTokens {
                    self.link.notice(NoticeLevel::Warning, "the answer was cut off at the output token limit");
                }
                break TurnOutcome::Completed { text };
            }
            let calls: Vec<_> = response.message.tool_calls().cloned().collect();
            self.dispatch(&calls, &cancel, &mut stats).await;
            if cancel.is_cancelled() {
                break TurnOutcome::Interrupted { partial: response.message.text() };
            }
        };
        let outcome = match self.session.take_failure() {
            Some(error) => TurnOutcome::Failed { error: format!("could not save the conversation: {error}") },
            None => outcome,
        };
        self.take_aux_usage(&mut stats);
        stats.context = self.context_report(&start);
        stats.cache = self.cache.stats_since(&cache_start);
        stats.cache.read_share = stats.usage.cache_hit_rate();
        TurnSummary { outcome, stats }
    }

    /// A prompt too long for the window is cut like a tool result, its full text saved.
    fn spill_long_prompt(&mut self, prompt: String) -> String {
        let limits = self.cut_limits().each;
        let seq = self.session.last_seq() + 1;
        let Some(text) = saved_outputs(&self.place, &self.session).cut_prompt(&prompt, seq, &limits) else {
            return prompt;
        };
        self.session.pipeline_mut().note_truncations(1);
        self.link.notice(
            NoticeLevel::Warning,
            "the message was too long for the context window; its middle was saved to a file the model can read",
        );
        text
    }

    /// Classify the cache behaviour of the request just answered; a break nobody expected is
    /// worth telling the user about (it costs money and means a volatile prefix).
    fn observe_cache(&mut self, fingerprint: crate::llm::Fingerprint, usage: &crate::conversation::Usage) {
        if let Some(warning) = self.cache.observe(fingerprint, usage) {
            self.link.notice(NoticeLevel::Warning, warning);
        }
    }

    /// Count auxiliary calls (compaction) and subagents' requests made since the last turn.
    pub(super) fn take_aux_usage(&mut self, stats: &mut TurnStats) {
        let tally = self.background.take_usage();
        stats.usage.add(&tally.usage);
        stats.all_requests += tally.requests;
        stats.cost_usd = add_cost(stats.cost_usd, tally.cost_usd);
        self.spend.add(tally.cost_usd);
        if tally.requests > 0 {
            // The status line's cost includes them now, not only from the next request on.
            let status = self.context_status();
            self.link.emit(AgentEvent::Context(status));
        }
    }

    /// Store the assistant message and its usage; calibrate the estimate on the usage. The
    /// usage row's id, when it was stored.
    fn record_response(&mut self, response: &ChatResponse, raw_at_send: u64, overhead: u64) -> Option<i64> {
        self.session.pipeline_mut().report_usage(response.usage.prompt_tokens(), raw_at_send);
        self.learn_local_costs(response);
        self.cache.record(response.usage);
        let message_id = if response.message.content.is_empty() {
            None
        } else {
            self.session.persist(response.message.clone(), None)
        };
        self.link.emit(AgentEvent::AssistantMessage(response.message.clone()));
        self.session.record_request(message_id, &response.model, &response.usage, overhead)
    }

    /// The system prompt and the tools for a request: the frozen memory block and environment,
    /// and the instruction files as they are on disk now.
    pub(super) fn system_and_tools(
        &self,
    ) -> (Vec<crate::conversation::SystemBlock>, Vec<crate::conversation::ToolSpec>) {
        let instructions = self.place.instruction_files();
        self.system_and_tools_with(&instructions)
    }

    fn system_and_tools_with(
        &self,
        instructions: &[prompt::InstructionFile],
    ) -> (Vec<crate::conversation::SystemBlock>, Vec<crate::conversation::ToolSpec>) {
        let snapshot = &self.session.pipeline().state().prompt;
        let environment = match &snapshot.environment {
            Some(text) => text.clone(),
            None => {
                Environment::detect(self.place.root(), self.place.cwd(), chrono::Local::now().date_naive()).render()
            }
        };
        let specs = self.tools.specs();
        // Skills are listed only to an agent that can load them.
        let loads_skills = specs.iter().any(|s| s.name == crate::conversation::tool_names::SKILL);
        let parts = prompt::PromptParts {
            memories: snapshot.memory_block.as_deref(),
            instructions,
            environment: &environment,
            recall: None,
            skills: if loads_skills { &self.ext.skills_listing } else { "" },
            role: self.subagent_role(),
        };
        // Every mode sends the same tools and system prompt, so a mode switch keeps the cached
        // prefix: the mode is a line in the request's tail and is held where calls are
        // dispatched (ask mode also sends `tool_choice` none).
        (prompt::build(&parts), specs)
    }

    /// What a request carries after its last cache breakpoint: the task list and the mode.
    pub(super) fn request_tail(&self, mode: Mode) -> Option<String> {
        prompt::request_tail(self.task_list.tail().as_deref(), mode, self.subagent_role().is_some())
    }

    pub(super) fn preflight_input(&mut self, mode: Mode, compaction_running: bool) -> PreflightInput {
        PreflightInput {
            budget: self.budget(),
            overhead: self.overhead_tokens(mode),
            now: chrono::Utc::now().timestamp(),
            compaction_running,
            compaction_allowed: true,
        }
    }

    /// Run the pre-flight — applying a finished background compaction, planning one to start
    /// once this request is answered or awaiting one now, as the thresholds say, trimming when
    /// nothing else can — and build the request.
    async fn prepare_request(&mut self, mode: Mode, cancel: &CancellationToken) -> Result<Prepared, TurnOutcome> {
        // A compaction planned for a request that was never answered is planned again.
        self.background.defer(None);
        if let Some(reason) = self.ensure_prompt_snapshot() {
            self.cache.expect_break(reason);
        }
        let protected = self.protected_context();
        self.session.pipeline_mut().set_protected(protected);
        self.refresh_outline();
        self.count_exactly(mode).await;
        let input = self.preflight_input(mode, false);
        if input.overhead >= input.budget.effective {
            return Err(TurnOutcome::Failed { error: self.window_too_small(&input) });
        }
        self.poll_compaction(&input).await;
        let mut input = self.preflight_input(mode, self.background.compacting());
        let mut pre = self.session.pipeline_mut().preflight(&input);
        self.report_stages(&pre.reports, pre.changed);
        let must_wait = pre.compaction == Some(Urgency::Now)
            || (pre.level >= BudgetLevel::Blocking && self.background.compacting());
        match pre.compaction {
            // Summarised once this request is answered: the summary call then reads all of it
            // from the provider's cache, and lands before the next request.
            Some(Urgency::Background) if !self.background.compacting() => {
                let job = self.plan_job(CompactionTrigger::Auto, pre.finished_work, &input);
                self.background.defer(job);
            }
            Some(Urgency::Now) => {
                let candidates = self.requests_to_read(mode, &input);
                self.start_compaction(CompactionTrigger::Auto, &input, candidates);
            }
            Some(Urgency::Background) | None => {}
        }
        if must_wait && self.background.compacting() {
            match self.await_compaction(&input, cancel).await {
                None if cancel.is_cancelled() => return Err(TurnOutcome::Interrupted { partial: String::new() }),
                None | Some(Ok(_)) | Some(Err(_)) => {}
            }
            // Whatever happened, the next pre-flight trims if the context still does not fit.
            input = PreflightInput { compaction_allowed: false, ..self.preflight_input(mode, false) };
            pre = self.session.pipeline_mut().preflight(&input);
            self.report_stages(&pre.reports, pre.changed);
        }
        let status = self.context_status();
        self.link.emit(AgentEvent::Context(status));
        let instructions = self.place.instruction_files();
        self.cache.instructions_are(prompt::fingerprint(&instructions));
        if self.tools.section().changed_since_last_request() {
            self.cache.expect_break("the MCP servers' tools changed".to_string());
        }
        if pre.tokens > input.budget.effective {
            tracing::warn!(
                tokens = pre.tokens,
                effective = input.budget.effective,
                "request larger than the window after every stage"
            );
        }
        let request = self.build_request(mode, &instructions);
        debug_assert_eq!(check_request(&request.messages), Ok(()), "every request satisfies the invariant");
        let raw_tokens = self.session.pipeline_mut().raw_tokens(input.overhead, self.model.window());
        let fingerprint = self.cache.fingerprint(&request);
        let parts = self.request_parts();
        Ok(Prepared { request, raw_tokens, overhead: input.overhead, fingerprint, parts })
    }

    /// The request the pipeline's view makes now: system prompt, tools, messages, the tail.
    fn build_request(&mut self, mode: Mode, instructions: &[prompt::InstructionFile]) -> ChatRequest {
        let (system, tools) = self.system_and_tools_with(instructions);
        let messages = self.session.pipeline_mut().view(self.model.window());
        let cache = (self.model.honours_cache_control() && self.place.config().cache.enabled)
            .then_some(self.place.config().cache.ttl);
        let max_tokens = self.max_output_tokens();
        let reasoning =
            crate::llm::reasoning_for(self.place.config().thinking, self.model.thinking_support(), max_tokens);
        ChatRequest {
            model: self.model.name().to_string(),
            system,
            messages,
            tools,
            tool_choice: if mode == Mode::Ask { crate::llm::ToolChoice::None } else { crate::llm::ToolChoice::Auto },
            max_tokens,
            cache,
            tail: self.request_tail(mode),
            reasoning,
            images: self.model.takes_images(),
        }
    }

    /// What a compaction that cannot wait for the next answer may read in place: the last
    /// request answered (all of it in the provider's cache), then the request as it would be
    /// sent now; the first that reaches the part kept verbatim is read.
    pub(super) fn requests_to_read(&mut self, mode: Mode, input: &PreflightInput) -> Vec<(ChatRequest, u64)> {
        let instructions = self.place.instruction_files();
        let now = self.build_request(mode, &instructions);
        let tokens = self.session.pipeline_mut().estimate(input.overhead, input.budget.window);
        self.background.last_answered().into_iter().chain([(now, tokens)]).collect()
    }

    /// The first prompt waits a little for MCP servers still starting, so their tools are in
    /// the first request instead of changing the tool list (and the cache) one request later.
    async fn wait_for_starting_servers(&mut self, cancel: &CancellationToken) {
        if std::mem::replace(&mut self.ext.waited_for_servers, true) {
            return;
        }
        let wait = std::time::Duration::from_millis(self.place.config().mcp.startup_wait_ms);
        self.ext.hub.settled(wait, cancel).await;
    }

    /// Why no request can fit: the system prompt and tools alone fill the window. A server
    /// would refuse the request or, like Ollama, silently drop its start.
    fn window_too_small(&self, input: &PreflightInput) -> String {
        let b = &input.budget;
        let fix = match self.model.window_source() {
            crate::config::WindowSource::Server => {
                "Restart the server with a larger window (Ollama: OLLAMA_CONTEXT_LENGTH=32768; llama-server: -c 32768)"
            }
            crate::config::WindowSource::Flag
            | crate::config::WindowSource::Config
            | crate::config::WindowSource::Catalog
            | crate::config::WindowSource::Assumed
            | crate::config::WindowSource::AssumedUntilLoaded => {
                "Use a model with a larger window, or set --context-window if this one is larger than cairn thinks"
            }
        };
        format!(
            "the system prompt and tools alone take about {} tokens, but {}'s {}-token window leaves {} once {} are kept for the reply. {fix}.",
            input.overhead,
            self.model.name(),
            b.window,
            b.effective,
            b.reserve_output
        )
    }

    /// Tell the user what the stages did, and persist the state they changed.
    fn report_stages(&mut self, reports: &[StageReport], changed: bool) {
        for report in reports {
            self.requests.mark(report);
            self.cache.expect_break(format!("{:?} rewrote the history", report.stage).to_lowercase());
            tracing::info!(stage = ?report.stage, saved = report.saved_tokens, count = report.count, "{}", report.detail);
            self.link.emit(AgentEvent::ContextStage(report.clone()));
        }
        if changed {
            self.session.save_state();
        }
    }

    /// After a context-length error: compact now (or trim, when the breaker is open), sized so
    /// the next request is clearly smaller than the one refused.
    async fn shrink_after_overflow(&mut self, mode: Mode, raw_refused: u64, cancel: &CancellationToken) {
        let input = self.preflight_input(mode, self.background.compacting());
        // The provider's refusal is better evidence than our estimate: calibrate on it.
        self.session.pipeline_mut().report_usage(input.budget.window, raw_refused);
        let _ = self.await_compaction(&input, cancel).await;
        let compacted = self.session.pipeline().breaker_allows(input.now)
            && self.start_compaction(CompactionTrigger::Overflow, &input, Vec::new())
            && matches!(self.await_compaction(&input, cancel).await, Some(Ok(_)));
        if !compacted && let Some(report) = self.session.pipeline_mut().trim(raw_refused / 4) {
            self.report_stages(&[report], true);
        }
    }

    /// The reply may use the headroom the budget reserves for it, within the model's limit.
    fn max_output_tokens(&self) -> u32 {
        let reserve = u32::try_from(self.budget().reserve_output).unwrap_or(u32::MAX);
        reserve.min(self.model.max_output_tokens()).max(1)
    }

    /// Send with retries, forwarding stream events; returns the text streamed by the last
    /// attempt too, which is what an interrupt keeps.
    async fn call_model(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> (Result<ChatResponse, LlmError>, String) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let send = self.model.send(request, &tx, cancel);
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
                self.link.emit(AgentEvent::TextDelta(text));
            }
            StreamEvent::ThinkingDelta(text) => self.link.emit(AgentEvent::ThinkingDelta(text)),
            StreamEvent::ToolCallStarted { id, name } => {
                self.link.emit(AgentEvent::ToolCallStreaming { call_id: id, tool: name })
            }
            StreamEvent::Retrying { attempt, max_attempts, delay, reason } => {
                partial.clear();
                tracing::warn!(attempt, max_attempts, ?delay, %reason, "retrying model request");
                self.link.emit(AgentEvent::Retrying { attempt, max_attempts, delay, reason });
            }
        }
    }
}
