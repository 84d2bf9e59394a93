//! A replay (`cairn context replay … --report`) read into a [`SessionReport`]: the replay's
//! own requests and auxiliary calls, priced as it priced them, on its own clock (one request
//! a minute), with what its pipeline did to each large output.

use std::collections::HashMap;

use super::gather::{clean, fate, target_of};
use super::model::{
    BreakMark, CompactionLine, OutputRow, Parts, RequestKind, RequestPoint, SegmentLine, SessionReport, StageMark,
    Thresholds, Totals, add_cost,
};
use crate::config::Redactor;
use crate::context::{ContextBudget, ReplayReport, StageCounters, Trajectory, estimate_text_tokens};
use crate::conversation::{Block, Role};

/// A drop in cache reads smaller than this is noise, not a break (as the agent counts them).
const MIN_DROP_TOKENS: u64 = 2_000;
const OUTPUTS_LISTED: usize = 12;

/// What the report of a replay says about where it came from.
pub struct ReplaySource<'a> {
    pub name: &'a str,
    pub model: &'a str,
    pub budget: ContextBudget,
    pub chars_per_token: f64,
}

pub fn from_replay(
    report: &ReplayReport,
    trajectory: &Trajectory,
    source: &ReplaySource<'_>,
    redactor: &Redactor,
) -> SessionReport {
    let b = source.budget;
    let limits = Thresholds {
        window: b.window,
        effective: b.effective,
        warning: b.warning,
        auto_compact: b.auto_compact,
        blocking: b.blocking,
    };
    let cpt = source.chars_per_token;
    let replies: Vec<u64> = trajectory
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| estimate_text_tokens(m.char_len(), 4.0) + 4)
        .collect();
    let mut requests = Vec::new();
    let mut totals = Totals::default();
    let mut previous_read = 0u64;
    for r in &report.requests {
        for a in report.aux.iter().filter(|a| a.before == r.index) {
            requests.push(RequestPoint {
                kind: RequestKind::Auxiliary,
                purpose: "compaction".into(),
                model: source.model.into(),
                at: format!("before request {}", r.index),
                uncached: a.tokens - a.cache_read_tokens,
                read: a.cache_read_tokens,
                written: 0,
                output: a.output_tokens,
                cost: a.cost,
                context: None,
                marks: Vec::new(),
                cache_break: None,
            });
        }
        let dropped = previous_read.saturating_sub(r.cache_read_tokens);
        let marks: Vec<StageMark> = r.stages.iter().map(StageMark::of).collect();
        let cache_break = (r.index > 1 && dropped >= MIN_DROP_TOKENS).then(|| BreakMark {
            kind: if marks.is_empty() { "unexpected".into() } else { "expected".into() },
            dropped_tokens: dropped,
            reason: if marks.is_empty() {
                "the prompt changed before the cached prefix".into()
            } else {
                marks.iter().map(|m| m.stage.clone()).collect::<Vec<_>>().join(", ") + " rewrote the history"
            },
        });
        previous_read = r.cache_read_tokens;
        let parts = Parts {
            system: r.parts.system_and_tools,
            memories: 0,
            summary: r.parts.summary,
            messages: r.parts.messages,
        };
        requests.push(RequestPoint {
            kind: RequestKind::Turn,
            purpose: "turn".into(),
            model: source.model.into(),
            at: format!("request {} (minute {})", r.index, r.index),
            uncached: 0,
            read: r.cache_read_tokens,
            written: r.cache_write_tokens,
            output: replies.get(r.index - 1).copied().unwrap_or(0),
            cost: r.cost,
            context: Some((parts, limits)),
            marks,
            cache_break,
        });
        totals.last_request_tokens = r.tokens;
    }
    for p in &requests {
        totals.requests += 1;
        totals.input_tokens += p.uncached;
        totals.output_tokens += p.output;
        totals.cache_read_input_tokens += p.read;
        totals.cache_creation_input_tokens += p.written;
        totals.cost_usd = add_cost(totals.cost_usd, p.cost);
    }
    let prompt = totals.input_tokens + totals.cache_read_input_tokens + totals.cache_creation_input_tokens;
    totals.cache_hit_rate = (prompt > 0).then(|| totals.cache_read_input_tokens as f64 / prompt as f64);
    // Seqs as the replay numbered the messages it appended: in order, one each.
    let mut seq_of: HashMap<String, (i64, usize)> = HashMap::new();
    let mut calls: HashMap<String, (String, String)> = HashMap::new();
    let mut chars_by_seq: Vec<usize> = Vec::new();
    for (i, m) in trajectory.messages.iter().enumerate() {
        chars_by_seq.push(m.char_len());
        for block in &m.content {
            match block {
                Block::ToolCall(c) => {
                    calls.insert(c.id.clone(), (c.name.clone(), c.arguments.to_string()));
                }
                Block::ToolResult(r) => {
                    seq_of.insert(r.call_id.clone(), (i as i64 + 1, r.content.len()));
                }
                Block::Text { .. } | Block::Thinking(_) | Block::Image(_) => {}
            }
        }
    }
    let state = &report.end.state;
    let mut by_size: Vec<(&String, &(i64, usize))> = seq_of.iter().collect();
    by_size.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
    let outputs = by_size
        .into_iter()
        .take(OUTPUTS_LISTED)
        .map(|(call, &(seq, full))| {
            let sent = report.end.truncated.get(call).copied().unwrap_or(full);
            let (tool, arguments) = calls.get(call).cloned().unwrap_or_default();
            OutputRow {
                tool,
                target: clean(redactor, &target_of(&arguments)),
                tokens: estimate_text_tokens(full, cpt),
                sent_tokens: estimate_text_tokens(sent, cpt),
                fate: fate(state, call, seq, full, sent),
            }
        })
        .collect();
    let tokens_of = |first: i64, last: i64| -> u64 {
        let chars: usize =
            chars_by_seq.iter().skip((first.max(1) - 1) as usize).take((last - first + 1).max(0) as usize).sum();
        estimate_text_tokens(chars, cpt)
    };
    let mut segments: Vec<SegmentLine> = report
        .end
        .segments
        .iter()
        .map(|s| SegmentLine {
            level: s.level,
            first_seq: s.first_seq,
            last_seq: s.last_seq,
            tokens: tokens_of(s.first_seq, s.last_seq),
            summary: s.summary.as_ref().map(|t| clean(redactor, t)),
            shown: (s.first_seq..=s.last_seq).any(|q| state.is_visible(q)),
        })
        .collect();
    segments.sort_by(|a, b| a.first_seq.cmp(&b.first_seq).then(b.level.cmp(&a.level)));
    let size_of = |index: usize| report.requests.get(index.wrapping_sub(1)).map_or(0, |r| r.tokens);
    let compactions = report
        .end
        .summaries
        .iter()
        .map(|(before, summary)| CompactionLine {
            at: format!("before request {before}"),
            trigger: "auto".into(),
            tokens_before: size_of(before - 1),
            tokens_after: size_of(*before),
            summary: clean(redactor, summary),
        })
        .collect();
    let t = &report.totals;
    SessionReport {
        title: format!("Replay of {}", source.name),
        subtitle: format!(
            "{} messages · {}-token window · {} prices · one request a minute on the replay's clock",
            report.messages, b.window, source.model
        ),
        generated_at: chrono::Local::now().format("%Y-%m-%d %H:%M").to_string(),
        requests,
        trailing: Vec::new(),
        totals,
        counters: StageCounters {
            truncations: t.truncations,
            dedup_replacements: t.dedup_replacements,
            pruned_results: t.pruned_results,
            compactions: t.compactions,
            trimmed_messages: t.trimmed_messages,
            compaction_failures: t.compaction_failures,
        },
        outputs,
        segments,
        compactions,
        memories: Vec::new(),
        notes: vec![
            "A replay saves no memories; its summaries are the summariser's it was run with (`--summaries`).".into(),
        ],
    }
}
