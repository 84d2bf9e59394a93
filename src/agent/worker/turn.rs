//! One prompt to its answer: pre-flight, request, stream, store, dispatch tools, repeat.

use std::borrow::Cow;

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::saved_outputs;
use super::local::{MAX_UNPARSED_TOOL_CALLS, unparsed_tool_call, unparsed_tool_call_reply};
use crate::agent::events::{AgentEvent, CompactionTrigger, NoticeLevel, TurnOutcome, TurnStats, TurnSummary};
use crate::agent::request::{HeadSources, PreparedRequest, RequestHead, Sending};
use crate::agent::spend::add_cost;
use crate::context::{BudgetLevel, PreflightInput, StageReport, Urgency, check_request};
use crate::conversation::{Message, Mode};
use crate::llm::{ChatRequest, ChatResponse, Fingerprint, LlmError, StopReason, StreamEvent};
use crate::prompt::{self, Environment};

/// Appended to a partial answer kept after an interrupt, so the model knows it was cut.
pub const INTERRUPTED_MARK: &str = "[interrupted by the user]";

/// Times a Stop hook may send the model back to work in one turn: a hook that always says
/// "go on" must not loop forever.
const MAX_STOP_HOOK_ROUNDS: u32 = 3;
/// Replies in a row whose every call ask mode refused: the model is told at each refusal that no
/// tool runs, and one that keeps calling (ask mode sends the tools, so the cache is kept) would
/// otherwise loop until the turn's limit, paying for each request.
const MAX_REFUSED_ASK_ROUNDS: u32 = 3;

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
        let mut refused_ask_rounds = 0;
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
            let (prepared, fingerprint) = match self.prepare_request(mode, &cancel).await {
                Ok(ready) => ready,
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
                    self.shrink_after_overflow(&prepared, &cancel).await;
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
            let usage_id = self.record_response(&response, prepared.raw_tokens, prepared.overhead.total());
            // A compaction planned for this request is summarised now, reading it in the
            // provider's cache, when another request follows at once (the model called tools,
            // or is sent back to work): it lands before that one. After a final answer it is
            // not started: the next prompt plans again (the finished work may then leave
            // whole, or it starts then), and a session that ends here pays for no summary that
            // would never land.
            let mut deferred = self.background.take_deferred();
            self.background.answered(prepared.request.clone(), response.usage.prompt_tokens());
            // What the next request's system prompt and tools take as things stand: this one's,
            // unless the user switched modes while it was answered (the tail names the mode).
            let overhead =
                if self.link.mode() == prepared.mode { prepared.overhead.total() } else { self.overhead_now() };
            stats.cost_usd = add_cost(stats.cost_usd, self.spend.request(&response.model, &response.usage));
            if let Some((level, text)) = self.model.learn_served_window().await {
                self.link.notice(level, text);
            }
            self.observe_cache(fingerprint, &response.usage);
            if let Some(id) = usage_id {
                let parts = self.request_parts(&prepared);
                let figures = self.requests.figures(
                    &self.budget(),
                    parts,
                    response.usage.prompt_tokens(),
                    self.cache.last_break(),
                );
                self.session.record_figures(id, &figures);
            }
            self.keep_warm.answered(chrono::Utc::now().timestamp());
            let status = self.context_status(overhead);
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
                    self.launch_deferred(&mut deferred, overhead);
                    continue;
                }
                if stop_hook_rounds < MAX_STOP_HOOK_ROUNDS
                    && let Some(reason) = self.stop_hooks(stop_hook_rounds > 0, &cancel).await
                {
                    stop_hook_rounds += 1;
                    self.session.persist(Message::user(format!("[A Stop hook asks you to go on] {reason}")), None);
                    self.launch_deferred(&mut deferred, overhead);
                    continue;
                }
                if let Some(job) = deferred.take() {
                    self.background.park(job);
                }
                let text = response.message.text();
                if response.stop == StopReason::MaxTokens {
                    self.link.notice(NoticeLevel::Warning, "the answer was cut off at the output token limit");
                }
                break TurnOutcome::Completed { text };
            }
            self.launch_deferred(&mut deferred, overhead);
            let calls: Vec<_> = response.message.tool_calls().cloned().collect();
            let denied_before = stats.denied_tool_calls;
            self.dispatch(&calls, &cancel, &mut stats).await;
            if cancel.is_cancelled() {
                break TurnOutcome::Interrupted { partial: response.message.text() };
            }
            let all_refused = (stats.denied_tool_calls - denied_before) as usize >= calls.len();
            refused_ask_rounds = if mode == Mode::Ask && all_refused { refused_ask_rounds + 1 } else { 0 };
            if refused_ask_rounds >= MAX_REFUSED_ASK_ROUNDS {
                break TurnOutcome::Failed {
                    error: format!(
                        "the model called tools in {refused_ask_rounds} replies in a row in ask mode, where none run; the turn stops here. Switch to plan or edit mode (Shift+Tab, /mode) to let it use them, or ask again"
                    ),
                };
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

    /// Start the compaction planned for the request just answered, if any, reading it (the last
    /// one answered): the next request follows at once.
    fn launch_deferred(&mut self, deferred: &mut Option<crate::agent::background::CompactionJob>, overhead: u64) {
        if let Some(job) = deferred.take() {
            let answered = self.background.last_answered().into_iter().collect();
            self.launch_compaction(job, answered, overhead);
        }
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
            let status = self.context_status(self.overhead_now());
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

    /// The head of a request sent in `mode` now, assembled once: the system prompt (the frozen
    /// memory block and environment, the instruction files as they are on disk now), the tools,
    /// the tail — weighed with the counts known.
    pub(super) fn head(&self, mode: Mode) -> RequestHead {
        let snapshot = &self.session.pipeline().state().prompt;
        let environment = match &snapshot.environment {
            Some(text) => Cow::Borrowed(text.as_str()),
            None => Cow::Owned(
                Environment::detect(self.place.root(), self.place.cwd(), chrono::Local::now().date_naive()).render(),
            ),
        };
        let config = self.place.config();
        let max_tokens = self.max_output_tokens();
        let task_list = self.task_list.tail();
        let sources = HeadSources {
            mode,
            instructions: self.place.instruction_scan(),
            memories: snapshot.memory_block.as_deref(),
            environment,
            skills: &self.ext.skills_listing,
            role: self.subagent_role(),
            task_list: task_list.as_deref(),
            tools: self.tools.offered(),
            sending: Sending {
                model: self.model.name().to_string(),
                max_tokens,
                cache: (self.model.honours_cache_control() && config.cache.enabled).then_some(config.cache.ttl),
                reasoning: crate::llm::reasoning_for(config.thinking, self.model.thinking_support(), max_tokens),
                images: self.model.takes_images(),
            },
        };
        RequestHead::assemble(sources, self.session.pipeline().exact_counts(), config.context.chars_per_token)
    }

    /// The pre-flight's input for a request whose system prompt and tools take `overhead`.
    pub(super) fn preflight_input(&self, overhead: u64, compaction_running: bool) -> PreflightInput {
        PreflightInput {
            budget: self.budget(),
            overhead,
            now: chrono::Utc::now().timestamp(),
            compaction_running,
            compaction_allowed: true,
        }
    }

    /// Run the pre-flight — applying a finished background compaction, planning one to start
    /// once this request is answered or awaiting one now, as the thresholds say, trimming when
    /// nothing else can — and build the request: its head once (again only when a compaction
    /// lands on the way, which rebuilds the memory block), its messages asked of the pipeline
    /// once. With it, its blocks for the cache watch.
    async fn prepare_request(
        &mut self,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> Result<(PreparedRequest, Fingerprint), TurnOutcome> {
        // A compaction planned for a request that was never answered is planned again.
        self.background.defer(None);
        if let Some(reason) = self.ensure_prompt_snapshot() {
            self.cache.expect_break(reason);
        }
        let protected = self.protected_context();
        self.session.pipeline_mut().set_protected(protected);
        self.refresh_outline();
        let mut head = self.head(mode);
        self.count_exactly(&mut head).await;
        let input = self.preflight_input(head.overhead().total(), false);
        // No request can fit when the system prompt and tools alone fill the window, as the
        // provider counts them (once it has counted one request; the rough count errs high).
        let overhead = self.session.pipeline().calibrated_overhead(input.overhead);
        if overhead >= input.budget.effective {
            return Err(TurnOutcome::Failed { error: self.window_too_small(overhead, &input) });
        }
        if let Some(landed) = self.poll_compaction(&input, mode).await {
            head = landed;
        }
        let mut input = self.preflight_input(head.overhead().total(), self.background.compacting());
        let mut pre = self.session.pipeline_mut().preflight(&input);
        self.report_stages(&pre.reports, pre.changed);
        let must_wait = pre.compaction == Some(Urgency::Now)
            || (pre.level >= BudgetLevel::Blocking && self.background.compacting());
        // A compaction planned when the previous turn ended starts now that the user goes on,
        // reading that turn's last request from the provider's cache, beside this request (which
        // still fits); it lands before the next one. This request's own plan replaces it when
        // the finished work leaves, or when the window forces one now.
        let parked = self
            .background
            .take_parked()
            .filter(|_| !pre.finished_work && pre.compaction != Some(Urgency::Now) && !self.background.compacting());
        match pre.compaction {
            // Summarised once this request is answered: the summary call then reads all of it
            // from the provider's cache, and lands before the next request.
            Some(Urgency::Background) if !self.background.compacting() && parked.is_none() => {
                let job = self.plan_job(CompactionTrigger::Auto, pre.finished_work, &input);
                self.background.defer(job);
            }
            Some(Urgency::Now) => {
                let candidates = self.requests_to_read(&head, &input);
                self.start_compaction(CompactionTrigger::Auto, &input, candidates);
            }
            Some(Urgency::Background) | None => {}
        }
        if let Some(job) = parked {
            let answered = self.background.last_answered().into_iter().collect();
            self.launch_compaction(job, answered, input.overhead);
        }
        if must_wait && self.background.compacting() {
            match self.await_compaction(&input, mode, cancel).await {
                None if cancel.is_cancelled() => return Err(TurnOutcome::Interrupted { partial: String::new() }),
                Some(Ok(landed)) => head = landed.head,
                None | Some(Err(_)) => {}
            }
            // Whatever happened, the next pre-flight trims if the context still does not fit.
            input =
                PreflightInput { compaction_allowed: false, ..self.preflight_input(head.overhead().total(), false) };
            pre = self.session.pipeline_mut().preflight(&input);
            self.report_stages(&pre.reports, pre.changed);
        }
        let view = self.session.pipeline_mut().for_request(input.overhead, self.model.window());
        self.cache.instructions_are(prompt::fingerprint(&head.instructions().files));
        if self.tools.section().changed_since_last_request(head.tools_generation()) {
            self.cache.expect_break("the MCP servers' tools changed".to_string());
        }
        if pre.tokens > input.budget.effective {
            tracing::warn!(
                tokens = pre.tokens,
                effective = input.budget.effective,
                "request larger than the window after every stage"
            );
        }
        let prepared = head.complete(view);
        let status = self.status_of(prepared.estimate);
        self.link.emit(AgentEvent::Context(status));
        debug_assert_eq!(check_request(&prepared.request.messages), Ok(()), "every request satisfies the invariant");
        let fingerprint = self.cache.fingerprint(&prepared.request);
        Ok((prepared, fingerprint))
    }

    /// What a compaction that cannot wait for the next answer may read in place: the last
    /// request answered (all of it in the provider's cache), then the request `head` makes
    /// now; the first that reaches the part kept verbatim is read.
    pub(super) fn requests_to_read(&mut self, head: &RequestHead, input: &PreflightInput) -> Vec<(ChatRequest, u64)> {
        let view = self.session.pipeline_mut().for_request(input.overhead, input.budget.window);
        let now = head.request_with(view.messages);
        self.background.last_answered().into_iter().chain([(now, view.estimate)]).collect()
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
    fn window_too_small(&self, overhead: u64, input: &PreflightInput) -> String {
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
            overhead,
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

    /// After a context-length error on `refused`: compact now (or trim, when the breaker is
    /// open), sized so the next request is clearly smaller than the one refused.
    async fn shrink_after_overflow(&mut self, refused: &PreparedRequest, cancel: &CancellationToken) {
        let (mode, raw_refused) = (refused.mode, refused.raw_tokens);
        let input = self.preflight_input(refused.overhead.total(), self.background.compacting());
        // The provider's refusal is better evidence than our estimate: calibrate on it.
        self.session.pipeline_mut().report_usage(input.budget.window, raw_refused);
        let _ = self.await_compaction(&input, mode, cancel).await;
        let compacted = self.session.pipeline().breaker_allows(input.now)
            && self.start_compaction(CompactionTrigger::Overflow, &input, Vec::new())
            && matches!(self.await_compaction(&input, mode, cancel).await, Some(Ok(_)));
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
