//! The continuation message: what stands in, at the start of the sent view, for everything
//! compacted or trimmed away — the protected facts, the user's own words, the summary.

use super::estimate::estimate_text_tokens;
use super::state::ContextState;
use crate::conversation::{Message, clip};

const CONTINUATION: &str = include_str!("../../assets/prompts/continuation.md");

/// Share of the carried-instructions budget the first (goal-setting) message may take.
const FIRST_MESSAGE_SHARE: f64 = 0.4;

/// The user messages to show verbatim within `budget` tokens: always the first (the goal),
/// then the newest; what does not fit is counted, never silently dropped.
fn instructions(state: &ContextState, budget: u64, cpt: f64) -> String {
    let carried = &state.carried.messages;
    if carried.is_empty() {
        return String::new();
    }
    let chars = |tokens: u64| (tokens as f64 * cpt) as usize;
    let first_cap = chars((budget as f64 * FIRST_MESSAGE_SHARE) as u64).max(400);
    let first = clip(carried[0].1.trim(), first_cap);
    let mut left = chars(budget).saturating_sub(first.len());
    let mut later: Vec<String> = Vec::new();
    let mut omitted = 0;
    for (_, text) in carried[1..].iter().rev() {
        let text = text.trim();
        if text.len() <= left {
            left -= text.len();
            later.push(text.to_string());
        } else {
            omitted += 1;
        }
    }
    later.reverse();
    let quote = |t: &str| t.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n");
    let mut out = String::from("## The user's instructions, verbatim (oldest first)\n\n");
    out.push_str(&quote(&first));
    out.push_str("\n\n");
    if omitted > 0 {
        out.push_str(&format!(
            "[{omitted} later instruction(s) omitted here for space; the summary reflects them]\n\n"
        ));
    }
    for text in later {
        out.push_str(&quote(&text));
        out.push_str("\n\n");
    }
    out
}

/// The continuation message, when anything has been compacted or trimmed away. `outline` is the
/// rendered segment outline of what is no longer shown (may be empty).
pub fn continuation(
    state: &ContextState,
    protected: &str,
    outline: &str,
    carry_budget: u64,
    cpt: f64,
) -> Option<Message> {
    if state.summary.is_none() && state.carried.messages.is_empty() {
        return None;
    }
    let summary = match &state.summary {
        Some(s) => format!("## Summary of the work so far\n\n{}\n", s.text.trim()),
        None => {
            "## Summary of the work so far\n\nNo summary was written: earlier messages were dropped to make room.\n"
                .to_string()
        }
    };
    let protected = if protected.trim().is_empty() { String::new() } else { format!("{}\n", protected.trim()) };
    let text = CONTINUATION
        .replace("{protected}", &protected)
        .replace("{instructions}", &instructions(state, carry_budget, cpt))
        .replace("{summary}", &summary)
        .replace("{outline}", outline);
    Some(Message::user(text))
}

/// Tokens the carried instructions may take: a tenth of the window, at most 8,000.
pub fn carry_budget(window: u64) -> u64 {
    (window / 10).min(8_000)
}

pub fn tokens_of(message: &Message, cpt: f64) -> u64 {
    estimate_text_tokens(message.char_len(), cpt) + super::estimate::MESSAGE_OVERHEAD_TOKENS
}
