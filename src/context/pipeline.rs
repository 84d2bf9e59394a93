//! The pipeline: the stored history, the session's context state, and the pre-flight that runs
//! before every request — nothing below the warning threshold; from it, dedup and pruning
//! when the cost model says they pay; compaction when the window will force it; trimming at
//! the blocking threshold — plus the one calibrated token figure every display and decision
//! reads.
//!
//! Incremental: facts and token counts of each message are computed once, on append; a
//! pre-flight below the warning threshold touches only cached numbers.

use std::sync::Arc;

use serde::Serialize;

use super::breaker::BreakerSettings;
use super::budget::{BudgetLevel, ContextBudget};
use super::cost::CostModel;
use super::dedup::DedupIndex;
use super::estimate::estimate_text_tokens;
use super::exact::ExactCounts;
use super::invariant::check_request;
use super::ledger::Ledger;
use super::pairs::sanitize_pairs;
use super::state::{ContextState, StageCounters};
use super::view;
use crate::config::ContextConfig;
use crate::conversation::{Message, Role};

/// Trims before clipping gives up: each round drops older turns, and a history has few of them
/// left once the first round ran (a bound so a trim that frees nothing cannot spin).
const MAX_TRIM_ROUNDS: usize = 8;

/// Which stage did something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Truncation,
    Dedup,
    Prune,
    Compaction,
    Trim,
}

/// What one stage did in one pre-flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageReport {
    pub stage: Stage,
    /// Results replaced, messages dropped, …
    pub count: u64,
    pub saved_tokens: u64,
    /// One line for the transcript.
    pub detail: String,
}

/// How soon a compaction is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Urgency {
    /// The next request is expected to need it: start it in the background; this request
    /// still fits.
    Background,
    /// Past the blocking threshold: compact before sending.
    Now,
}

#[derive(Clone, Copy, Debug)]
pub struct PreflightInput {
    pub budget: ContextBudget,
    /// Tokens of the system prompt and tool schemas.
    pub overhead: u64,
    /// Unix seconds, for the circuit breaker.
    pub now: i64,
    /// A background compaction is in flight.
    pub compaction_running: bool,
    /// False when a compaction was already tried for this request: what still does not fit
    /// is trimmed instead of asking again.
    pub compaction_allowed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preflight {
    /// The calibrated estimate of the request about to be sent.
    pub tokens: u64,
    pub level: BudgetLevel,
    pub reports: Vec<StageReport>,
    pub compaction: Option<Urgency>,
    /// The compaction asked for is the finished work's ([`Pipeline::plan_finished_work`]).
    pub finished_work: bool,
    /// The context state changed and should be persisted.
    pub changed: bool,
}

/// The messages standing in for what was compacted or trimmed away, and their tokens.
type Continuation = (Vec<Arc<Message>>, u64);

#[derive(Clone, Copy, Debug)]
pub(super) struct Calibration {
    pub(super) reported: u64,
    pub(super) raw: u64,
    /// Rough tokens of the messages (continuation included) when it was reported.
    pub(super) messages: u64,
}

pub struct Pipeline {
    pub(super) config: ContextConfig,
    pub(super) ledger: Ledger,
    pub(super) dedup: DedupIndex,
    pub(super) state: ContextState,
    /// Per entry: the message as sent, when it differs from the stored one.
    pub(super) sent: Vec<Option<Arc<Message>>>,
    pub(super) sent_tokens: Vec<u64>,
    pub(super) protected: String,
    /// The latest outline of segments no longer shown; it reaches the continuation message
    /// (`state.outline`) only when that message is rewritten anyway.
    pub(super) outline: String,
    /// The continuation messages for a window size, cached until the state changes.
    pub(super) continuation: Option<(u64, Continuation)>,
    pub(super) calibration: Option<Calibration>,
    pub(super) cost: CostModel,
    pub(super) breaker: BreakerSettings,
    /// Assistant messages so far: the requests this session has made.
    pub(super) requests: u64,
    /// Nothing is cached at the provider (a session just loaded with a cold cache): changes to
    /// the view cost nothing until the next request is sent.
    cold: bool,
    /// A compaction landed in this process and no usage was reported since: no automatic one
    /// fires (anti-thrash). A resumed session waits for none (its stored flag says only that
    /// the stored usage is older than the compaction).
    pub(super) compacted_unreported: bool,
    /// The summariser reads the conversation in place (`new_work`: what a compaction costs).
    pub(super) summary_in_place: bool,
    /// Counts from the model's own tokenizer, where the server gives them; the estimate
    /// elsewhere.
    pub(super) exact: ExactCounts,
}

impl Pipeline {
    pub fn new(config: ContextConfig) -> Pipeline {
        Pipeline {
            ledger: Ledger::new(config.chars_per_token),
            breaker: BreakerSettings::from_config(&config),
            config,
            dedup: DedupIndex::default(),
            state: ContextState::default(),
            sent: Vec::new(),
            sent_tokens: Vec::new(),
            protected: String::new(),
            outline: String::new(),
            continuation: None,
            calibration: None,
            cost: CostModel::default(),
            requests: 0,
            cold: false,
            compacted_unreported: false,
            summary_in_place: false,
            exact: ExactCounts::default(),
        }
    }

    /// Rebuild a session: its stored messages and its persisted state give exactly the view
    /// it had.
    pub fn restore(
        config: ContextConfig,
        state: ContextState,
        stored: impl IntoIterator<Item = (i64, impl Into<Arc<Message>>)>,
    ) -> Pipeline {
        let mut p = Pipeline::new(config);
        for (seq, message) in stored {
            p.append(seq, message);
        }
        p.state = state;
        for i in 0..p.ledger.len() {
            p.refresh(i);
        }
        p
    }

    pub fn state(&self) -> &ContextState {
        &self.state
    }

    /// The exact counts, for the caller to fill from the server's tokenizer; call
    /// [`Pipeline::recount`] after adding some.
    pub fn exact_counts_mut(&mut self) -> &mut ExactCounts {
        &mut self.exact
    }

    pub fn exact_counts(&self) -> &ExactCounts {
        &self.exact
    }

    /// Count every message again, taking the exact counts added since.
    pub fn recount(&mut self) {
        self.continuation = None;
        for i in 0..self.ledger.len() {
            self.refresh(i);
        }
    }

    pub fn counters(&self) -> StageCounters {
        self.state.counters
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn config(&self) -> &ContextConfig {
        &self.config
    }

    /// Facts that must survive compaction (mode, folder, branch), shown at the top of the
    /// continuation message.
    pub fn set_protected(&mut self, text: String) {
        if text != self.protected {
            self.protected = text;
            self.continuation = None;
        }
    }

    /// The outline of earlier segments. It is shown from the next rewrite of the continuation
    /// message (a compaction or a trim) on, so a segment summary landing between two
    /// compactions does not rewrite the whole conversation.
    pub fn set_outline(&mut self, text: String) {
        self.outline = text;
        if self.cold && self.state.outline != self.outline {
            self.rewrite_continuation();
        }
    }

    /// A stored message, in order.
    pub fn append(&mut self, seq: i64, message: impl Into<Arc<Message>>) {
        let message: Arc<Message> = message.into();
        if message.role == Role::Assistant {
            self.requests += 1;
        }
        let index = self.ledger.push(seq, message);
        self.dedup.observe(&self.ledger, index);
        self.sent.push(None);
        self.sent_tokens.push(self.ledger.entries()[index].tokens);
        self.refresh(index);
    }

    pub fn note_truncations(&mut self, n: u64) {
        self.state.counters.truncations += n;
    }

    /// The provider's count for the request whose rough estimate was `raw_at_send`.
    pub fn report_usage(&mut self, prompt_tokens: u64, raw_at_send: u64) {
        let messages = self.messages_tokens();
        self.calibration = Some(Calibration { reported: prompt_tokens, raw: raw_at_send, messages });
        self.state.awaiting_usage = false;
        self.compacted_unreported = false;
        self.cold = false;
    }

    /// Rough tokens of the next request: `overhead` plus the messages as they would be sent.
    pub fn raw_tokens(&mut self, overhead: u64, window: u64) -> u64 {
        let continuation = self.continuation_for(window).1;
        overhead + continuation + self.visible_tokens()
    }

    /// Rough tokens of the cached continuation messages and the visible messages.
    pub(super) fn messages_tokens(&self) -> u64 {
        let continuation = self.continuation.as_ref().map(|(_, (_, t))| *t).unwrap_or(0);
        continuation + self.visible_tokens()
    }

    pub(super) fn visible_tokens(&self) -> u64 {
        let entries = self.ledger.entries();
        (0..entries.len()).filter(|&i| self.state.is_visible(entries[i].seq)).map(|i| self.sent_tokens[i]).sum()
    }

    /// The one number: the last reported usage plus what changed since, in rough tokens.
    pub fn estimate(&mut self, overhead: u64, window: u64) -> u64 {
        let raw = self.raw_tokens(overhead, window);
        self.calibrated_estimate(raw)
    }

    /// A request of `raw` rough tokens, as the provider is expected to count it.
    pub(super) fn calibrated_estimate(&self, raw: u64) -> u64 {
        match self.calibration {
            Some(c) => {
                // What was added since is counted at the rough rate (it errs high); what was
                // removed (a compaction, a prune) at the provider's rate, which the removed text
                // had, when that is lower: the estimate never drops below what will be counted.
                let delta = raw as i64 - c.raw as i64;
                let ratio = (c.reported as f64 / c.raw.max(1) as f64).min(1.0);
                let delta = if delta < 0 { (delta as f64 * ratio) as i64 } else { delta };
                (c.reported as i64 + delta).max(0) as u64
            }
            None => raw,
        }
    }

    /// A system prompt and tools of `overhead` rough tokens as the provider is expected to count
    /// them: at the rate the last reported request was counted when that was lower (the rough
    /// rate errs high, by design; a higher count comes from the messages — images, a provider's
    /// own framing — not from this text), or as they are when nothing was reported yet.
    pub fn calibrated_overhead(&self, overhead: u64) -> u64 {
        match self.calibration {
            Some(c) if c.raw > 0 && c.reported < c.raw => {
                (overhead as f64 * c.reported as f64 / c.raw as f64).ceil() as u64
            }
            Some(_) | None => overhead,
        }
    }

    /// Everything the next request needs. Below the warning threshold nothing that was sent is
    /// changed. From it, pending reductions are applied when they pay for themselves; a
    /// compaction is asked for when the window will force one; at the blocking threshold what
    /// still does not fit is trimmed, then clipped.
    pub fn preflight(&mut self, input: &PreflightInput) -> Preflight {
        let budget = input.budget;
        let mut reports = Vec::new();
        let mut changed = false;
        let mut tokens = self.estimate(input.overhead, budget.window);
        if budget.level(tokens) >= BudgetLevel::Warning {
            let paid = self.reduce(&budget, tokens);
            changed |= !paid.is_empty();
            reports.extend(paid);
            tokens = self.estimate(input.overhead, budget.window);
        }
        let mut level = budget.level(tokens);
        let may_compact = input.compaction_allowed
            && self.config.auto_compact
            && !self.compacted_unreported
            && self.breaker_allows(input.now);
        if self.finished_work_leaves(input, level, tokens) {
            let compaction = Some(Urgency::Background);
            return Preflight { tokens, level, reports, compaction, finished_work: true, changed };
        }
        if level < BudgetLevel::Warning {
            // Pressure is gone: the breaker closes.
            changed |= self.state.breaker.relieve();
            return Preflight { tokens, level, reports, compaction: None, finished_work: false, changed };
        }
        let mut compaction = None;
        if may_compact && let Some(plan) = self.plan_compaction(&budget, false) {
            // Forced by the window (now, or at the next request's usual growth), or — from the
            // warning threshold on, never below it — cheaper now than waiting for it.
            let forced =
                level >= BudgetLevel::Blocking || (level >= BudgetLevel::Compact && self.compaction_due(input, tokens));
            if forced || (level >= BudgetLevel::Warning && self.compaction_pays(input, tokens, &plan)) {
                compaction = Some(if level >= BudgetLevel::Blocking { Urgency::Now } else { Urgency::Background });
            }
        }
        if level >= BudgetLevel::Blocking && compaction.is_none() && !input.compaction_running {
            // The user's words in what a trim drops are carried verbatim, so one trim may save
            // less than it planned: trim again (each round drops older turns) until it fits.
            for _ in 0..MAX_TRIM_ROUNDS {
                if level < BudgetLevel::Blocking {
                    break;
                }
                let Some(report) = self.trim(tokens - budget.blocking + 1) else { break };
                reports.push(report);
                changed = true;
                tokens = self.estimate(input.overhead, budget.window);
                level = budget.level(tokens);
            }
            // Trimming keeps the latest user message and the last tool group whole; when even
            // they do not fit, clip them in the view (the stored text stays whole).
            if level >= BudgetLevel::Blocking
                && let Some(report) = self.clip(tokens - budget.blocking + 1)
            {
                reports.push(report);
                changed = true;
                tokens = self.estimate(input.overhead, budget.window);
                level = budget.level(tokens);
            }
        }
        Preflight { tokens, level, reports, compaction, finished_work: false, changed }
    }

    /// The messages to send, in order; always a valid sequence.
    pub fn view(&mut self, window: u64) -> Vec<Arc<Message>> {
        let mut out: Vec<Arc<Message>> = Vec::with_capacity(self.ledger.len() + 2);
        out.extend(self.continuation_for(window).0);
        for (i, e) in self.ledger.entries().iter().enumerate() {
            if self.state.is_visible(e.seq) {
                debug_assert!(!e.released, "a released message ({}) is in the view", e.seq);
                out.push(self.sent[i].clone().unwrap_or_else(|| e.message.clone()));
            }
        }
        if check_request(&out).is_err() {
            // A crash between a call and its result, or a recorded orphan: repair the view.
            let owned: Vec<Message> = out.iter().map(|m| (**m).clone()).collect();
            out = sanitize_pairs(&owned).into_iter().map(Arc::new).collect();
        }
        out
    }

    /// The frozen parts of the system prompt, to persist with the state.
    pub fn set_prompt_snapshot(&mut self, snapshot: super::state::PromptSnapshot) {
        self.state.prompt = snapshot;
    }

    /// Attach a recall block to the user message `seq`.
    pub fn set_recall(&mut self, seq: i64, text: String) {
        self.state.recall.insert(seq, text);
        if let Some(i) = self.ledger.index_of(seq) {
            self.refresh(i);
        }
    }

    /// Put back an earlier state (a compaction that could not be saved).
    pub fn replace_state(&mut self, state: ContextState) {
        self.state = state;
        self.continuation = None;
        for i in 0..self.ledger.len() {
            self.refresh(i);
        }
    }

    /// Rough tokens of the continuation messages and of the visible messages, for `/context`.
    pub fn parts(&mut self, window: u64) -> (u64, u64) {
        let continuation = self.continuation_for(window).1;
        (continuation, self.visible_tokens())
    }

    /// A session loaded when the provider's cache has expired: apply every pending dedup
    /// decision and take the latest outline now, since nothing sent is cached to lose.
    pub fn apply_all_dedup(&mut self) -> Option<StageReport> {
        self.cold = true;
        if self.state.outline != self.outline {
            self.rewrite_continuation();
        }
        self.apply_dedup_from(0)
    }

    /// The continuation message is about to be rewritten anyway: let it carry the latest
    /// outline.
    pub(super) fn rewrite_continuation(&mut self) {
        self.state.outline = self.outline.clone();
        self.continuation = None;
    }

    pub(super) fn continuation_for(&mut self, window: u64) -> Continuation {
        if let Some((w, cached)) = &self.continuation
            && *w == window
        {
            return cached.clone();
        }
        let cpt = self.config.chars_per_token;
        let first = self.state.carried.messages.first().and_then(|(seq, _)| self.ledger.index_of(*seq));
        let first_sent =
            first.map(|i| self.sent[i].clone().unwrap_or_else(|| self.ledger.entries()[i].message.clone()));
        let messages =
            view::continuation(&self.state, &self.protected, view::carry_budget(window), cpt, first_sent.as_ref());
        let tokens = messages.iter().map(|m| self.exact.tokens(m).unwrap_or_else(|| view::tokens_of(m, cpt))).sum();
        let built = (messages, tokens);
        self.continuation = Some((window, built.clone()));
        built
    }

    pub(super) fn tokens_of_text(&self, chars: usize) -> u64 {
        estimate_text_tokens(chars, self.config.chars_per_token)
    }

    /// Drop the bodies of the messages the summary stands for (all but the user's): they are
    /// never sent again, and the store holds them whole. The caller reads what it needs of
    /// them first (segment cuts). A state put back later ([`Pipeline::replace_state`]) must
    /// not show them again, so this is for a summary that is saved. Returns how many were
    /// released now.
    pub fn release_summarised(&mut self) -> usize {
        let Some(through) = self.state.summary.as_ref().map(|s| s.through_seq) else { return 0 };
        let released = self.ledger.release_through(through);
        for &i in &released {
            self.sent[i] = None;
        }
        released.len()
    }
}

/// `12345` → `12.3k`.
pub fn thousands(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.0}k", n as f64 / 1000.0)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
