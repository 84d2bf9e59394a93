//! LLM compaction (CONTEXT.md §5): where to cut, what to send the summariser, and how to get a
//! summary out of it whatever the size — in chunks, oldest first, each updating the running
//! summary, halving a chunk the provider still finds too long. The model call itself is a
//! [`Summarizer`] passed in; nothing here does IO.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::budget::ContextBudget;
use super::estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_text_tokens};
use super::ledger::Ledger;
use super::redact::redact_secrets;
use super::state::ContextState;
use crate::config::ContextConfig;
use crate::conversation::{Block, Message, Role, floor_char_boundary};

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
    /// User messages leaving the verbatim view, to carry: (seq, text).
    pub carried: Vec<(i64, String)>,
    /// Rough tokens of `messages` as stored.
    pub summarised_tokens: u64,
}

/// Choose the tail to keep verbatim: about `compaction_tail_share` of the compaction threshold,
/// at least `compaction_min_tail_messages` messages and, when they fit in half the threshold,
/// the last `compaction_min_tail_turns` user turns; aligned so no tool group is split and the
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
    let after = state.summary.as_ref().map(|s| s.through_seq).unwrap_or(i64::MIN);
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
    let turn_cap = budget.auto_compact / 2;
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
        let enough_messages = visible.len() - start >= config.compaction_min_tail_messages;
        let enough_turns = !honour_turns || start <= min_turns_start;
        if kept >= tail_budget && enough_messages && enough_turns {
            break;
        }
        start -= 1;
        kept += sent_tokens[visible[start]];
    }
    // Never split a tool group: move the start back to the group's assistant message.
    while start > 0 && !entries[visible[start]].starts_unit() {
        start -= 1;
    }
    if start == 0 {
        return None;
    }
    let tail_first_seq = entries[visible[start]].seq;
    let through_seq = entries[visible[start - 1]].seq;
    let already_carried: std::collections::HashSet<i64> = state.carried.messages.iter().map(|(s, _)| *s).collect();
    let mut messages = Vec::new();
    let mut carried = Vec::new();
    let mut summarised_tokens = 0;
    for e in entries.iter().filter(|e| e.seq > after && e.seq < tail_first_seq) {
        if e.role() == Role::User && !already_carried.contains(&e.seq) {
            carried.push((e.seq, e.message.text()));
        }
        summarised_tokens += e.tokens;
        messages.push(e.message.clone());
    }
    if messages.is_empty() {
        return None;
    }
    Some(CompactionPlan {
        previous_summary: state.summary.as_ref().map(|s| s.text.clone()),
        generation: state.summary.as_ref().map(|s| s.generation).unwrap_or(0) + 1,
        through_seq,
        messages,
        carried,
        summarised_tokens,
    })
}

/// Summary length: `clamp(0.2 × tokens summarised, 2,000, min(5 % of window, 12,000))` (002),
/// with the floor lowered for windows where 5 % is under 2,000.
pub fn summary_budget(summarised_tokens: u64, window: u64) -> u32 {
    let cap = (window / 20).min(12_000);
    let floor = cap.min(2_000);
    ((summarised_tokens / 5).clamp(floor, cap)).max(256) as u32
}

/// Why a summariser call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryError {
    /// The provider said the input does not fit its window.
    TooLong,
    Failed(String),
}

/// The model call of compaction, provided by the agent.
pub trait Summarizer: Send + Sync {
    /// One call: `system` is the compaction prompt, `user` the transcript and instructions.
    fn summarize<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, SummaryError>>;
    /// The summariser's context window, in tokens.
    fn window(&self) -> u64;
}

/// Longest stretch of one tool result put in the transcript: the summary needs its gist.
const RESULT_EXCERPT_CHARS: usize = 1_500;
/// Share of the summariser's input budget actually filled: the rough estimate can be low.
const SAFETY: f64 = 0.8;

fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let head = floor_char_boundary(text, max * 2 / 3);
    let tail_start = floor_char_boundary(text, text.len() - max / 3);
    format!("{}\n[… {} characters omitted …]\n{}", &text[..head], tail_start - head, &text[tail_start..])
}

/// One message as transcript text for the summariser, secrets redacted.
pub fn transcript_piece(message: &Message) -> String {
    let mut out = String::new();
    match message.role {
        Role::User => out.push_str("USER:\n"),
        Role::Assistant => out.push_str("ASSISTANT:\n"),
        Role::Tool => {}
    }
    for block in &message.content {
        match block {
            Block::Text { text } => {
                out.push_str(text.trim());
                out.push('\n');
            }
            Block::ToolCall(call) => {
                out.push_str(&format!("→ called {} {}\n", call.name, excerpt(&call.arguments, 400)));
            }
            Block::ToolResult(result) => {
                let status = if result.is_error { " (failed)" } else { "" };
                out.push_str(&format!(
                    "RESULT of {}{status}:\n{}\n",
                    result.name,
                    excerpt(&result.content, RESULT_EXCERPT_CHARS)
                ));
            }
            // The model's scratch work is not what happened; an image is named, not sent.
            Block::Thinking(_) => {}
            Block::Image(image) => out.push_str(&format!("[image {}]\n", image.describe())),
        }
    }
    redact_secrets(&out).into_owned()
}

fn request_text(previous: Option<&str>, transcript: &str, budget: u32, part: Option<(usize, usize)>) -> String {
    let part_note = match part {
        Some((n, of)) => format!(" This is part {n} of {of} of the messages, in order."),
        None => String::new(),
    };
    match previous {
        Some(summary) => format!(
            "Here is the summary so far:\n\n<summary>\n{summary}\n</summary>\n\nUpdate it with the messages below.{part_note} Keep every section; move items from In Progress to Done when they were finished; keep everything still true, including all constraints and corrections; drop nothing silently. Write the whole updated summary, at most about {budget} tokens.\n\n<messages>\n{transcript}</messages>"
        ),
        None => format!(
            "Summarise the messages below.{part_note} At most about {budget} tokens.\n\n<messages>\n{transcript}</messages>"
        ),
    }
}

/// Summarise `plan.messages` (updating `plan.previous_summary`), in as many calls as the
/// summariser's window needs. `progress(done, total)` is called after each call.
pub async fn summarize(
    plan: &CompactionPlan,
    summarizer: &dyn Summarizer,
    chars_per_token: f64,
    progress: &(dyn Fn(u32, u32) + Send + Sync),
) -> Result<String, String> {
    let window = summarizer.window();
    let out_budget = summary_budget(plan.summarised_tokens, window);
    let tokens = |s: &str| estimate_text_tokens(s.len(), chars_per_token);
    // Room for the prompt, the running summary going in (whichever is larger: the previous one
    // or what this call may write) and the summary coming out.
    let running = plan.previous_summary.as_deref().map(tokens).unwrap_or(0).max(out_budget as u64);
    let fixed = tokens(COMPACTION_PROMPT) + running + out_budget as u64 + 3 * MESSAGE_OVERHEAD_TOKENS + 200;
    if fixed >= window {
        return Err(format!(
            "the summariser's window ({window} tokens) cannot hold the compaction prompt and a summary"
        ));
    }
    let input_budget = ((window - fixed) as f64 * SAFETY) as u64;
    let pieces: Vec<String> = plan.messages.iter().map(|m| transcript_piece(m)).collect();
    let mut chunks = chunk(&pieces, input_budget, chars_per_token);
    let mut summary = plan.previous_summary.clone();
    let mut done = 0u32;
    let mut i = 0;
    while i < chunks.len() {
        let total = chunks.len();
        let part = (total > 1).then_some((i + 1, total));
        let request = request_text(summary.as_deref(), &chunks[i], out_budget, part);
        match summarizer.summarize(COMPACTION_PROMPT, &request, out_budget).await {
            Ok(text) if !text.trim().is_empty() => {
                summary = Some(redact_secrets(text.trim()).into_owned());
                done += 1;
                progress(done, total as u32);
                i += 1;
            }
            Ok(_) => return Err("the summariser returned an empty summary".into()),
            Err(SummaryError::TooLong) => {
                // Our estimate was low for this text: halve the chunk and go on.
                let text = chunks.remove(i);
                let halves = split_in_half(&text);
                if halves.len() < 2 {
                    return Err("the summariser rejected a chunk that cannot be split further".into());
                }
                for (k, h) in halves.into_iter().enumerate() {
                    chunks.insert(i + k, h);
                }
            }
            Err(SummaryError::Failed(e)) => return Err(e),
        }
    }
    summary.ok_or_else(|| "nothing to summarise".to_string())
}

/// Pack pieces into chunks of at most `budget` tokens; a piece larger than a chunk is cut.
fn chunk(pieces: &[String], budget: u64, cpt: f64) -> Vec<String> {
    let max_chars = ((budget as f64) * cpt) as usize;
    let mut chunks = Vec::new();
    let mut current = String::new();
    for piece in pieces {
        let piece = if piece.len() > max_chars {
            excerpt(piece, max_chars.saturating_sub(100).max(200))
        } else {
            piece.clone()
        };
        if !current.is_empty() && current.len() + piece.len() + 1 > max_chars {
            chunks.push(std::mem::take(&mut current));
        }
        current.push_str(&piece);
        current.push('\n');
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Two halves of a chunk, split at a line boundary near the middle.
fn split_in_half(text: &str) -> Vec<String> {
    if text.len() < 400 {
        return vec![text.to_string()];
    }
    let mid = floor_char_boundary(text, text.len() / 2);
    let cut = text[..mid].rfind('\n').filter(|&c| c > text.len() / 4).unwrap_or(mid);
    vec![text[..cut].to_string(), text[cut..].to_string()]
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
