//! LLM compaction (CONTEXT.md §5): where to cut, what to send the summariser, and how to get a
//! summary out of it whatever the size — in chunks, oldest first, each updating the running
//! summary, halving a chunk the provider still finds too long. The model call itself is a
//! [`Summarizer`] passed in; nothing here does IO.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::budget::ContextBudget;
use super::ledger::Ledger;
use super::state::ContextState;
use crate::config::ContextConfig;
use crate::conversation::{Message, Role};

pub const COMPACTION_PROMPT: &str = include_str!("../../assets/prompts/compaction.md");

/// A decided compaction, ready to be summarised and applied.
#[derive(Clone, Debug)]
pub struct CompactionPlan {
    /// The summary being updated, whole (iterative compaction).
    pub previous_summary: Option<String>,
    pub generation: u32,
    /// The last stored message the new summary covers; the tail starts after it.
    pub through_seq: i64,
    /// What is summarised: every stored message after the previous summary and before the tail,
    /// trimmed ones included (the summary recovers them).
    pub messages: Vec<Arc<Message>>,
    /// The stored seq of each of `messages`.
    pub seqs: Vec<i64>,
    /// Stretches of `messages` (inclusive seq ranges: the session's segments that this
    /// compaction hides) to be given one line each in the reply, for the outline. Set by the
    /// caller; empty asks for none.
    pub stretches: Vec<(i64, i64)>,
    /// User messages leaving the verbatim view, to carry: (seq, text).
    pub carried: Vec<(i64, String)>,
    /// Rough tokens of `messages` as stored.
    pub summarised_tokens: u64,
    /// What the summariser reads, at most, as a multiple of the summary (config
    /// `compaction_input_ratio`).
    pub input_ratio: f64,
    /// The longest summary, as a share of the window (config `summary_window_share`).
    pub summary_share: f64,
    /// The user's latest message starts new work: everything before it is finished and leaves
    /// the view — summarised briefly, the user's earlier words with it (the summary and the
    /// recall tool keep them).
    pub finished: bool,
    /// The conversation exactly as the request the summary call follows sent it, when the
    /// summariser may read it in place (set by the caller; see [`Summarizer::in_place`]).
    pub conversation: Option<Conversation>,
    /// Seqs of `messages` the view no longer shows (a trim dropped them before any summary
    /// covered them): read in place, the summary call is given their transcript.
    pub hidden: Vec<i64>,
    /// The first message kept verbatim after the summary, and how it opens.
    pub tail_first: Arc<Message>,
    pub tail_opening: String,
}

impl CompactionPlan {
    /// Where the tail starts in `conversation`: a request's messages can be read in place when
    /// they reach it (what comes before is what is summarised).
    pub fn tail_in(&self, conversation: &[Arc<Message>]) -> Option<usize> {
        conversation.iter().position(|m| same_message(m, &self.tail_first))
    }

    /// Where the part kept verbatim starts in `conversation` (a request's messages as sent),
    /// when that request can be read in place for this plan: at the tail's first message, or
    /// at its end when the request stops just before the tail — the tail opens with the reply
    /// to it — so everything it holds is what is summarised (a compaction the window forces
    /// before a request reads the request before it, all in the cache).
    pub fn reads_in(&self, conversation: &[Arc<Message>]) -> Option<usize> {
        self.tail_in(conversation).or_else(|| {
            let (last, summarised_last) = (conversation.last()?, self.messages.last()?);
            (self.tail_first.role == Role::Assistant && same_message(last, summarised_last))
                .then_some(conversation.len())
        })
    }
}

/// Whether `sent` is `stored` as a request carries it: a tool result by its call (its text may
/// be sent shortened), anything else by role, text and calls.
fn same_message(sent: &Message, stored: &Message) -> bool {
    match (sent.tool_result(), stored.tool_result()) {
        (Some(a), Some(b)) => a.call_id == b.call_id,
        (None, None) => {
            sent.role == stored.role
                && sent.text() == stored.text()
                && sent.tool_calls().map(|c| &c.id).eq(stored.tool_calls().map(|c| &c.id))
        }
        _ => false,
    }
}

/// What a compaction reads in place: the messages of a request, and that request's calibrated
/// size (system prompt and tools included).
#[derive(Clone, Debug)]
pub struct Conversation {
    pub messages: Vec<Arc<Message>>,
    pub tokens: u64,
}

/// The last user turns are kept whole when they take at most this many tail budgets.
const TURN_STRETCH: u64 = 2;

/// Choose the tail to keep verbatim: about `compaction_tail_share` of the compaction threshold,
/// at least `compaction_min_tail_messages` messages (while they fit twice that budget; past it,
/// the latest tool group) and, when they fit twice that budget, the last
/// `compaction_min_tail_turns` user turns; aligned so no tool group is split and the
/// latest reply is kept. A `manual` compaction keeps that share of the current conversation
/// instead, when it is smaller, and only the message minimum. `None` when there is nothing before the tail to summarise.
pub fn plan(
    ledger: &Ledger,
    state: &ContextState,
    config: &ContextConfig,
    budget: &ContextBudget,
    sent_tokens: &[u64],
    manual: bool,
) -> Option<CompactionPlan> {
    let entries = ledger.entries();
    let visible: Vec<usize> = (0..entries.len()).filter(|&i| state.is_visible(entries[i].seq)).collect();
    if visible.len() <= config.compaction_min_tail_messages {
        return None;
    }
    let mut tail_budget = (budget.auto_compact as f64 * config.compaction_tail_share) as u64;
    if manual {
        // `/compact` means now, whatever the size: keep the same share of what there is.
        let current: u64 = visible.iter().map(|&i| sent_tokens[i]).sum();
        tail_budget = tail_budget.min((current as f64 * config.compaction_tail_share) as u64);
    }
    // The turn minimum may stretch the tail, not replace it: the user's words are carried
    // verbatim anyway, and a long agentic turn would otherwise keep half the window.
    let turn_cap = tail_budget * TURN_STRETCH;
    // Tokens of the last N user turns, to see whether the turn minimum fits.
    let mut turns_seen = 0;
    let mut turns_tokens = 0u64;
    let mut min_turns_start = visible.len();
    for (pos, &i) in visible.iter().enumerate().rev() {
        turns_tokens += sent_tokens[i];
        if entries[i].role() == Role::User {
            turns_seen += 1;
            if turns_seen == config.compaction_min_tail_turns {
                min_turns_start = pos;
                break;
            }
        }
    }
    let honour_turns = !manual && turns_seen == config.compaction_min_tail_turns && turns_tokens <= turn_cap;
    let mut start = visible.len();
    let mut kept = 0u64;
    while start > 0 {
        let next = sent_tokens[visible[start - 1]];
        // The message minimum may stretch the tail too, not replace it: past the stretch, the
        // latest tool group alone (the alignment below keeps it whole) stays verbatim, and the
        // large results before it are summarised instead of being read on every request.
        let enough_messages = visible.len() - start >= config.compaction_min_tail_messages
            || (kept > 0 && kept + next > turn_cap && !manual);
        let enough_turns = !honour_turns || start <= min_turns_start;
        // The budget is a ceiling once the minimums hold: a large result that would cross it
        // is summarised rather than kept whole (it is read on every request until the next
        // compaction).
        if (kept >= tail_budget || kept + next > tail_budget) && enough_messages && enough_turns {
            break;
        }
        start -= 1;
        kept += sent_tokens[visible[start]];
    }
    // Never split a tool group: move the start back to the group's assistant message.
    while start > 0 && !entries[visible[start]].starts_unit() {
        start -= 1;
    }
    build(ledger, state, config, &visible, start, false)
}

/// The plan that summarises everything before `visible[start]` (the tail's first message);
/// `finished`: the work before is finished, and the user's words in it leave with it.
fn build(
    ledger: &Ledger,
    state: &ContextState,
    config: &ContextConfig,
    visible: &[usize],
    start: usize,
    finished: bool,
) -> Option<CompactionPlan> {
    if start == 0 || start >= visible.len() {
        return None;
    }
    let entries = ledger.entries();
    let after = state.summary.as_ref().map(|s| s.through_seq).unwrap_or(i64::MIN);
    let tail_first = &entries[visible[start]];
    let through_seq = entries[visible[start - 1]].seq;
    let already_carried: std::collections::HashSet<i64> = state.carried.messages.iter().map(|(s, _)| *s).collect();
    let mut messages = Vec::new();
    let mut seqs = Vec::new();
    let mut carried = Vec::new();
    let mut hidden = Vec::new();
    let mut summarised_tokens = 0;
    for e in entries.iter().filter(|e| e.seq > after && e.seq < tail_first.seq) {
        if e.role() == Role::User && !already_carried.contains(&e.seq) && !finished {
            carried.push((e.seq, e.message.text()));
        }
        if !state.is_visible(e.seq) {
            hidden.push(e.seq);
        }
        summarised_tokens += e.tokens;
        messages.push(e.message.clone());
        seqs.push(e.seq);
    }
    if messages.is_empty() {
        return None;
    }
    Some(CompactionPlan {
        previous_summary: state.summary.as_ref().map(|s| s.text.clone()),
        generation: state.summary.as_ref().map(|s| s.generation).unwrap_or(0) + 1,
        through_seq,
        messages,
        seqs,
        stretches: Vec::new(),
        carried,
        summarised_tokens,
        input_ratio: config.compaction_input_ratio,
        summary_share: config.summary_window_share,
        finished,
        conversation: None,
        hidden,
        tail_first: tail_first.message.clone(),
        tail_opening: opening(&tail_first.message),
    })
}

/// The finished work before the user's latest message, when that message is the last one
/// sent (the first request of a turn): everything before it is summarised; the message stays.
pub fn plan_finished(ledger: &Ledger, state: &ContextState, config: &ContextConfig) -> Option<CompactionPlan> {
    let entries = ledger.entries();
    let visible: Vec<usize> = (0..entries.len()).filter(|&i| state.is_visible(entries[i].seq)).collect();
    let last = *visible.last()?;
    if entries[last].role() != Role::User {
        return None;
    }
    build(ledger, state, config, &visible, visible.len() - 1, true)
}

/// How a message opens, to name it to the summariser: its first words, or the call it makes.
pub(super) fn opening(message: &Message) -> String {
    let text = message.text();
    let words = text.split_whitespace().take(14).collect::<Vec<_>>().join(" ");
    let who = match message.role {
        Role::User => "the user's message",
        Role::Assistant => "your message",
        Role::Tool => "the tool result",
    };
    if !words.is_empty() {
        return format!("{who} that begins “{}”", crate::conversation::clip(&words, 90));
    }
    match message.tool_calls().next() {
        Some(call) => format!("{who} that calls `{}`", call.name),
        None => who.to_string(),
    }
}

/// Summary length: `clamp(0.2 × tokens summarised, 2,000, min(share of window, 12,000))`,
/// with the floor lowered for windows where that share is under 2,000. `share` is the config's
/// `summary_window_share` (**cairn**; 002 had 5 %): the summary is written once at the output
/// price and read on every request until the next compaction, while the user's own words and
/// the tools' facts are carried beside it, so it need not hold them (docs/context-costs.md).
pub fn summary_budget(summarised_tokens: u64, window: u64, share: f64) -> u32 {
    let cap = ((window as f64 * share) as u64).min(12_000);
    let floor = cap.min(2_000);
    ((summarised_tokens / 5).clamp(floor, cap)).max(256) as u32
}

/// The summary of finished work: brief, for reference — the floor of [`summary_budget`].
pub fn finished_budget(window: u64, share: f64) -> u32 {
    summary_budget(0, window, share)
}

/// The length a plan's summary is asked for.
pub fn plan_budget(plan: &CompactionPlan, window: u64) -> u32 {
    match plan.finished {
        true => finished_budget(window, plan.summary_share),
        false => summary_budget(plan.summarised_tokens, window, plan.summary_share),
    }
}

/// Why a summariser call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryError {
    /// The provider said the input does not fit its window.
    TooLong,
    /// The reply stopped at `max_tokens` (the stop reason said so): the text so far, which is
    /// never stored as a summary.
    Cut(String),
    Failed(String),
}

/// The model call of compaction, provided by the agent.
pub trait Summarizer: Send + Sync {
    /// One call: `system` is the compaction prompt, `user` the transcript and instructions.
    /// A reply that stopped at `max_tokens` is `Err(SummaryError::Cut(text))`.
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>>;
    /// The summariser's context window, in tokens.
    fn window(&self) -> u64;
    /// Whether [`Summarizer::summarize_conversation`] sends a conversation exactly as the
    /// session's own requests do — same model, system prompt, tools and breakpoints — so the
    /// call reads the provider's cache. A separate compaction model cannot.
    fn in_place(&self) -> bool {
        false
    }
    /// One call: `messages` exactly as the request before sent them, then `instruction` last,
    /// after every cache breakpoint.
    fn summarize_conversation<'a>(
        &'a self,
        _messages: &'a [Arc<Message>],
        _instruction: &'a str,
        _max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>> {
        Box::pin(async { Err(SummaryError::Failed("this summariser cannot read the conversation in place".into())) })
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
