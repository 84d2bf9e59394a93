//! The pipeline: the stored history, the session's context state, and the pre-flight that runs
//! before every request — dedup when it pays, pruning from the warning threshold, a compaction
//! decision at the auto-compact threshold, trimming at the blocking one — plus the one
//! calibrated token figure every display and decision reads.
//!
//! Incremental: facts and token counts of each message are computed once, on append; a
//! pre-flight below the warning threshold touches only cached numbers.

use std::sync::Arc;

use serde::Serialize;

use super::budget::{BudgetLevel, ContextBudget};
use super::compact::{self, CompactionPlan};
use super::dedup::DedupIndex;
use super::estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_text_tokens};
use super::invariant::check_request;
use super::ledger::Ledger;
use super::pairs::sanitize_pairs;
use super::prune::{self, PruneAction};
use super::state::{ContextState, ReplacementKind, StageCounters, SummaryState};
use super::trim;
use super::view;
use crate::config::ContextConfig;
use crate::conversation::{Block, Message, Role};

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
    /// Past the auto-compact threshold: start one in the background; this request still fits.
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
    /// The context state changed and should be persisted.
    pub changed: bool,
}

/// The continuation message and its tokens.
type Continuation = (Arc<Message>, u64);

#[derive(Clone, Copy, Debug)]
struct Calibration {
    reported: u64,
    raw: u64,
}

pub struct Pipeline {
    config: ContextConfig,
    ledger: Ledger,
    dedup: DedupIndex,
    state: ContextState,
    /// Per entry: the message as sent, when it differs from the stored one.
    sent: Vec<Option<Arc<Message>>>,
    sent_tokens: Vec<u64>,
    protected: String,
    /// The outline of segments no longer shown, rendered by the caller.
    outline: String,
    /// The continuation message for a window size, cached until the state changes.
    continuation: Option<(u64, Option<Continuation>)>,
    calibration: Option<Calibration>,
}

impl Pipeline {
    pub fn new(config: ContextConfig) -> Pipeline {
        Pipeline {
            ledger: Ledger::new(config.chars_per_token),
            config,
            dedup: DedupIndex::default(),
            state: ContextState::default(),
            sent: Vec::new(),
            sent_tokens: Vec::new(),
            protected: String::new(),
            outline: String::new(),
            continuation: None,
            calibration: None,
        }
    }

    /// Rebuild a session: its stored messages and its persisted state give exactly the view
    /// it had.
    pub fn restore(
        config: ContextConfig,
        state: ContextState,
        stored: impl IntoIterator<Item = (i64, Message)>,
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

    /// The outline of earlier segments, shown in the continuation message.
    pub fn set_outline(&mut self, text: String) {
        if text != self.outline {
            self.outline = text;
            self.continuation = None;
        }
    }

    /// A stored message, in order.
    pub fn append(&mut self, seq: i64, message: Message) {
        let index = self.ledger.push(seq, message);
        self.dedup.observe(&self.ledger, index);
        self.sent.push(None);
        self.sent_tokens.push(self.ledger.entries()[index].tokens);
    }

    pub fn note_truncations(&mut self, n: u64) {
        self.state.counters.truncations += n;
    }

    /// The provider's count for the request whose rough estimate was `raw_at_send`.
    pub fn report_usage(&mut self, prompt_tokens: u64, raw_at_send: u64) {
        self.calibration = Some(Calibration { reported: prompt_tokens, raw: raw_at_send });
        self.state.awaiting_usage = false;
    }

    /// Rough tokens of the next request: `overhead` plus the messages as they would be sent.
    pub fn raw_tokens(&mut self, overhead: u64, window: u64) -> u64 {
        let continuation = self.continuation_for(window).map(|(_, t)| t).unwrap_or(0);
        let entries = self.ledger.entries();
        let messages: u64 =
            (0..entries.len()).filter(|&i| self.state.is_visible(entries[i].seq)).map(|i| self.sent_tokens[i]).sum();
        overhead + continuation + messages
    }

    /// The one number: the last reported usage plus what changed since, in rough tokens.
    pub fn estimate(&mut self, overhead: u64, window: u64) -> u64 {
        let raw = self.raw_tokens(overhead, window);
        match self.calibration {
            Some(c) => (c.reported as i64 + raw as i64 - c.raw as i64).max(0) as u64,
            None => raw,
        }
    }

    /// Dedup, prune, decide compaction, trim: everything the next request needs.
    pub fn preflight(&mut self, input: &PreflightInput) -> Preflight {
        let budget = input.budget;
        let mut reports = Vec::new();
        let mut changed = false;
        if self.pending_dedup_savings() >= self.config.dedup_min_savings_tokens as i64
            && let Some(report) = self.apply_dedup()
        {
            reports.push(report);
            changed = true;
        }
        let mut tokens = self.estimate(input.overhead, budget.window);
        if self.config.prune && budget.level(tokens) >= BudgetLevel::Warning {
            // Aim a tenth of the effective window below the threshold, so the next few
            // requests do not cross it again and rewrite the cached prefix each time.
            let target = tokens - budget.warning + 1 + budget.effective / 10;
            let plan =
                prune::plan(&self.ledger, &self.state, &self.config, &self.sent_tokens, target, budget.effective);
            if !plan.actions.is_empty() {
                reports.push(self.apply_prune(plan));
                changed = true;
                tokens = self.estimate(input.overhead, budget.window);
            }
        }
        let mut level = budget.level(tokens);
        if level < BudgetLevel::Warning && self.state.breaker != Default::default() {
            // Pressure is gone: the breaker closes.
            self.state.breaker = Default::default();
            changed = true;
        }
        let may_compact = input.compaction_allowed
            && self.config.auto_compact
            && !self.state.awaiting_usage
            && self.breaker_allows(input.now);
        let mut compaction = None;
        if level >= BudgetLevel::Compact && may_compact && self.plan_compaction(&budget, false).is_some() {
            compaction = Some(if level >= BudgetLevel::Blocking { Urgency::Now } else { Urgency::Background });
        }
        if level >= BudgetLevel::Blocking && compaction.is_none() && !input.compaction_running {
            if let Some(report) = self.trim(tokens - budget.blocking + 1) {
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
        Preflight { tokens, level, reports, compaction, changed }
    }

    /// The messages to send, in order; always a valid sequence.
    pub fn view(&mut self, window: u64) -> Vec<Arc<Message>> {
        let mut out: Vec<Arc<Message>> = Vec::with_capacity(self.ledger.len() + 1);
        if let Some((message, _)) = self.continuation_for(window) {
            out.push(message);
        }
        for (i, e) in self.ledger.entries().iter().enumerate() {
            if self.state.is_visible(e.seq) {
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

    /// Rough tokens of the continuation message and of the visible messages, for `/context`.
    pub fn parts(&mut self, window: u64) -> (u64, u64) {
        let continuation = self.continuation_for(window).map(|(_, t)| t).unwrap_or(0);
        let entries = self.ledger.entries();
        let messages =
            (0..entries.len()).filter(|&i| self.state.is_visible(entries[i].seq)).map(|i| self.sent_tokens[i]).sum();
        (continuation, messages)
    }

    /// Apply every pending dedup decision now (on session load, when the cache is cold anyway).
    pub fn apply_all_dedup(&mut self) -> Option<StageReport> {
        self.apply_dedup()
    }

    /// What an automatic (or, with `manual`, a `/compact`) compaction would summarise.
    pub fn plan_compaction(&self, budget: &ContextBudget, manual: bool) -> Option<CompactionPlan> {
        compact::plan(&self.ledger, &self.state, &self.config, budget, &self.sent_tokens, manual)
    }

    /// Replace everything up to `plan.through_seq` with `summary`.
    pub fn apply_compaction(
        &mut self,
        plan: &CompactionPlan,
        summary: String,
        input: &PreflightInput,
        tokens_before: u64,
    ) -> StageReport {
        let through = plan.through_seq;
        let summarised: Vec<usize> =
            (0..self.ledger.len()).filter(|&i| self.ledger.entries()[i].seq <= through).collect();
        for &i in &summarised {
            let e = &self.ledger.entries()[i];
            if let Some(f) = &e.facts {
                self.state.replacements.remove(&f.call_id);
            }
            for call in e.message.tool_calls() {
                self.state.shrunk_arguments.remove(&call.id);
            }
            self.sent[i] = None;
        }
        self.state.trimmed.retain(|&(_, last)| last > through);
        self.state.clipped.retain(|&seq, _| seq > through);
        self.state.recall.retain(|&seq, _| seq > through);
        self.state.summary = Some(SummaryState { text: summary, through_seq: through, generation: plan.generation });
        self.state.carried.messages.extend(plan.carried.iter().cloned());
        self.state.counters.compactions += 1;
        self.state.awaiting_usage = true;
        self.continuation = None;
        let after = self.estimate(input.overhead, input.budget.window);
        let breaker = &mut self.state.breaker;
        breaker.consecutive_failures = 0;
        if after as f64 > tokens_before as f64 * 0.9 {
            breaker.ineffective_in_row += 1;
            if breaker.ineffective_in_row >= 2 {
                breaker.opened_at = Some(input.now);
            }
        } else {
            breaker.ineffective_in_row = 0;
            breaker.opened_at = None;
        }
        StageReport {
            stage: Stage::Compaction,
            count: plan.messages.len() as u64,
            saved_tokens: tokens_before.saturating_sub(after),
            detail: format!(
                "compacted {} messages: {} → {} tokens",
                plan.messages.len(),
                thousands(tokens_before),
                thousands(after)
            ),
        }
    }

    /// A compaction failed: count it, and open the breaker after enough in a row.
    pub fn record_compaction_failure(&mut self, now: i64) {
        self.state.counters.compaction_failures += 1;
        let breaker = &mut self.state.breaker;
        breaker.consecutive_failures += 1;
        if breaker.consecutive_failures >= self.config.breaker_failures || breaker.opened_at.is_some() {
            // A failed half-open attempt re-opens it for another cooldown.
            breaker.opened_at = Some(now);
        }
    }

    /// Whether an automatic compaction may run: the breaker is closed, or half-open after its
    /// cooldown.
    pub fn breaker_allows(&self, now: i64) -> bool {
        match self.state.breaker.opened_at {
            None => true,
            Some(at) => now - at >= self.config.breaker_cooldown_secs as i64,
        }
    }

    /// Drop oldest turns to save at least `need` tokens.
    pub fn trim(&mut self, need: u64) -> Option<StageReport> {
        let plan = trim::plan(&self.ledger, &self.state, &self.sent_tokens, need);
        if plan.ranges.is_empty() {
            return None;
        }
        for (a, b) in &plan.ranges {
            self.state.add_trimmed(*a, *b);
        }
        let kept_words = !plan.carried.is_empty();
        self.state.carried.messages.extend(plan.carried);
        self.state.counters.trimmed_messages += plan.messages;
        self.continuation = None;
        Some(StageReport {
            stage: Stage::Trim,
            count: plan.messages,
            saved_tokens: plan.saved_tokens,
            detail: format!(
                "dropped the {} oldest messages (−{} tokens){}",
                plan.messages,
                thousands(plan.saved_tokens),
                if kept_words { "; the user's instructions in them are kept verbatim" } else { "" }
            ),
        })
    }

    /// Last resort: clip the largest visible tool results, then the latest user message, each
    /// to half its size (at least a few hundred characters stay), until `need` tokens are saved.
    fn clip(&mut self, need: u64) -> Option<StageReport> {
        const KEEP_CHARS: usize = 600;
        let mut saved = 0u64;
        let mut clipped = 0u64;
        loop {
            let entries = self.ledger.entries();
            let candidate = (0..entries.len())
                .filter(|&i| self.state.is_visible(entries[i].seq))
                .filter_map(|i| {
                    let text_len = match entries[i].role() {
                        Role::Tool => self.sent[i].as_ref().unwrap_or(&entries[i].message).tool_result()?.content.len(),
                        Role::User => self.sent[i].as_ref().unwrap_or(&entries[i].message).text().len(),
                        Role::Assistant => return None,
                    };
                    (text_len > KEEP_CHARS * 2).then_some((entries[i].role() == Role::User, text_len, i))
                })
                // Tool results before the user's words; the largest first.
                .min_by_key(|&(is_user, len, _)| (is_user, std::cmp::Reverse(len)));
            let Some((_, len, i)) = candidate else { break };
            let e = &self.ledger.entries()[i];
            let current = match e.role() {
                Role::Tool => self.sent[i].as_ref().unwrap_or(&e.message).tool_result().map(|r| r.content.clone()),
                Role::User | Role::Assistant => Some(self.sent[i].as_ref().unwrap_or(&e.message).text()),
            };
            let Some(current) = current else { break };
            let before = self.sent_tokens[i];
            self.state.clipped.insert(e.seq, super::truncate::clip_to_fit(&current, (len / 2).max(KEEP_CHARS)));
            self.refresh(i);
            saved += before.saturating_sub(self.sent_tokens[i]);
            clipped += 1;
            if saved >= need || clipped > 64 {
                break;
            }
        }
        (clipped > 0).then(|| StageReport {
            stage: Stage::Trim,
            count: clipped,
            saved_tokens: saved,
            detail: format!(
                "clipped {clipped} message(s) in what is sent to fit the window (−{} tokens; the stored text is whole)",
                thousands(saved)
            ),
        })
    }

    fn continuation_for(&mut self, window: u64) -> Option<Continuation> {
        if let Some((w, cached)) = &self.continuation
            && *w == window
        {
            return cached.clone();
        }
        let cpt = self.config.chars_per_token;
        let built = view::continuation(&self.state, &self.protected, &self.outline, view::carry_budget(window), cpt)
            .map(|m| {
                let t = view::tokens_of(&m, cpt);
                (Arc::new(m), t)
            });
        self.continuation = Some((window, built.clone()));
        built
    }

    fn tokens_of_text(&self, chars: usize) -> u64 {
        estimate_text_tokens(chars, self.config.chars_per_token)
    }

    /// What applying the pending dedup decisions would save, counting only what is sent.
    fn pending_dedup_savings(&self) -> i64 {
        let entries = self.ledger.entries();
        self.dedup
            .unapplied(&self.state.replacements)
            .filter(|(_, i, _)| self.state.is_visible(entries[*i].seq))
            .map(|(_, i, r)| {
                let now = self.sent_tokens[i] as i64;
                let after = match r.kind {
                    ReplacementKind::StaleWarning => now + self.tokens_of_text(r.text.len() + 1) as i64,
                    ReplacementKind::Duplicate
                    | ReplacementKind::StaleRead
                    | ReplacementKind::SubsumedGrep
                    | ReplacementKind::Pruned => (self.tokens_of_text(r.text.len()) + MESSAGE_OVERHEAD_TOKENS) as i64,
                };
                now - after
            })
            .sum()
    }

    fn apply_dedup(&mut self) -> Option<StageReport> {
        let decisions: Vec<(String, usize, super::state::Replacement)> =
            self.dedup.unapplied(&self.state.replacements).map(|(id, i, r)| (id.to_string(), i, r.clone())).collect();
        if decisions.is_empty() {
            return None;
        }
        let before: u64 = decisions.iter().map(|(_, i, _)| self.sent_tokens[*i]).sum();
        let mut after = 0;
        for (id, i, replacement) in &decisions {
            self.state.replacements.insert(id.clone(), replacement.clone());
            self.refresh(*i);
            after += self.sent_tokens[*i];
        }
        let count = decisions.len() as u64;
        self.state.counters.dedup_replacements += count;
        let saved = before.saturating_sub(after);
        Some(StageReport {
            stage: Stage::Dedup,
            count,
            saved_tokens: saved,
            detail: format!("replaced {count} superseded tool results (−{} tokens)", thousands(saved)),
        })
    }

    fn apply_prune(&mut self, plan: prune::PrunePlan) -> StageReport {
        let mut touched = Vec::new();
        let mut shrunk = 0;
        for action in plan.actions {
            match action {
                PruneAction::Replace { call_id, text } => {
                    self.state
                        .replacements
                        .insert(call_id.clone(), super::state::Replacement { kind: ReplacementKind::Pruned, text });
                    touched.push(call_id);
                }
                PruneAction::Shrink { call_id, arguments } => {
                    self.state.shrunk_arguments.insert(call_id.clone(), arguments);
                    touched.push(call_id);
                    shrunk += 1;
                }
            }
        }
        let before: u64 = self.sent_tokens.iter().sum();
        for i in 0..self.ledger.len() {
            let e = &self.ledger.entries()[i];
            let hit = e.facts.as_ref().is_some_and(|f| touched.contains(&f.call_id))
                || e.message.tool_calls().any(|c| touched.contains(&c.id));
            if hit {
                self.refresh(i);
            }
        }
        let after: u64 = self.sent_tokens.iter().sum();
        self.state.counters.pruned_results += plan.pruned_results;
        let saved = before.saturating_sub(after);
        StageReport {
            stage: Stage::Prune,
            count: plan.pruned_results,
            saved_tokens: saved,
            detail: match (plan.pruned_results, shrunk) {
                (n, 0) => format!("cleared {n} old tool outputs (−{} tokens)", thousands(saved)),
                (0, s) => format!("shortened the arguments of {s} old tool calls (−{} tokens)", thousands(saved)),
                (n, s) => format!(
                    "cleared {n} old tool outputs and shortened the arguments of {s} old calls (−{} tokens)",
                    thousands(saved)
                ),
            },
        }
    }

    /// Recompute how entry `i` is sent from the state.
    fn refresh(&mut self, i: usize) {
        let e = &self.ledger.entries()[i];
        let clipped = self.state.clipped.get(&e.seq);
        let sent = match e.role() {
            Role::Tool if clipped.is_some() => e.message.tool_result().map(|r| {
                let mut r = r.clone();
                r.content = clipped.cloned().unwrap_or_default();
                Arc::new(Message::tool(r))
            }),
            Role::User if clipped.is_some() => clipped.map(|text| Arc::new(Message::user(text.clone()))),
            Role::User if self.state.recall.contains_key(&e.seq) => self
                .state
                .recall
                .get(&e.seq)
                .map(|recall| Arc::new(Message::user(format!("{}\n\n{}", e.message.text(), recall)))),
            Role::Tool => e.facts.as_ref().and_then(|f| self.state.replacements.get(&f.call_id)).and_then(|r| {
                let mut result = e.message.tool_result()?.clone();
                result.content = match r.kind {
                    ReplacementKind::StaleWarning => format!("{}\n{}", r.text, result.content),
                    ReplacementKind::Duplicate
                    | ReplacementKind::StaleRead
                    | ReplacementKind::SubsumedGrep
                    | ReplacementKind::Pruned => r.text.clone(),
                };
                Some(Arc::new(Message::tool(result)))
            }),
            Role::Assistant if e.message.tool_calls().any(|c| self.state.shrunk_arguments.contains_key(&c.id)) => {
                let mut m = (*e.message).clone();
                for block in &mut m.content {
                    if let Block::ToolCall(call) = block
                        && let Some(args) = self.state.shrunk_arguments.get(&call.id)
                    {
                        call.arguments = args.clone();
                    }
                }
                Some(Arc::new(m))
            }
            Role::Assistant | Role::User => None,
        };
        self.sent_tokens[i] = match &sent {
            Some(m) => view::tokens_of(m, self.config.chars_per_token),
            None => e.tokens,
        };
        self.sent[i] = sent;
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
