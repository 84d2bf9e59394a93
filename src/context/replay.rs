//! Replaying a recorded session through the pipeline, turn by turn, as if it were happening
//! now: before each assistant message a request is built exactly as the agent builds it —
//! a compaction planned at one request is summarised once it is answered and lands before the
//! next (after an answer that ends the turn, once the user goes on), one the window forces is
//! awaited (reading the request before it in place), the provider's reported usage calibrates the
//! estimate — checked against the invariant, priced with a simulated prefix cache, and
//! optionally dumped. Tool results are truncated as they are produced; summaries come from the
//! `Summarizer` given, and every auxiliary call a live session makes is made (`replay_calls`).
//! IO (spill files, dumps) is done by the callbacks.

use std::sync::Mutex;

use super::budget::ContextBudget;
use super::compact::{Conversation, Summarizer};
use super::cost::CostModel;
use super::estimate::estimate_text_tokens;
use super::invariant::check_request;
use super::pipeline::{Pipeline, PreflightInput, Urgency};
use super::replay_calls::{InFlight, Planned, Recording, Run, Tokenizer, price};
use super::replay_report::{
    DumpedRequest, ReplayReport, ReplayTotals, RequestParts, RequestReport, TOOL_SCHEMA_TOKENS, USAGE_CHARS_PER_TOKEN,
};
use super::trajectory::Trajectory;
use super::truncate::{Spill, TruncationLimits, TurnCut, plan_cut, plan_turn_cut, render_cut};
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
    p.set_summary_in_place(summarizer.in_place());
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
        previous: Vec::new(),
        system: system.clone(),
        fixed_usage,
    };
    let mut seq = 0i64;
    let mut pending_results: Vec<Message> = Vec::new();
    let mut read_tokens_total = 0u64;
    let mut prompt_tokens_total = 0u64;
    let mut in_flight: Option<InFlight> = None;
    // A compaction planned at a turn's last request (answered without tool calls), as the
    // agent keeps it: summarised once the user goes on, reading that request in the cache.
    let mut parked: Option<(Planned, Conversation)> = None;
    // Nothing follows the recording's last request: a summary started after it would land
    // before a request the recording does not hold (in a live session, the one after its
    // tools ran), so neither is replayed.
    let last_request = trajectory.messages.iter().rposition(|m| m.role == Role::Assistant);
    let mut push = |p: &mut Pipeline, m: Message| {
        seq += 1;
        p.append(seq, m);
    };
    for (i, message) in trajectory.messages.iter().enumerate() {
        if message.role == Role::Tool {
            pending_results.push(message.clone());
            continue;
        }
        flush_results(
            &mut run.p,
            &mut push,
            &mut pending_results,
            &limits,
            turn_cap,
            spill,
            &mut run.report.end.truncated,
        );
        if message.role == Role::User {
            if !run.report.requests.is_empty() {
                // The previous turn has ended.
                run.end_turn();
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
        // Planned now, summarised once this request is answered (reading it in place).
        let deferred = pre.compaction == Some(Urgency::Background);
        // The previous turn ended with a compaction planned: the user goes on, so it starts
        // now — unless this request plans its own (its finished work, or the window's now).
        let resumed = parked.take().filter(|_| !pre.finished_work && pre.compaction != Some(Urgency::Now));
        if pre.compaction == Some(Urgency::Now) {
            // The request before, all in the cache, when it reaches the part kept verbatim;
            // else the view as it is now.
            let view = run.p.view(window);
            let tokens = fixed_usage + view.iter().map(|m| run.tokenizer.message(m)).sum::<u64>();
            let mut conversations = Vec::new();
            if let Some(last) = run.report.requests.last() {
                conversations.push(Conversation { messages: run.previous.clone(), tokens: last.tokens });
            }
            conversations.push(Conversation { messages: view, tokens });
            parked = None;
            if let Some(planned) = run.plan(&input, false) {
                let done = run.summarise(planned, conversations, index, dump).await;
                stages.extend(run.land(done, &input));
            }
            stages.extend(run.p.preflight(&PreflightInput { compaction_allowed: false, ..input }).reports);
        }
        // The request as the agent builds it: its messages and figures, asked once.
        let sent = run.p.for_request(overhead, window);
        let (view, estimate, raw) = (sent.messages, sent.estimate, sent.raw_tokens);
        let sizes: Vec<u64> = view.iter().map(|m| run.tokenizer.message(m)).collect();
        let tokens = fixed_usage + sizes.iter().sum::<u64>();
        let parts = {
            let (summary, messages) = (sent.carried_tokens, sent.visible_tokens);
            let rest = tokens - fixed_usage;
            let summary = (summary * rest).checked_div(summary + messages).unwrap_or(0);
            RequestParts { system_and_tools: fixed_usage, summary, messages: rest - summary }
        };
        let mut violations = Vec::new();
        if let Err(v) = check_request(&view) {
            violations.push(v.to_string());
        }
        if tokens > budget.effective {
            violations.push(format!("{tokens} tokens is over the effective window of {}", budget.effective));
        }
        // Prefix cache: the tools, the system prompt and the messages identical to the
        // previous request's.
        let shared = view.iter().zip(run.previous.iter()).take_while(|(a, b)| a == b).count();
        let read: u64 = if run.previous.is_empty() { 0 } else { fixed_usage + sizes[..shared].iter().sum::<u64>() };
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
            parts,
        });
        run.previous = view.clone();
        let followed = Some(i) != last_request;
        if let Some((planned, conversation)) = resumed {
            if followed {
                in_flight = Some(run.summarise(planned, vec![conversation], index + 1, dump).await);
            }
        } else if deferred
            && followed
            && let Some(planned) = run.plan(&input, pre.finished_work)
        {
            let conversation = Conversation { messages: view, tokens };
            if message.has_tool_calls() {
                // Another request follows at once: summarised now, landing before it.
                in_flight = Some(run.summarise(planned, vec![conversation], index + 1, dump).await);
            } else {
                parked = Some((planned, conversation));
            }
        }
        // The provider reports what it counted; the next estimate starts from it.
        run.p.report_usage(tokens, raw);
        push(&mut run.p, message.clone());
    }
    flush_results(&mut run.p, &mut push, &mut pending_results, &limits, turn_cap, spill, &mut run.report.end.truncated);
    let counters = run.p.counters();
    run.report.end.state = run.p.state().clone();
    run.report.end.segments = std::mem::take(&mut run.segments);
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
    truncated: &mut std::collections::BTreeMap<String, usize>,
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
    let sizes_before: std::collections::HashMap<String, usize> =
        results.iter().map(|r| (r.call_id.clone(), r.content.len())).collect();
    let mut truncated_count = 0;
    for r in results.iter_mut() {
        if let Some(text) = cut_one(r, limits) {
            r.content = text;
            truncated_count += 1;
        }
    }
    let sizes: Vec<usize> = results.iter().map(|r| r.content.len()).collect();
    if let Some(TurnCut { limits: reduced, again }) = plan_turn_cut(&sizes, 0, turn_cap, results.len(), limits) {
        for i in again {
            if let Some(text) = cut_one(&results[i], &reduced) {
                results[i].content = text;
            }
        }
    }
    p.note_truncations(truncated_count);
    for r in results {
        if sizes_before.get(&r.call_id).is_some_and(|&full| r.content.len() < full) {
            truncated.insert(r.call_id.clone(), r.content.len());
        }
        push(p, Message::tool(r));
    }
}
