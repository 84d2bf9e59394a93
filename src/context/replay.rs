//! Replaying a recorded session through the pipeline, turn by turn, as if it were happening
//! now: before each assistant message a request is built exactly as the agent builds it —
//! a background compaction started at one request lands before the next, one the window
//! forces is awaited, the provider's reported usage calibrates the estimate — checked against
//! the invariant, priced with a simulated prefix cache, and optionally dumped. Tool results are
//! truncated as they are produced; summaries come from the `Summarizer` given. IO (spill
//! files, dumps) is done by the callbacks.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::budget::{BudgetLevel, ContextBudget};
use super::compact::{CompactionPlan, Summarizer, SummaryError, summarize_reply, transcript_piece};
use super::cost::CostModel;
use super::estimate::estimate_text_tokens;
use super::invariant::check_request;
use super::pipeline::{Pipeline, PreflightInput, StageReport, Urgency};
use super::reply::CompactionReply;
use super::segment_plan::{self, SEGMENT_PROMPT};
use super::segments::{SegmentNode, segment};
use super::trajectory::Trajectory;
use super::truncate::{Spill, TruncationLimits, plan_cut, render_cut, turn_overflow};
use crate::config::{ContextConfig, Prices};
use crate::conversation::{Message, Role, ToolResult};

pub struct ReplayOptions {
    pub window: u64,
    pub config: ContextConfig,
    /// Dollars per million tokens; `None` reports no cost.
    pub prices: Option<Prices>,
    /// What the pipeline's decisions weigh; `None` derives it from `prices` (with caching).
    pub cost_model: Option<CostModel>,
    /// The simulated provider's tokenizer, characters per token: the usage it reports after
    /// each request calibrates the estimate, as a real provider's report does in a session.
    pub usage_chars_per_token: f64,
    /// Tokens of the tool definitions, counted by the provider in every request.
    pub tool_schema_tokens: u64,
}

impl ReplayOptions {
    pub fn new(window: u64, config: ContextConfig, prices: Option<Prices>) -> ReplayOptions {
        ReplayOptions {
            window,
            config,
            prices,
            cost_model: None,
            usage_chars_per_token: USAGE_CHARS_PER_TOKEN,
            tool_schema_tokens: TOOL_SCHEMA_TOKENS,
        }
    }
}

/// Characters per token of the simulated provider: the common figure for English and code on
/// current tokenizers, and the one `../shared/bench/costsim.py` prices with.
pub const USAGE_CHARS_PER_TOKEN: f64 = 4.0;
/// Framing tokens per message in the simulated provider's count (costsim's figure).
const USAGE_MESSAGE_OVERHEAD: u64 = 4;
/// Tool definitions of a coding agent, as costsim counts them.
pub const TOOL_SCHEMA_TOKENS: u64 = 1_500;

/// One request of the replay.
#[derive(Clone, Debug, Serialize)]
pub struct RequestReport {
    pub index: usize,
    pub messages: usize,
    /// Prompt tokens sent, as the simulated provider counts them.
    pub tokens: u64,
    /// The pipeline's calibrated estimate before sending.
    pub estimate: u64,
    pub level: BudgetLevel,
    pub stages: Vec<StageReport>,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost: Option<f64>,
    pub violations: Vec<String>,
}

/// An auxiliary (compaction) call made before request `before`.
#[derive(Clone, Debug, Serialize)]
pub struct AuxReport {
    pub before: usize,
    pub tokens: u64,
    pub max_tokens: u32,
    pub output_tokens: u64,
    pub cost: Option<f64>,
    pub violations: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplayTotals {
    pub requests: usize,
    pub tokens_sent: u64,
    pub largest_request: u64,
    pub truncations: u64,
    pub dedup_replacements: u64,
    pub pruned_results: u64,
    pub compactions: u64,
    pub compaction_failures: u64,
    pub trimmed_messages: u64,
    pub aux_requests: usize,
    pub aux_input_tokens: u64,
    pub aux_output_tokens: u64,
    pub cache_read_share: f64,
    pub cost: Option<f64>,
    pub violations: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplayReport {
    pub window: u64,
    pub messages: usize,
    pub skipped_lines: usize,
    pub orphans: usize,
    pub requests: Vec<RequestReport>,
    pub aux: Vec<AuxReport>,
    pub totals: ReplayTotals,
}

/// A request as it would be sent, for dumping: `aux` numbers auxiliary calls before request
/// `index`; `reply` is the auxiliary call's answer.
pub struct DumpedRequest {
    pub index: usize,
    pub aux: Option<usize>,
    pub system: String,
    pub messages: Vec<Message>,
    pub reply: Option<String>,
}

/// One call made through [`Recording`]: system, user, max_tokens and the reply (a cut reply
/// too: it was paid for).
type Call = (String, String, u32, String);

/// Records the calls made through it, for dumps and pricing.
struct Recording<'a> {
    inner: &'a dyn Summarizer,
    calls: Mutex<Vec<Call>>,
}

impl Recording<'_> {
    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Summarizer for Recording<'_> {
    fn summarize<'b>(
        &'b self,
        system: &'b str,
        user: &'b str,
        max_tokens: u32,
    ) -> BoxFuture<'b, Result<String, SummaryError>> {
        Box::pin(async move {
            let result = self.inner.summarize(system, user, max_tokens).await;
            let reply = match &result {
                Ok(text) | Err(SummaryError::Cut(text)) => Some(text.clone()),
                Err(SummaryError::TooLong) | Err(SummaryError::Failed(_)) => None,
            };
            if let Some(reply) = reply {
                self.calls.lock().unwrap_or_else(|p| p.into_inner()).push((
                    system.to_string(),
                    user.to_string(),
                    max_tokens,
                    reply,
                ));
            }
            result
        })
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }
}

fn price(prices: Option<&Prices>, input: u64, read: u64, write: u64, output: u64) -> Option<f64> {
    prices.map(|p| {
        (input as f64 * p.input + read as f64 * p.cache_read + write as f64 * p.cache_write + output as f64 * p.output)
            / 1_000_000.0
    })
}

/// The simulated provider's token count.
struct Tokenizer {
    chars_per_token: f64,
}

impl Tokenizer {
    fn text(&self, chars: usize) -> u64 {
        estimate_text_tokens(chars, self.chars_per_token) + USAGE_MESSAGE_OVERHEAD
    }

    fn message(&self, m: &Message) -> u64 {
        self.text(m.char_len())
    }
}

/// A compaction summarised in the background: it lands before the next request.
struct InFlight {
    plan: CompactionPlan,
    tokens_before: u64,
    result: Result<CompactionReply, String>,
}

struct Run<'a> {
    p: Pipeline,
    recording: Recording<'a>,
    cpt: f64,
    report: ReplayReport,
    prices: Option<Prices>,
    tokenizer: Tokenizer,
    /// The session's segments, as the agent's store holds them.
    segments: Vec<SegmentNode>,
    /// The last seq cut into a segment.
    segmented_through: i64,
}

impl Run<'_> {
    /// Plan and summarise a compaction; its calls are dumped before request `index`.
    async fn start(
        &mut self,
        input: &PreflightInput,
        index: usize,
        dump: &mut dyn FnMut(DumpedRequest),
    ) -> Option<InFlight> {
        let mut plan = self.p.plan_compaction(&input.budget, false)?;
        let after = self.p.state().summary.as_ref().map_or(i64::MIN, |s| s.through_seq);
        plan.stretches = segment_plan::stretches(&self.segments, after, plan.through_seq);
        let tokens_before = self.p.estimate(input.overhead, input.budget.window);
        let result = summarize_reply(&plan, &self.recording, self.cpt, &|_, _| {}).await;
        self.drain_calls(index, dump);
        Some(InFlight { plan, tokens_before, result })
    }

    /// Apply a finished compaction, or record its failure; the stretch lines it wrote become
    /// the summaries of those segments.
    fn land(&mut self, done: InFlight, input: &PreflightInput) -> Option<StageReport> {
        match done.result {
            Ok(reply) => {
                for (first, last, line) in reply.stretches {
                    if let Some(n) = self.segments.iter_mut().find(|n| n.first_seq == first && n.last_seq == last) {
                        n.summary = Some(line);
                    }
                }
                Some(self.p.apply_compaction(&done.plan, reply.summary, input, done.tokens_before))
            }
            Err(_) => {
                self.p.record_compaction_failure(input.now);
                None
            }
        }
    }

    /// A user turn ended: cut new segments, and summarise those that need a call of their own
    /// (hidden with no summary covering them) and the roll-ups, as the agent does after a turn.
    async fn end_turn(&mut self, index: usize, dump: &mut dyn FnMut(DumpedRequest)) {
        for cut in segment(self.p.ledger(), self.segmented_through) {
            self.segmented_through = cut.last_seq;
            let id = self.segments.len() as i64 + 1;
            self.segments.push(SegmentNode {
                id,
                level: 0,
                first_seq: cut.first_seq,
                last_seq: cut.last_seq,
                summary: None,
                parent: None,
            });
        }
        let state = self.p.state().clone();
        let hidden = |a: i64, b: i64| (a..=b).all(|s| !state.is_visible(s));
        let covered = state.summary.as_ref().map(|s| s.through_seq);
        let todo: Vec<(i64, i64, i64)> = segment_plan::needing_a_call(&self.segments, &hidden, covered)
            .iter()
            .map(|n| (n.id, n.first_seq, n.last_seq))
            .collect();
        for (id, first, last) in todo {
            let entries = self.p.ledger().entries();
            let mut tokens = 0;
            let mut transcript = Vec::new();
            for e in entries.iter().filter(|e| e.seq >= first && e.seq <= last) {
                tokens += e.tokens;
                transcript.push(transcript_piece(&e.message));
            }
            let max_tokens = (tokens / 12).clamp(150, 1_500) as u32;
            if let Ok(text) = self.recording.summarize(SEGMENT_PROMPT, &transcript.join("\n"), max_tokens).await
                && let Some(n) = self.segments.iter_mut().find(|n| n.id == id)
            {
                n.summary = Some(text);
            }
        }
        for group in segment_plan::rollups(&self.segments) {
            let joined: String = group
                .iter()
                .map(|n| format!("[messages {}–{}]\n{}\n", n.first_seq, n.last_seq, n.summary.as_deref().unwrap_or("")))
                .collect();
            let tokens: u64 = self.segment_tokens(&group);
            let max_tokens = (tokens / 20).clamp(200, 2_000) as u32;
            if let Ok(text) = self.recording.summarize(SEGMENT_PROMPT, &joined, max_tokens).await {
                let id = self.segments.len() as i64 + 1;
                for child in &group {
                    if let Some(n) = self.segments.iter_mut().find(|n| n.id == child.id) {
                        n.parent = Some(id);
                    }
                }
                self.segments.push(SegmentNode {
                    id,
                    level: group[0].level + 1,
                    first_seq: group[0].first_seq,
                    last_seq: group[group.len() - 1].last_seq,
                    summary: Some(text),
                    parent: None,
                });
            }
        }
        self.drain_calls(index, dump);
    }

    fn segment_tokens(&self, group: &[SegmentNode]) -> u64 {
        let (first, last) = (group[0].first_seq, group[group.len() - 1].last_seq);
        self.p.ledger().entries().iter().filter(|e| e.seq >= first && e.seq <= last).map(|e| e.tokens).sum()
    }

    /// The outline the agent hands the pipeline before each request.
    fn refresh_outline(&mut self, window: u64) {
        let state = self.p.state();
        let text = if state.summary.is_none() && state.trimmed.is_empty() {
            String::new()
        } else {
            let hidden = |a: i64, b: i64| (a..=b).all(|s| !state.is_visible(s));
            segment_plan::render_outline(&self.segments, &hidden, window, self.cpt)
        };
        self.p.set_outline(text);
    }

    fn drain_calls(&mut self, index: usize, dump: &mut dyn FnMut(DumpedRequest)) {
        let window = self.recording.window();
        for (sys, user, max_tokens, reply) in self.recording.take() {
            let n = self.report.aux.iter().filter(|a| a.before == index).count() + 1;
            let tokens = self.tokenizer.text(sys.len()) + self.tokenizer.text(user.len());
            let mut violations = Vec::new();
            if tokens + max_tokens as u64 > window {
                violations.push(format!(
                    "auxiliary request of {tokens} + {max_tokens} tokens is over the {window}-token window"
                ));
            }
            let out = self.tokenizer.text(reply.len());
            self.report.aux.push(AuxReport {
                before: index,
                tokens,
                max_tokens,
                output_tokens: out,
                cost: price(self.prices.as_ref(), tokens, 0, 0, out),
                violations,
            });
            dump(DumpedRequest {
                index,
                aux: Some(n),
                system: sys,
                messages: vec![Message::user(user)],
                reply: Some(reply),
            });
        }
    }
}

/// Replay `trajectory`. `spill(name, text)` saves a full output and gives its path;
/// `dump` receives every request.
pub async fn replay(
    trajectory: &Trajectory,
    options: &ReplayOptions,
    summarizer: &dyn Summarizer,
    spill: &mut dyn FnMut(&str, &str) -> Result<String, String>,
    dump: &mut dyn FnMut(DumpedRequest),
) -> ReplayReport {
    let config = &options.config;
    let cpt = config.chars_per_token;
    let window = options.window;
    let budget = ContextBudget::new(window, config);
    let limits = TruncationLimits::new(config, &budget);
    let turn_cap = TruncationLimits::turn_cap(config, &budget);
    let system = trajectory.system.clone().unwrap_or_default();
    let tools_chars = (options.tool_schema_tokens as f64 * options.usage_chars_per_token) as usize;
    let overhead = estimate_text_tokens(system.len() + tools_chars, cpt);
    let tokenizer = Tokenizer { chars_per_token: options.usage_chars_per_token };
    let fixed_usage = options.tool_schema_tokens + tokenizer.text(system.len());
    let mut p = Pipeline::new(config.clone());
    p.set_cost_model(
        options
            .cost_model
            .or_else(|| options.prices.as_ref().map(|pr| CostModel::from_prices(pr, true)))
            .unwrap_or_default(),
    );
    let mut run = Run {
        p,
        recording: Recording { inner: summarizer, calls: Mutex::new(Vec::new()) },
        cpt,
        report: ReplayReport {
            window,
            messages: trajectory.messages.len(),
            skipped_lines: trajectory.skipped_lines,
            orphans: trajectory.orphans,
            ..Default::default()
        },
        prices: options.prices,
        tokenizer,
        segments: Vec::new(),
        segmented_through: 0,
    };
    let mut seq = 0i64;
    let mut previous: Vec<Arc<Message>> = Vec::new();
    let mut pending_results: Vec<Message> = Vec::new();
    let mut read_tokens_total = 0u64;
    let mut prompt_tokens_total = 0u64;
    let mut in_flight: Option<InFlight> = None;
    let mut push = |p: &mut Pipeline, m: Message| {
        seq += 1;
        p.append(seq, m);
    };
    for (i, message) in trajectory.messages.iter().enumerate() {
        if message.role == Role::Tool {
            pending_results.push(message.clone());
            continue;
        }
        flush_results(&mut run.p, &mut push, &mut pending_results, &limits, turn_cap, spill);
        if message.role == Role::User {
            if !run.report.requests.is_empty() {
                // The previous turn has ended.
                run.end_turn(run.report.requests.len() + 1, dump).await;
            }
            push(&mut run.p, message.clone());
            continue;
        }
        // The model is about to answer: this is a request, prepared as the agent prepares it.
        let index = run.report.requests.len() + 1;
        let now = i as i64 * 60;
        let input = PreflightInput { budget, overhead, now, compaction_running: false, compaction_allowed: true };
        let mut stages = Vec::new();
        run.refresh_outline(window);
        // A compaction started in the background at the previous request has landed.
        if let Some(done) = in_flight.take() {
            stages.extend(run.land(done, &input));
        }
        let pre = run.p.preflight(&input);
        stages.extend(pre.reports);
        match pre.compaction {
            Some(Urgency::Background) => in_flight = run.start(&input, index, dump).await,
            Some(Urgency::Now) => {
                if let Some(done) = run.start(&input, index, dump).await {
                    stages.extend(run.land(done, &input));
                }
                stages.extend(run.p.preflight(&PreflightInput { compaction_allowed: false, ..input }).reports);
            }
            None => {}
        }
        let view = run.p.view(window);
        let estimate = run.p.estimate(overhead, window);
        let sizes: Vec<u64> = view.iter().map(|m| run.tokenizer.message(m)).collect();
        let tokens = fixed_usage + sizes.iter().sum::<u64>();
        let mut violations = Vec::new();
        if let Err(v) = check_request(&view) {
            violations.push(v.to_string());
        }
        if tokens > budget.effective {
            violations.push(format!("{tokens} tokens is over the effective window of {}", budget.effective));
        }
        // Prefix cache: the tools, the system prompt and the messages identical to the
        // previous request's.
        let shared = view.iter().zip(previous.iter()).take_while(|(a, b)| a == b).count();
        let read: u64 = if previous.is_empty() { 0 } else { fixed_usage + sizes[..shared].iter().sum::<u64>() };
        let write = tokens.saturating_sub(read);
        let output = run.tokenizer.message(message);
        read_tokens_total += read;
        prompt_tokens_total += tokens;
        dump(DumpedRequest {
            index,
            aux: None,
            system: system.clone(),
            messages: view.iter().map(|m| (**m).clone()).collect(),
            reply: None,
        });
        run.report.requests.push(RequestReport {
            index,
            messages: view.len(),
            tokens,
            estimate,
            level: budget.level(estimate),
            stages,
            cache_read_tokens: read,
            cache_write_tokens: write,
            cost: price(options.prices.as_ref(), 0, read, write, output),
            violations,
        });
        previous = view;
        // The provider reports what it counted; the next estimate starts from it.
        let raw = run.p.raw_tokens(overhead, window);
        run.p.report_usage(tokens, raw);
        push(&mut run.p, message.clone());
    }
    flush_results(&mut run.p, &mut push, &mut pending_results, &limits, turn_cap, spill);
    let counters = run.p.counters();
    let mut report = run.report;
    let cost = options.prices.map(|_| {
        report.requests.iter().filter_map(|r| r.cost).chain(report.aux.iter().filter_map(|a| a.cost)).sum::<f64>() + 0.0 // an empty sum is −0.0
    });
    report.totals = ReplayTotals {
        requests: report.requests.len(),
        tokens_sent: prompt_tokens_total,
        largest_request: report.requests.iter().map(|r| r.tokens).max().unwrap_or(0),
        truncations: counters.truncations,
        dedup_replacements: counters.dedup_replacements,
        pruned_results: counters.pruned_results,
        compactions: counters.compactions,
        compaction_failures: counters.compaction_failures,
        trimmed_messages: counters.trimmed_messages,
        aux_requests: report.aux.len(),
        aux_input_tokens: report.aux.iter().map(|a| a.tokens).sum(),
        aux_output_tokens: report.aux.iter().map(|a| a.output_tokens).sum(),
        cache_read_share: if prompt_tokens_total == 0 {
            0.0
        } else {
            read_tokens_total as f64 / prompt_tokens_total as f64
        },
        cost,
        violations: report.requests.iter().map(|r| r.violations.len()).sum::<usize>()
            + report.aux.iter().map(|a| a.violations.len()).sum::<usize>(),
    };
    report
}

/// Append the results of one assistant message, truncated as the agent truncates them: each
/// to the limits, then the largest further when together they pass the per-turn cap.
fn flush_results(
    p: &mut Pipeline,
    push: &mut dyn FnMut(&mut Pipeline, Message),
    pending: &mut Vec<Message>,
    limits: &TruncationLimits,
    turn_cap: usize,
    spill: &mut dyn FnMut(&str, &str) -> Result<String, String>,
) {
    if pending.is_empty() {
        return;
    }
    let mut cut_one = |r: &ToolResult, limits: &TruncationLimits| -> Option<String> {
        let cut = plan_cut(&r.content, limits)?;
        let saved = spill(&r.call_id, &r.content);
        Some(match &saved {
            Ok(path) => render_cut(&r.content, &cut, Spill::Saved(path)),
            Err(e) => render_cut(&r.content, &cut, Spill::Failed(e)),
        })
    };
    let mut results: Vec<ToolResult> = pending.drain(..).filter_map(|m| m.tool_result().cloned()).collect();
    let mut truncated = 0;
    for r in results.iter_mut() {
        if let Some(text) = cut_one(r, limits) {
            r.content = text;
            truncated += 1;
        }
    }
    let sizes: Vec<usize> = results.iter().map(|r| r.content.len()).collect();
    let reduced =
        TruncationLimits { max_bytes: (turn_cap / (4 * results.len().max(1))).max(2_000), max_lines: 200, ..*limits };
    for i in turn_overflow(&sizes, turn_cap, reduced.max_bytes) {
        if let Some(text) = cut_one(&results[i], &reduced) {
            results[i].content = text;
        }
    }
    p.note_truncations(truncated);
    for r in results {
        push(p, Message::tool(r));
    }
}
