//! The replay's auxiliary calls, as the agent makes them: a compaction planned at the
//! pre-flight is summarised once the request it follows is answered — reading that request in
//! place when the summariser is the session's own model — and lands before the next request;
//! one the window forces is summarised before the request. Every call is recorded, priced
//! with the simulated prefix cache and dumped.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::compact::{CompactionPlan, Conversation, Summarizer, SummaryError};
use super::estimate::estimate_text_tokens;
use super::pipeline::Pipeline;
use super::pipeline::{PreflightInput, StageReport};
use super::replay_report::{AuxReport, DumpedRequest, ReplayReport, USAGE_MESSAGE_OVERHEAD};
use super::reply::CompactionReply;
use super::segment_plan;
use super::segments::{SegmentNode, segment};
use super::summary::summarize_reply;
use crate::config::Prices;
use crate::conversation::Message;

/// What one recorded call sent.
pub(super) enum Sent {
    /// A call of its own: system prompt and one user message.
    Alone { system: String, user: String },
    /// The conversation of a request, then the instruction.
    InPlace { messages: Vec<Arc<Message>>, instruction: String },
}

/// One call made through [`Recording`]: what it sent, `max_tokens`, and the reply (a cut reply
/// too: it was paid for).
pub(super) struct Call {
    sent: Sent,
    max_tokens: u32,
    reply: String,
}

/// Records the calls made through it, for dumps and pricing.
pub(super) struct Recording<'a> {
    pub(super) inner: &'a dyn Summarizer,
    pub(super) calls: Mutex<Vec<Call>>,
}

impl Recording<'_> {
    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn record(&self, sent: Sent, max_tokens: u32, result: &Result<String, SummaryError>) {
        let reply = match result {
            Ok(text) | Err(SummaryError::Cut(text)) => text.clone(),
            Err(SummaryError::TooLong) | Err(SummaryError::Failed(_)) => return,
        };
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).push(Call { sent, max_tokens, reply });
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
            self.record(Sent::Alone { system: system.to_string(), user: user.to_string() }, max_tokens, &result);
            result
        })
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn in_place(&self) -> bool {
        self.inner.in_place()
    }

    fn summarize_conversation<'b>(
        &'b self,
        messages: &'b [Arc<Message>],
        instruction: &'b str,
        max_tokens: u32,
    ) -> BoxFuture<'b, Result<String, SummaryError>> {
        Box::pin(async move {
            let result = self.inner.summarize_conversation(messages, instruction, max_tokens).await;
            let sent = Sent::InPlace { messages: messages.to_vec(), instruction: instruction.to_string() };
            self.record(sent, max_tokens, &result);
            result
        })
    }
}

pub(super) fn price(prices: Option<&Prices>, input: u64, read: u64, write: u64, output: u64) -> Option<f64> {
    prices.map(|p| {
        (input as f64 * p.input + read as f64 * p.cache_read + write as f64 * p.cache_write + output as f64 * p.output)
            / 1_000_000.0
    })
}

/// The simulated provider's token count.
pub(super) struct Tokenizer {
    pub(super) chars_per_token: f64,
}

impl Tokenizer {
    pub(super) fn text(&self, chars: usize) -> u64 {
        estimate_text_tokens(chars, self.chars_per_token) + USAGE_MESSAGE_OVERHEAD
    }

    pub(super) fn message(&self, m: &Message) -> u64 {
        self.text(m.char_len())
    }
}

pub(super) struct Run<'a> {
    pub(super) p: Pipeline,
    pub(super) recording: Recording<'a>,
    pub(super) cpt: f64,
    pub(super) report: ReplayReport,
    pub(super) prices: Option<Prices>,
    pub(super) tokenizer: Tokenizer,
    /// The session's segments, as the agent's store holds them.
    pub(super) segments: Vec<SegmentNode>,
    /// The last seq cut into a segment.
    pub(super) segmented_through: i64,
    /// The messages of the last request sent, for the prefix cache.
    pub(super) previous: Vec<Arc<Message>>,
    /// The system prompt, and the tokens it and the tools take in every request.
    pub(super) system: String,
    pub(super) fixed_usage: u64,
}

/// A compaction planned at a request, not yet summarised: the plan and the context's size then.
pub(super) struct Planned {
    plan: CompactionPlan,
    tokens_before: u64,
}

/// A compaction summarised in the background: it lands before the next request.
pub(super) struct InFlight {
    plan: CompactionPlan,
    tokens_before: u64,
    result: Result<CompactionReply, String>,
}

impl Run<'_> {
    /// Plan a compaction (the finished work's, or the window's) and name the segments it hides.
    pub(super) fn plan(&mut self, input: &PreflightInput, finished: bool) -> Option<Planned> {
        let mut plan =
            if finished { self.p.plan_finished_work() } else { self.p.plan_compaction(&input.budget, false) }?;
        let after = self.p.state().summary.as_ref().map_or(i64::MIN, |s| s.through_seq);
        plan.stretches = segment_plan::stretches(&self.segments, after, plan.through_seq);
        let tokens_before = self.p.estimate(input.overhead, input.budget.window);
        Some(Planned { plan, tokens_before })
    }

    /// Summarise a planned compaction, reading in place the first of `conversations` (requests
    /// as sent) the plan can be read in, when the summariser can; its calls are dumped before
    /// request `index`.
    pub(super) async fn summarise(
        &mut self,
        planned: Planned,
        conversations: Vec<Conversation>,
        index: usize,
        dump: &mut dyn FnMut(DumpedRequest),
    ) -> InFlight {
        let Planned { mut plan, tokens_before } = planned;
        plan.conversation = conversations.into_iter().find(|c| plan.reads_in(&c.messages).is_some());
        let result = summarize_reply(&plan, &self.recording, self.cpt, &|_, _| {}).await;
        self.drain_calls(index, dump);
        InFlight { plan, tokens_before, result }
    }

    /// Apply a finished compaction, or record its failure; the stretch lines it wrote become
    /// the summaries of those segments.
    pub(super) fn land(&mut self, done: InFlight, input: &PreflightInput) -> Option<StageReport> {
        match done.result {
            Ok(reply) => {
                for (first, last, line) in reply.stretches {
                    if let Some(n) = self.segments.iter_mut().find(|n| n.first_seq == first && n.last_seq == last) {
                        n.summary = Some(line);
                    }
                }
                let before = self.report.requests.len() + 1;
                self.report.end.summaries.push((before, reply.summary.clone()));
                Some(self.p.apply_compaction(&done.plan, reply.summary, input, done.tokens_before))
            }
            Err(_) => {
                self.p.record_compaction_failure(input.now);
                None
            }
        }
    }

    /// A user turn ended: cut new segments and roll up complete groups of ten, as the agent
    /// does after a turn (no model call: lines come from the compactions that hide them).
    pub(super) fn end_turn(&mut self) {
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
        while let Some(group) = segment_plan::rollups(&self.segments).into_iter().next() {
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
                summary: Some(segment_plan::roll_up(&group)),
                parent: None,
            });
        }
    }

    /// The outline the agent hands the pipeline before each request.
    pub(super) fn refresh_outline(&mut self, window: u64) {
        let state = self.p.state();
        let text = if state.summary.is_none() && state.trimmed.is_empty() {
            String::new()
        } else {
            let hidden = |a: i64, b: i64| (a..=b).all(|s| !state.is_visible(s));
            segment_plan::render_outline(&self.segments, &hidden, window, self.cpt)
        };
        self.p.set_outline(text);
    }

    /// Report, price and dump the calls made since the last drain, as calls before request
    /// `index`. A call that read a request in place reads from the cache the messages it shares
    /// with the last request sent.
    fn drain_calls(&mut self, index: usize, dump: &mut dyn FnMut(DumpedRequest)) {
        let window = self.recording.window();
        for call in self.recording.take() {
            let n = self.report.aux.iter().filter(|a| a.before == index).count() + 1;
            let out = self.tokenizer.text(call.reply.len());
            let (tokens, read, system, messages) = match call.sent {
                Sent::Alone { system, user } => {
                    let tokens = self.tokenizer.text(system.len()) + self.tokenizer.text(user.len());
                    (tokens, 0, system, vec![Message::user(user)])
                }
                Sent::InPlace { messages, instruction } => {
                    let sizes: Vec<u64> = messages.iter().map(|m| self.tokenizer.message(m)).collect();
                    let shared = messages.iter().zip(self.previous.iter()).take_while(|(a, b)| a == b).count();
                    let read = if self.previous.is_empty() {
                        0
                    } else {
                        self.fixed_usage + sizes[..shared].iter().sum::<u64>()
                    };
                    let tokens = self.fixed_usage + sizes.iter().sum::<u64>() + self.tokenizer.text(instruction.len());
                    let mut sent: Vec<Message> = messages.iter().map(|m| (**m).clone()).collect();
                    sent.push(Message::user(instruction));
                    (tokens, read, self.system.clone(), sent)
                }
            };
            let mut violations = Vec::new();
            if tokens + call.max_tokens as u64 > window {
                violations.push(format!(
                    "auxiliary request of {tokens} + {} tokens is over the {window}-token window",
                    call.max_tokens
                ));
            }
            self.report.aux.push(AuxReport {
                before: index,
                tokens,
                cache_read_tokens: read,
                max_tokens: call.max_tokens,
                output_tokens: out,
                cost: price(self.prices.as_ref(), tokens - read, read, 0, out),
                violations,
            });
            dump(DumpedRequest { index, aux: Some(n), system, messages, reply: Some(call.reply) });
        }
    }
}
