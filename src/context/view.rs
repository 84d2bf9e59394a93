//! What stands in, at the start of the sent view, for everything compacted or trimmed away:
//! the user's first message, sent again exactly as it was (so the provider's cached prefix
//! still covers it after every compaction), then the continuation message — the protected
//! facts, the user's later words, the summary, the outline.

use std::collections::HashSet;
use std::sync::Arc;

use super::estimate::estimate_text_tokens;
use super::state::ContextState;
use crate::conversation::{Message, floor_char_boundary};

const CONTINUATION: &str = include_str!("../../assets/prompts/continuation.md");
/// Characters of the continuation message's fixed text, for estimates made before it is built.
pub(super) const CONTINUATION_CHARS: usize = CONTINUATION.len() + OPENING_FIRST.len();
/// How the continuation message opens, when the user's first message is sent again above it.
const OPENING_FIRST: &str = "The user's message above, as they wrote it, began this work. This message stands in for what followed it: the facts you must keep, the user's later instructions word for word, and a summary of the work so far.";
/// …and when the work it began is finished (and summarised).
const OPENING_FINISHED: &str = "This message stands in for it: the facts you must keep and a summary of the work so far, which is finished unless the summary says otherwise.";

/// Share of the carry budget kept for later corrections when the first message would take it
/// all: the goal may be long, but the latest word of the user must get through.
const LATER_SHARE: f64 = 0.3;

/// The first message within `room` characters: whole when it fits, else its start and its end
/// (where instructions usually are) with the middle clipped and said so.
fn clip_middle(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_string();
    }
    let note_room = 120;
    let keep = room.saturating_sub(note_room).max(200);
    let head = floor_char_boundary(text, keep * 2 / 3);
    let head = text[..head].rfind('\n').filter(|&n| n > head / 2).unwrap_or(head);
    let tail = floor_char_boundary(text, text.len() - keep / 3).max(head);
    let tail = text[tail..].find('\n').map(|n| tail + n + 1).filter(|&t| t < text.len()).unwrap_or(tail);
    format!(
        "{}\n[… {} characters of this message are not repeated here for space; the summary reflects them …]\n{}",
        text[..head].trim_end(),
        tail - head,
        text[tail..].trim_start()
    )
}

/// The user's words carried past compaction and trimming, within `budget` tokens: the first
/// message (the goal) whole when the budget allows, else its start and end; then the newest
/// later corrections, identical ones once. What does not fit is counted and said.
struct Carry {
    /// The first message as it is sent: `None` when it is sent exactly as stored.
    first_clipped: Option<String>,
    /// Later messages kept, oldest first.
    later: Vec<String>,
    omitted: usize,
}

fn carry(state: &ContextState, budget: u64, cpt: f64) -> Option<Carry> {
    let carried = &state.carried.messages;
    let (_, first) = carried.first()?;
    let budget_chars = (budget as f64 * cpt) as usize;
    // Identical messages once: the later copy says nothing new.
    let mut seen: HashSet<&str> = HashSet::from([first.trim()]);
    let later: Vec<&str> =
        carried[1..].iter().map(|(_, t)| t.trim()).filter(|t| !t.is_empty() && seen.insert(t)).collect();
    let later_total: usize = later.iter().map(|t| t.len()).sum();
    let later_room = later_total.min((budget_chars as f64 * LATER_SHARE) as usize);
    let first_room = budget_chars.saturating_sub(later_room).max(400);
    let first_clipped = (first.len() > first_room).then(|| clip_middle(first.trim(), first_room));
    let mut left = budget_chars.saturating_sub(first_clipped.as_ref().map_or(first.len(), |c| c.len()));
    let mut kept: Vec<String> = Vec::new();
    let mut omitted = 0;
    for text in later.iter().rev() {
        if text.len() <= left {
            left -= text.len();
            kept.push(text.to_string());
        } else {
            omitted += 1;
        }
    }
    kept.reverse();
    Some(Carry { first_clipped, later: kept, omitted })
}

fn later_instructions(carry: &Carry) -> String {
    if carry.later.is_empty() && carry.omitted == 0 {
        return String::new();
    }
    let quote = |t: &str| t.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n");
    let mut out = String::from("## The user's later instructions, verbatim (oldest first)\n\n");
    if carry.omitted > 0 {
        out.push_str(&format!(
            "[{} earlier correction(s) not repeated here for space; the summary reflects them]\n\n",
            carry.omitted
        ));
    }
    for text in &carry.later {
        out.push_str(&quote(text));
        out.push_str("\n\n");
    }
    out
}

/// The messages standing in for what was compacted or trimmed away, when anything was: the
/// user's first message (`first_sent`, exactly as it was sent, when it fits the carry budget)
/// and the continuation message with the segment outline frozen in the state.
pub fn continuation(
    state: &ContextState,
    protected: &str,
    carry_budget: u64,
    cpt: f64,
    first_sent: Option<&Arc<Message>>,
) -> Vec<Arc<Message>> {
    if state.summary.is_none() && state.carried.messages.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(2);
    let carried = carry(state, carry_budget, cpt);
    if let Some(c) = &carried {
        let first = match (&c.first_clipped, first_sent) {
            (None, Some(sent)) => sent.clone(),
            (None, None) => Arc::new(Message::user(state.carried.messages[0].1.clone())),
            (Some(clipped), _) => Arc::new(Message::user(clipped.clone())),
        };
        out.push(first);
    }
    let summary = match &state.summary {
        Some(s) => format!("## Summary of the work so far\n\n{}\n", s.text.trim()),
        None => {
            "## Summary of the work so far\n\nNo summary was written: earlier messages were dropped to make room.\n"
                .to_string()
        }
    };
    let protected = if protected.trim().is_empty() { String::new() } else { format!("{}\n", protected.trim()) };
    let opening = if carried.is_some() { OPENING_FIRST } else { OPENING_FINISHED };
    let text = CONTINUATION
        .replace("{opening}", opening)
        .replace("{protected}", &protected)
        .replace("{instructions}", &carried.as_ref().map(later_instructions).unwrap_or_default())
        .replace("{summary}", &summary)
        .replace("{outline}", &state.outline);
    out.push(Arc::new(Message::user(text)));
    out
}

/// Tokens the carried instructions may take: a tenth of the window, at most 8,000.
pub fn carry_budget(window: u64) -> u64 {
    (window / 10).min(8_000)
}

pub fn tokens_of(message: &Message, cpt: f64) -> u64 {
    estimate_text_tokens(message.char_len(), cpt) + super::estimate::MESSAGE_OVERHEAD_TOKENS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(messages: &[&str]) -> ContextState {
        let mut s = ContextState::default();
        s.carried.messages = messages.iter().enumerate().map(|(i, t)| (i as i64, t.to_string())).collect();
        s
    }

    fn texts(messages: &[Arc<Message>]) -> Vec<String> {
        messages.iter().map(|m| m.text()).collect()
    }

    #[test]
    fn a_long_first_message_is_sent_again_exactly_as_it_was() {
        let first: String = (0..220).map(|i| format!("requirement {i:03}: keep the public API stable\n")).collect();
        assert!(first.len() > 9_000 && first.len() <= 10_000);
        let sent = Arc::new(Message::user(first.clone()));
        let out = continuation(&state(&[&first]), "", carry_budget(32_000), 3.2, Some(&sent));
        assert!(Arc::ptr_eq(&out[0], &sent), "the very message sent first: the cached prefix holds");
        assert!(!out[1].text().contains("## The user's later instructions"), "nothing later to carry");
    }

    #[test]
    fn identical_messages_are_carried_once_and_the_latest_correction_survives_a_tight_budget() {
        let goal = "Port the parser to nom. ".repeat(200);
        let out = continuation(
            &state(&[&goal, "use tabs", "format error, try again", "format error, try again", "never touch vendor/"]),
            "",
            1_000,
            3.2,
            None,
        );
        let all = texts(&out).join("\n");
        assert_eq!(all.matches("format error, try again").count(), 1);
        assert!(all.contains("> never touch vendor/") && all.contains("> use tabs"), "{all}");
        assert!(out[0].text().starts_with("Port the parser to nom."));
        assert!(out[0].text().contains("characters of this message are not repeated here"), "clipped, and said");
        let squeezed =
            continuation(&state(&[&goal, &"a long correction ".repeat(40), "never touch vendor/"]), "", 400, 3.2, None);
        let all = texts(&squeezed).join("\n");
        assert!(all.contains("> never touch vendor/"), "the newest first: {all}");
        assert!(all.contains("1 earlier correction(s) not repeated here"), "{all}");
    }
}
