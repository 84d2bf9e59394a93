//! Step 6, cut: each result as the model will see it — cut to the limits of one result, the
//! whole output saved (`saved_outputs`) — and, when the results of one assistant message
//! together pass the reply's cap, the largest cut further until they fit, as the pure plan of
//! `context::plan_turn_cut` says. The pipeline counts what was cut, and the user is told.

use super::{Calls, CutLimits, Host};
use crate::agent::events::AgentEvent;
use crate::context::{Stage, StageReport, TurnCut, estimate_text_tokens, plan_turn_cut};
use crate::conversation::FinishedCall;

impl Calls<'_> {
    /// What the model is sent of each of `records` (one group of the `calls` calls of a reply);
    /// `sent_so_far` counts what the reply's earlier groups took.
    pub(super) fn cut<H: Host>(
        &self,
        records: &[&FinishedCall],
        limits: CutLimits,
        sent_so_far: &mut usize,
        calls: usize,
        host: &mut H,
    ) -> Vec<String> {
        let cut_one = |r: &FinishedCall, each| self.saved.cut(&r.call_id, &r.tool, &r.arguments, &r.output, each);
        let mut sent: Vec<(String, bool)> = records.iter().map(|r| cut_one(r, &limits.each)).collect();
        let sizes: Vec<usize> = sent.iter().map(|(s, _)| s.len()).collect();
        if let Some(TurnCut { limits: reduced, again }) =
            plan_turn_cut(&sizes, *sent_so_far, limits.reply, calls, &limits.each)
        {
            for i in again {
                sent[i] = cut_one(records[i], &reduced);
            }
        }
        *sent_so_far += sent.iter().map(|(s, _)| s.len()).sum::<usize>();
        let cut = sent.iter().filter(|(_, truncated)| *truncated).count() as u64;
        if cut > 0 {
            host.cut(cut);
            let cpt = self.place.config().context.chars_per_token;
            let before: usize = records.iter().map(|r| r.output.len()).sum();
            let after: usize = sent.iter().map(|(s, _)| s.len()).sum();
            self.link.emit(AgentEvent::ContextStage(StageReport {
                stage: Stage::Truncation,
                count: cut,
                saved_tokens: estimate_text_tokens(before.saturating_sub(after), cpt),
                detail: format!(
                    "{cut} tool output{} cut to head and tail; the full text is saved and the model can read it",
                    if cut == 1 { "" } else { "s" }
                ),
            }));
        }
        sent.into_iter().map(|(s, _)| s).collect()
    }
}
