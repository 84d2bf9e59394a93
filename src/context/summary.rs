//! A compaction's summary, by one call reading the conversation in place when the summariser
//! can (`in_place`), else from a transcript (`transcript`).

use super::compact::{CompactionPlan, Summarizer, plan_budget};
use super::in_place;
use super::reply::CompactionReply;
use super::transcript::summarize_transcript;

/// The summary call may write this share more than the length it is asked for, so a summary
/// that runs a little long ends on its own instead of being cut at `max_tokens`.
const SUMMARY_ROOM: f64 = 0.5;

/// Summarise `plan.messages` (updating `plan.previous_summary`): the summary alone. See
/// [`summarize_reply`], which also gives the stretch lines and memories the reply carried.
pub async fn summarize(
    plan: &CompactionPlan,
    summarizer: &dyn Summarizer,
    chars_per_token: f64,
    progress: &(dyn Fn(u32, u32) + Send + Sync),
) -> Result<String, String> {
    summarize_reply(plan, summarizer, chars_per_token, progress).await.map(|r| r.summary)
}

/// Summarise `plan.messages` (updating `plan.previous_summary`): in place, reading the
/// conversation `plan` carries, when the summariser can and it fits; else from a transcript,
/// in as many calls as the summariser's window needs. The reply's stretch lines and durable
/// memories come back split from the summary. `progress(done, total)` is called after each
/// call.
pub async fn summarize_reply(
    plan: &CompactionPlan,
    summarizer: &dyn Summarizer,
    chars_per_token: f64,
    progress: &(dyn Fn(u32, u32) + Send + Sync),
) -> Result<CompactionReply, String> {
    let window = summarizer.window();
    let out_budget = plan_budget(plan, window);
    let max_tokens = out_budget + (out_budget as f64 * SUMMARY_ROOM) as u32;
    if summarizer.in_place()
        && let Some(conversation) = &plan.conversation
    {
        match in_place::summarize(plan, conversation, summarizer, out_budget, max_tokens, chars_per_token).await {
            in_place::Outcome::Done(mut reply) => {
                progress(1, 1);
                reply.stretches.retain(|(a, b, _)| plan.stretches.contains(&(*a, *b)));
                reply.stretches.dedup_by_key(|(a, b, _)| (*a, *b));
                return Ok(reply);
            }
            in_place::Outcome::Failed(e) => return Err(e),
            // Too big for the summariser's window, or no summary in the reply: the transcript.
            in_place::Outcome::Fallback => {}
        }
    }
    summarize_transcript(plan, summarizer, chars_per_token, progress, out_budget, max_tokens).await
}
