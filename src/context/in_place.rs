//! A compaction that reads the provider's cache (CONTEXT.md §5): the summary call sends the
//! conversation exactly as the request before it did — the same system prompt, tools and
//! messages, breakpoints included — and the instruction last, after every breakpoint, so what
//! it reads is billed as cache reads, as Claude Code's and Codex's compactions are. What the
//! conversation does not show (messages a trim dropped before a summary covered them) travels
//! in the instruction. One reply carries the summary, a line per hidden segment and the
//! memories worth keeping.

use super::compact::{COMPACTION_PROMPT, CompactionPlan, Conversation, Summarizer, SummaryError, opening};
use super::estimate::{MESSAGE_OVERHEAD_TOKENS, estimate_text_tokens};
use super::redact::redact_secrets;
use super::reply::{CompactionReply, split_reply};
use super::salient::excerpt;

const IN_PLACE_PROMPT: &str = include_str!("../../assets/prompts/compaction_in_place.md");
/// A message the view no longer shows travels in the instruction at most this long (its
/// telling lines, as a long tool result's transcript): one huge message must not push the
/// call past the window and onto the transcript path, in chunks.
const HIDDEN_PIECE_CHARS: usize = 6_000;

/// Why an in-place summary was not written.
pub(super) enum Outcome {
    Done(CompactionReply),
    /// The conversation and the reply would not fit the summariser's window, or it answered
    /// without a summary: the transcript path summarises instead.
    Fallback,
    Failed(String),
}

/// The instruction sent after the conversation: what to summarise (everything before the tail
/// the conversation keeps), what the summary updates, the messages the conversation no longer
/// shows, the stretches to give a line each, and the length.
pub fn instruction(plan: &CompactionPlan, tail_messages: usize, budget: u32) -> String {
    let mut scope = String::new();
    if plan.previous_summary.is_some() {
        scope.push_str(
            "The conversation above opens with a summary of earlier work (under “Summary of the work so far”). Write the whole summary again, updated: keep every section, move items from In Progress to Done when they were finished, keep everything still true, including all constraints and corrections; drop nothing silently.\n\n",
        );
    }
    if plan.finished {
        scope.push_str(&format!(
            "The last message above, {}, starts new work: it stays as it is, after your summary. Everything before it is finished: summarise it briefly, for reference — what was asked, what was done and found, with the exact names, paths and values worth knowing later. Its In Progress and Next Steps are \"none\" unless something was left unfinished.\n\n",
            plan.tail_opening
        ));
    } else if tail_messages == 0 {
        scope.push_str(&format!(
            "Everything above is summarised: the conversation goes on after it with {}, which stays as it is, after your summary. Let In Progress and Next Steps say where the work stands at the end.\n\n",
            plan.tail_opening
        ));
    } else {
        let n = tail_messages;
        scope.push_str(&format!(
            "The last {n} message{} above, from {}, stay as they are, after your summary: summarise everything before them, and let In Progress and Next Steps say where the work stands at the end.\n\n",
            if n == 1 { "" } else { "s" },
            plan.tail_opening
        ));
    }
    if !plan.hidden.is_empty() {
        let transcript: String = plan
            .messages
            .iter()
            .zip(&plan.seqs)
            .filter(|(_, seq)| plan.hidden.contains(seq))
            .map(|(m, _)| excerpt(&super::transcript::transcript_piece(m), HIDDEN_PIECE_CHARS))
            .collect::<Vec<_>>()
            .join("\n");
        scope.push_str(&format!(
            "These earlier messages are no longer shown above (they were dropped to make room); summarise them too, in order:\n\n<messages>\n{transcript}</messages>\n\n"
        ));
    }
    if !plan.stretches.is_empty() {
        scope.push_str(
            "End with the section `## Stretches`: one line for each of these stretches of the conversation, `- FIRST–LAST: ` then one or two sentences on what happened in it — what was asked, done, found or decided — with exact names:\n",
        );
        for &(first, last) in &plan.stretches {
            let opening =
                plan.seqs.iter().position(|&s| s == first).map(|i| opening(&plan.messages[i])).unwrap_or_default();
            scope.push_str(&format!("- {first}–{last}: from {opening}\n"));
        }
        scope.push('\n');
    }
    scope.push_str(&format!("Write at most about {budget} tokens in all, every section included."));
    IN_PLACE_PROMPT.replace("{compaction}", COMPACTION_PROMPT.trim_end()).replace("{scope}", scope.trim_end())
}

/// One call reading `conversation` in place; `max_tokens` has room beyond `budget`. A reply cut
/// at the length limit is asked for again once, shorter; a call the summariser's window cannot
/// hold, or a reply with no summary in it, falls back to the transcript path.
pub(super) async fn summarize(
    plan: &CompactionPlan,
    conversation: &Conversation,
    summarizer: &dyn Summarizer,
    budget: u32,
    max_tokens: u32,
    chars_per_token: f64,
) -> Outcome {
    // The conversation must reach the tail, or stop just before it: what comes before the
    // tail is what is summarised.
    let Some(tail_at) = plan.reads_in(&conversation.messages) else { return Outcome::Fallback };
    let ask = instruction(plan, conversation.messages.len() - tail_at, budget);
    let need = conversation.tokens
        + estimate_text_tokens(ask.len(), chars_per_token)
        + MESSAGE_OVERHEAD_TOKENS
        + max_tokens as u64;
    if need > summarizer.window() {
        return Outcome::Fallback;
    }
    let mut answer = summarizer.summarize_conversation(&conversation.messages, &ask, max_tokens).await;
    if matches!(answer, Err(SummaryError::Cut(_))) {
        let again = format!(
            "{ask}\n\nYour previous answer was cut off at the length limit. Write the whole summary again, more briefly: at most about {} tokens.",
            budget * 3 / 4
        );
        let room = summarizer.window().saturating_sub(need).min(max_tokens as u64) as u32 + max_tokens;
        answer = summarizer.summarize_conversation(&conversation.messages, &again, room).await;
    }
    match answer {
        Ok(text) => {
            let reply = split_reply(&redact_secrets(text.trim()));
            if reply.summary.is_empty() { Outcome::Fallback } else { Outcome::Done(reply) }
        }
        Err(SummaryError::TooLong) => Outcome::Fallback,
        Err(SummaryError::Cut(_)) => {
            Outcome::Failed("the summariser's answer was cut off at the length limit twice; nothing was stored".into())
        }
        Err(SummaryError::Failed(e)) => Outcome::Failed(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::conversation::Message;

    #[test]
    fn a_huge_message_the_view_no_longer_shows_travels_cut_to_its_telling_lines() {
        let huge =
            format!("THOUGHT: start of the plan\n{}the end of the plan", "a long line of reasoning\n".repeat(8_000));
        let plan = CompactionPlan {
            previous_summary: None,
            generation: 1,
            through_seq: 3,
            messages: vec![Arc::new(Message::user("fix it")), Arc::new(Message::assistant(huge.clone()))],
            seqs: vec![1, 2],
            stretches: Vec::new(),
            carried: Vec::new(),
            summarised_tokens: 60_000,
            input_ratio: 4.0,
            summary_share: 0.035,
            finished: false,
            conversation: None,
            hidden: vec![2],
            tail_first: Arc::new(Message::user("next")),
            tail_opening: "the user's message that begins “next”".into(),
        };
        let ask = instruction(&plan, 2, 1_000);
        assert!(ask.len() < huge.len() / 10, "{} characters", ask.len());
        assert!(ask.contains("THOUGHT: start of the plan") && ask.contains("the end of the plan"));
    }
}
