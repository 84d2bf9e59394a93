//! The transcript a summariser reads when it cannot read the conversation in place (a
//! `[compaction] model` of its own, or a conversation its window cannot hold): each message as
//! text, tool results cut to their most telling lines when they must be, in chunks oldest
//! first, each updating the running summary, halving a chunk the provider still finds too long.

use std::sync::Arc;

use super::compact::{COMPACTION_PROMPT, CompactionPlan, Summarizer, SummaryError};
use super::estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_text_tokens};
use super::redact::redact_secrets;
use super::reply::{CompactionReply, split_reply, stretch_marker};
use super::salient::excerpt;
use crate::conversation::{Block, Message, Role, floor_char_boundary};

/// Longest stretch of one tool call's arguments put in the transcript.
const ARGUMENT_EXCERPT_CHARS: usize = 400;
/// A result is never cut below this many characters for the summariser: under it, more calls
/// (chunks) are cheaper in facts lost than a shorter excerpt.
const MIN_RESULT_CHARS: usize = 600;
/// Share of the summariser's input budget actually filled: the rough estimate can be low.
const SAFETY: f64 = 0.8;

/// One message as transcript text for the summariser, secrets redacted; tool results longer
/// than `result_cap` characters keep their most telling lines (errors, paths, identifiers,
/// numbers) rather than a blind head and tail.
pub fn transcript_piece_within(message: &Message, result_cap: usize) -> String {
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
                out.push_str(&format!("→ called {} {}\n", call.name, excerpt(&call.arguments, ARGUMENT_EXCERPT_CHARS)));
            }
            Block::ToolResult(result) => {
                let status = if result.is_error { " (failed)" } else { "" };
                out.push_str(&format!(
                    "RESULT of {}{status}:\n{}\n",
                    result.name,
                    excerpt(result.content.trim_end(), result_cap).trim_end()
                ));
            }
            // The model's scratch work is not what happened; an image is named, not sent.
            Block::Thinking(_) => {}
            Block::Image(image) => out.push_str(&format!("[image {}]\n", image.describe())),
        }
    }
    redact_secrets(&out).into_owned()
}

/// One message as transcript text, each tool result cut to its most telling few thousand
/// characters.
pub fn transcript_piece(message: &Message) -> String {
    transcript_piece_within(message, 6_000)
}

/// The largest per-result length (at least [`MIN_RESULT_CHARS`]) at which the transcript of
/// `messages` fits `budget_chars`; `usize::MAX` when everything fits whole.
fn result_cap(messages: &[Arc<Message>], budget_chars: usize) -> usize {
    let mut results: Vec<usize> = Vec::new();
    let mut other = 0usize;
    for m in messages {
        for b in &m.content {
            match b {
                Block::ToolResult(r) => {
                    results.push(r.content.len());
                    other += r.name.len() + 20;
                }
                Block::Text { text } => other += text.len() + 1,
                Block::ToolCall(c) => other += c.name.len() + c.arguments.len().min(ARGUMENT_EXCERPT_CHARS) + 12,
                // As `transcript_piece_within` writes them: thinking left out, an image named.
                Block::Thinking(_) => {}
                Block::Image(image) => other += image.describe().len() + 10,
            }
        }
        other += 12;
    }
    let whole: usize = results.iter().sum();
    if other + whole <= budget_chars {
        return usize::MAX;
    }
    // Water-filling: the cap c with Σ min(len, c) ≤ what is left.
    let left = budget_chars.saturating_sub(other);
    results.sort_unstable();
    let mut used = 0usize;
    for (k, &len) in results.iter().enumerate() {
        let c = left.saturating_sub(used) / (results.len() - k);
        if len > c {
            return c.max(MIN_RESULT_CHARS);
        }
        used += len;
    }
    usize::MAX
}

fn request_text(
    previous: Option<&str>,
    transcript: &str,
    budget: u32,
    part: Option<(usize, usize)>,
    marked: bool,
) -> String {
    let mut part_note = match part {
        Some((n, of)) => format!(" This is part {n} of {of} of the messages, in order."),
        None => String::new(),
    };
    if marked {
        part_note.push_str(" The messages are marked in stretches: end with the Stretches section, one line for each.");
    }
    match previous {
        Some(summary) => format!(
            "Here is the summary so far:\n\n<summary>\n{summary}\n</summary>\n\nUpdate it with the messages below.{part_note} Keep every section; move items from In Progress to Done when they were finished; keep everything still true, including all constraints and corrections; drop nothing silently. Write the whole updated summary, at most about {budget} tokens.\n\n<messages>\n{transcript}</messages>"
        ),
        None => format!(
            "Summarise the messages below.{part_note} At most about {budget} tokens.\n\n<messages>\n{transcript}</messages>"
        ),
    }
}

/// What to ask when the first answer was cut at the length limit.
fn shorter(request: &str, budget: u32) -> String {
    format!(
        "{request}\n\nYour previous answer was cut off at the length limit. Write the whole summary again, more briefly: at most about {budget} tokens."
    )
}

/// Summarise `plan.messages` (updating `plan.previous_summary`) from a transcript, in as many
/// calls as the summariser's window needs: `out_budget` tokens asked for, `max_tokens` of room.
/// Tool results go whole when they fit what one call may read (the summariser's window, and
/// `plan.input_ratio` times the summary's length); else each keeps its most telling lines. The
/// reply's stretch lines and durable memories come back split from the summary.
/// `progress(done, total)` is called after each call.
pub(super) async fn summarize_transcript(
    plan: &CompactionPlan,
    summarizer: &dyn Summarizer,
    chars_per_token: f64,
    progress: &(dyn Fn(u32, u32) + Send + Sync),
    out_budget: u32,
    max_tokens: u32,
) -> Result<CompactionReply, String> {
    let window = summarizer.window();
    let tokens = |s: &str| estimate_text_tokens(s.len(), chars_per_token);
    // Room for the prompt, the running summary going in (whichever is larger: the previous one
    // or what this call may write) and the summary coming out.
    let running = plan.previous_summary.as_deref().map(tokens).unwrap_or(0).max(max_tokens as u64);
    let fixed = tokens(COMPACTION_PROMPT) + running + max_tokens as u64 + 3 * MESSAGE_OVERHEAD_TOKENS + 200;
    if fixed >= window {
        return Err(format!(
            "the summariser's window ({window} tokens) cannot hold the compaction prompt and a summary"
        ));
    }
    let input_budget = ((window - fixed) as f64 * SAFETY) as u64;
    let wanted = ((out_budget as f64 * plan.input_ratio) as u64).clamp(1, input_budget.max(1));
    let cap = result_cap(&plan.messages, (wanted as f64 * chars_per_token) as usize);
    let pieces: Vec<String> = plan
        .messages
        .iter()
        .zip(plan.seqs.iter().chain(std::iter::repeat(&i64::MIN)))
        .map(|(m, seq)| {
            let piece = transcript_piece_within(m, cap);
            match plan.stretches.iter().find(|(first, _)| first == seq) {
                Some(&(first, last)) => format!("{}{piece}", stretch_marker(first, last)),
                None => piece,
            }
        })
        .collect();
    // A message too long for one call (an answer of a hundred thousand characters) keeps its
    // telling lines, as a long result does, when that lets the transcript go in one call.
    let pieces = fit_pieces(pieces, (input_budget as f64 * chars_per_token) as usize);
    let mut chunks = chunk(&pieces, input_budget, chars_per_token);
    let mut summary = plan.previous_summary.clone();
    let mut stretches = Vec::new();
    let mut memories = Vec::new();
    let mut done = 0u32;
    let mut i = 0;
    while i < chunks.len() {
        let total = chunks.len();
        let part = (total > 1).then_some((i + 1, total));
        let marked = plan.stretches.iter().any(|&(a, b)| chunks[i].contains(&stretch_marker(a, b)));
        let request = request_text(summary.as_deref(), &chunks[i], out_budget, part, marked);
        let mut answer = summarizer.summarize(COMPACTION_PROMPT, &request, max_tokens).await;
        if matches!(answer, Err(SummaryError::Cut(_))) {
            // Never store a cut summary: ask once more for a shorter one, with more room.
            let again = shorter(&request, out_budget * 3 / 4);
            let room =
                window.saturating_sub(tokens(&again) + tokens(COMPACTION_PROMPT) + 200).min(2 * max_tokens as u64);
            answer = summarizer.summarize(COMPACTION_PROMPT, &again, (room as u32).max(max_tokens)).await;
        }
        match answer {
            Ok(text) if !split_reply(&text).summary.is_empty() => {
                let reply = split_reply(&redact_secrets(text.trim()));
                summary = Some(reply.summary);
                stretches.extend(reply.stretches);
                memories.extend(reply.memories);
                done += 1;
                progress(done, total as u32);
                i += 1;
            }
            Ok(_) => return Err("the summariser returned an empty summary".into()),
            Err(SummaryError::Cut(_)) => {
                return Err("the summariser's answer was cut off at the length limit twice; nothing was stored".into());
            }
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
    let summary = summary.ok_or_else(|| "nothing to summarise".to_string())?;
    // Only lines for the stretches asked about, one each.
    stretches.retain(|(a, b, _)| plan.stretches.contains(&(*a, *b)));
    stretches.dedup_by_key(|(a, b, _)| (*a, *b));
    Ok(CompactionReply { summary, stretches, memories })
}

/// `pieces` with the longest cut to their telling lines (the same length for all of them, at
/// least [`MIN_RESULT_CHARS`]) so that together they fit `budget_chars`; as they are when they
/// already do.
fn fit_pieces(pieces: Vec<String>, budget_chars: usize) -> Vec<String> {
    let total: usize = pieces.iter().map(|p| p.len() + 1).sum();
    if total <= budget_chars {
        return pieces;
    }
    let mut lengths: Vec<usize> = pieces.iter().map(|p| p.len() + 1).collect();
    lengths.sort_unstable();
    let mut used = 0usize;
    let mut cap = usize::MAX;
    for (k, &len) in lengths.iter().enumerate() {
        let c = budget_chars.saturating_sub(used) / (lengths.len() - k);
        if len > c {
            cap = c.max(MIN_RESULT_CHARS);
            break;
        }
        used += len;
    }
    pieces.into_iter().map(|p| if p.len() + 1 > cap { excerpt(&p, cap.saturating_sub(1)) } else { p }).collect()
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
mod tests {
    use super::*;

    #[test]
    fn the_longest_pieces_keep_their_telling_lines_so_all_fit_one_call() {
        let reasoning: String = (0..7_500).map(|n| format!("{n}: the dtype of column_{n} is kept\n")).collect();
        let huge = format!("ASSISTANT:\nTHOUGHT: the plan begins\n{reasoning}and the plan ends\n");
        let small: Vec<String> = (0..40).map(|i| format!("ASSISTANT:\nstep {i}\n{}\n", "o".repeat(900))).collect();
        let mut pieces = small.clone();
        pieces.insert(20, huge.clone());
        let fitted = fit_pieces(pieces, 60_000);
        assert!(fitted.iter().map(|p| p.len() + 1).sum::<usize>() <= 60_000);
        assert_eq!(fitted.len(), 41);
        assert!(fitted[20].len() < huge.len() / 5);
        assert!(fitted[20].contains("THOUGHT: the plan begins") && fitted[20].contains("and the plan ends"));
        assert_eq!(fitted[..20], small[..20], "the short ones stay whole");
        // What fits already stays as it is.
        assert_eq!(fit_pieces(small.clone(), 60_000), small);
    }
}
