//! Replaying a recorded session through the pipeline, turn by turn, as if it were happening
//! now: before each assistant message a request is built exactly as the agent would build it,
//! checked against the invariant, priced with a simulated prefix cache, and optionally
//! dumped. Tool results are truncated as they are produced; compactions go to the
//! `Summarizer` given. IO (spill files, dumps) is done by the callbacks.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::budget::{BudgetLevel, ContextBudget};
use super::compact::{Summarizer, SummaryError, summarize};
use super::estimate::{estimate_message_tokens, estimate_text_tokens};
use super::invariant::check_request;
use super::pipeline::{Pipeline, PreflightInput, StageReport};
use super::trajectory::Trajectory;
use super::truncate::{Spill, TruncationLimits, plan_cut, render_cut, turn_overflow};
use crate::config::{ContextConfig, Prices};
use crate::conversation::{Message, Role, ToolResult};

pub struct ReplayOptions {
    pub window: u64,
    pub config: ContextConfig,
    /// Dollars per million tokens; `None` reports no cost.
    pub prices: Option<Prices>,
}

/// One request of the replay.
#[derive(Clone, Debug, Serialize)]
pub struct RequestReport {
    pub index: usize,
    pub messages: usize,
    /// Estimated prompt tokens sent.
    pub tokens: u64,
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

/// Records the calls made through it, for dumps and pricing.
struct Recording<'a> {
    inner: &'a dyn Summarizer,
    calls: Mutex<Vec<(String, String, u32, String)>>,
}

impl Summarizer for Recording<'_> {
    fn summarize<'b>(
        &'b self,
        system: &'b str,
        user: &'b str,
        max_tokens: u32,
    ) -> BoxFuture<'b, Result<String, SummaryError>> {
        Box::pin(async move {
            let reply = self.inner.summarize(system, user, max_tokens).await?;
            self.calls.lock().unwrap_or_else(|p| p.into_inner()).push((
                system.to_string(),
                user.to_string(),
                max_tokens,
                reply.clone(),
            ));
            Ok(reply)
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
    let overhead = estimate_text_tokens(system.len(), cpt);
    let recording = Recording { inner: summarizer, calls: Mutex::new(Vec::new()) };
    let mut p = Pipeline::new(config.clone());
    let mut report = ReplayReport {
        window,
        messages: trajectory.messages.len(),
        skipped_lines: trajectory.skipped_lines,
        orphans: trajectory.orphans,
        ..Default::default()
    };
    let mut seq = 0i64;
    let mut previous: Vec<Arc<Message>> = Vec::new();
    let mut pending_results: Vec<Message> = Vec::new();
    let mut read_tokens_total = 0u64;
    let mut prompt_tokens_total = 0u64;
    let mut push = |p: &mut Pipeline, m: Message| {
        seq += 1;
        p.append(seq, m);
    };
    for (i, message) in trajectory.messages.iter().enumerate() {
        if message.role == Role::Tool {
            pending_results.push(message.clone());
            continue;
        }
        flush_results(&mut p, &mut push, &mut pending_results, &limits, turn_cap, spill);
        if message.role == Role::User {
            push(&mut p, message.clone());
            continue;
        }
        // The model is about to answer: this is a request.
        let index = report.requests.len() + 1;
        let now = i as i64 * 60;
        let input = PreflightInput { budget, overhead, now, compaction_running: false, compaction_allowed: true };
        let pre = p.preflight(&input);
        let mut stages = pre.reports;
        if pre.compaction.is_some() {
            if let Some(plan) = p.plan_compaction(&budget, false) {
                let before = p.estimate(overhead, window);
                match summarize(&plan, &recording, cpt, &|_, _| {}).await {
                    Ok(summary) => stages.push(p.apply_compaction(&plan, summary, &input, before)),
                    Err(_) => p.record_compaction_failure(now),
                }
            }
            let drained: Vec<_> = std::mem::take(&mut *recording.calls.lock().unwrap_or_else(|e| e.into_inner()));
            for (n, (sys, user, max_tokens, reply)) in drained.into_iter().enumerate() {
                let tokens = estimate_text_tokens(sys.len() + user.len(), cpt) + 20;
                let mut violations = Vec::new();
                if tokens + max_tokens as u64 > summarizer.window() {
                    violations.push(format!(
                        "compaction request of {tokens} + {max_tokens} tokens is over the {}-token window",
                        summarizer.window()
                    ));
                }
                let out = estimate_text_tokens(reply.len(), cpt);
                report.aux.push(AuxReport {
                    before: index,
                    tokens,
                    max_tokens,
                    cost: price(options.prices.as_ref(), tokens, 0, 0, out),
                    violations,
                });
                dump(DumpedRequest {
                    index,
                    aux: Some(n + 1),
                    system: sys,
                    messages: vec![Message::user(user)],
                    reply: Some(reply),
                });
            }
            stages.extend(p.preflight(&PreflightInput { compaction_allowed: false, ..input }).reports);
        }
        let view = p.view(window);
        let tokens = p.estimate(overhead, window);
        let mut violations = Vec::new();
        if let Err(v) = check_request(&view) {
            violations.push(v.to_string());
        }
        if tokens > budget.effective {
            violations.push(format!("{tokens} tokens is over the effective window of {}", budget.effective));
        }
        // Prefix cache: the system prompt and the messages identical to the previous request's.
        let shared = view.iter().zip(previous.iter()).take_while(|(a, b)| a == b).count();
        let read: u64 = if previous.is_empty() {
            0
        } else {
            overhead + view[..shared].iter().map(|m| estimate_message_tokens(m, cpt)).sum::<u64>()
        };
        let write = tokens.saturating_sub(read);
        let output = estimate_message_tokens(message, cpt);
        read_tokens_total += read;
        prompt_tokens_total += tokens;
        dump(DumpedRequest {
            index,
            aux: None,
            system: system.clone(),
            messages: view.iter().map(|m| (**m).clone()).collect(),
            reply: None,
        });
        report.requests.push(RequestReport {
            index,
            messages: view.len(),
            tokens,
            level: budget.level(tokens),
            stages,
            cache_read_tokens: read,
            cache_write_tokens: write,
            cost: price(options.prices.as_ref(), 0, read, write, output),
            violations,
        });
        previous = view;
        let raw = p.raw_tokens(overhead, window);
        p.report_usage(raw, raw);
        push(&mut p, message.clone());
    }
    flush_results(&mut p, &mut push, &mut pending_results, &limits, turn_cap, spill);
    let counters = p.counters();
    let costs: Vec<f64> =
        report.requests.iter().filter_map(|r| r.cost).chain(report.aux.iter().filter_map(|a| a.cost)).collect();
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
        cache_read_share: if prompt_tokens_total == 0 {
            0.0
        } else {
            read_tokens_total as f64 / prompt_tokens_total as f64
        },
        cost: options.prices.map(|_| costs.iter().sum()),
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
