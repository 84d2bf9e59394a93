//! The worker and a local server: the managed server's news before each request, exact token
//! counts from a llama-server's tokenizer for what the next request carries, and the server's
//! timings pricing the pipeline's rewrites.

use super::{Worker, prose};
use crate::agent::events::{ContextPart, NoticeLevel};
use crate::agent::request::RequestHead;
use crate::context::{SentView, exact_text_of};
use crate::llm::ChatResponse;

/// What the model is told when its tool call reached cairn as text.
const UNPARSED_TOOL_CALL: &str = include_str!("../../../assets/prompts/unparsed_tool_call.md");
/// Answers in a row that may hold an unparsed tool call before the turn fails.
pub(super) const MAX_UNPARSED_TOOL_CALLS: u32 = 2;
/// How the formats local servers parse open a tool call (Hermes and Qwen, Llama 3.x, Mistral,
/// Liquid, and functionary's `<function=`). A server whose parser gives up on a call passes it
/// on as text.
const TOOL_CALL_MARKERS: &[&str] =
    &["<tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<|tool_call_start|>", "<function="];

/// The marker of a tool call the server left in the answer's text, when tools were offered:
/// the model meant to call a tool and nothing ran.
pub(super) fn unparsed_tool_call(text: &str, tools_offered: bool) -> Option<&'static str> {
    if !tools_offered {
        return None;
    }
    let starts_a_line = |marker: &str| text.lines().any(|line| line.trim_start().starts_with(marker));
    TOOL_CALL_MARKERS.iter().copied().find(|m| starts_a_line(m))
}

/// The message that tells the model its call did not parse.
pub(super) fn unparsed_tool_call_reply(marker: &str) -> String {
    prose(UNPARSED_TOOL_CALL).replace("{marker}", marker)
}

impl Worker {
    /// Before a request: say what happened to the managed server, and count exactly what the
    /// request with `head` will carry that is not counted yet (bounded in time; what is not
    /// counted in time stays estimated), the head then weighed on the counts.
    pub(super) async fn count_exactly(&mut self, head: &mut RequestHead) {
        for notice in self.local.take_notices() {
            self.link.notice(NoticeLevel::Warning, notice);
        }
        let Some(tokenizer) = self.local.tokenizer() else { return };
        if !self.session.pipeline().exact_counts().is_on() {
            let Some(framing) = self.local.framing().await else { return };
            self.session.pipeline_mut().exact_counts_mut().set_framing(framing);
            self.session.pipeline_mut().recount();
            // The session's calibration was made on estimates: made again on the counts.
            self.local.recalibrate = true;
        }
        let mut texts = head.template_texts().to_vec();
        if let Some(memories) = self.session.pipeline().state().prompt.memory_block.clone() {
            texts.push(memories);
        }
        let window = self.model.window();
        texts.extend(self.session.pipeline_mut().view(window).iter().filter_map(|m| exact_text_of(m)));
        let exact = self.session.pipeline().exact_counts();
        texts.retain(|t| exact.needs(t));
        texts.sort_unstable();
        texts.dedup();
        let mut counted = false;
        if !texts.is_empty() {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            match tokenizer.count(&refs).await {
                Ok(counts) => {
                    let exact = self.session.pipeline_mut().exact_counts_mut();
                    for (text, count) in texts.iter().zip(counts) {
                        exact.insert(text, count);
                    }
                    self.session.pipeline_mut().recount();
                    counted = true;
                }
                Err(e) => {
                    tracing::info!(error = %e, texts = texts.len(), "exact token counts unavailable; estimating")
                }
            }
        }
        let cpt = self.place.config().context.chars_per_token;
        head.measure(self.session.pipeline().exact_counts(), cpt);
        if counted
            && std::mem::take(&mut self.local.recalibrate)
            && let Err(e) = self.calibrate_from_store(Some(head))
        {
            tracing::warn!(error = %e, "could not calibrate the estimate on the exact counts");
        }
    }

    /// After a response: the server's timings price what the pipeline rewrites.
    pub(super) fn learn_local_costs(&mut self, response: &ChatResponse) {
        // A death and restart the request rode through (its retries) is told now.
        for notice in self.local.take_notices() {
            self.link.notice(NoticeLevel::Warning, notice);
        }
        self.local.observe(response.timings.as_ref());
        if let Some(model) = self.local.cost_model() {
            self.session.pipeline_mut().set_cost_model(model);
        }
    }

    /// `/context`'s parts with the counts the tokenizer gave: the system prompt, memories,
    /// tools, the summary and the messages where every piece is counted; the chat template's
    /// own text and what the calibrated total holds beyond the parts as one estimated part.
    /// `None` when nothing is counted exactly.
    pub(super) fn exact_parts(&self, head: &RequestHead, view: &SentView, total: u64) -> Option<Vec<ContextPart>> {
        let (system, tools) = head.overhead().counted?;
        let pipeline = self.session.pipeline();
        let exact = pipeline.exact_counts();
        let memories = match &pipeline.state().prompt.memory_block {
            Some(block) => exact.content_tokens(block)?,
            None => 0,
        };
        let visible = pipeline.ledger().entries().iter().filter(|e| pipeline.state().is_visible(e.seq)).count();
        let view = &view.messages;
        let carried = view.len().saturating_sub(visible);
        let sum = |messages: &[std::sync::Arc<crate::conversation::Message>]| -> Option<u64> {
            messages.iter().map(|m| exact.content_of(m)).sum()
        };
        let summary = sum(&view[..carried])?;
        let messages = sum(&view[carried..])?;
        let part = |name: &str, tokens: u64, exact: bool| ContextPart { name: name.into(), tokens, exact };
        let counted = system + tools + summary + messages;
        Some(vec![
            part("system prompt", system.saturating_sub(memories), true),
            part("memories", memories, true),
            part("tools", tools, true),
            part("summary and carried instructions", summary, true),
            part("messages", messages, true),
            part("chat template and framing", total.saturating_sub(counted), false),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_left_in_the_text_is_seen_only_when_tools_were_offered() {
        assert_eq!(unparsed_tool_call("<tool_call>{\"name\": \"glob\", oops", true), Some("<tool_call>"));
        assert_eq!(unparsed_tool_call("Let me look.\n  [TOOL_CALLS][{\"name\"", true), Some("[TOOL_CALLS]"));
        assert_eq!(unparsed_tool_call("<tool_call>{", false), None, "ask mode offers no tools");
        assert_eq!(unparsed_tool_call("Qwen writes `<tool_call>` tags around its calls.", true), None, "mid-line");
        let reply = unparsed_tool_call_reply("<tool_call>");
        assert!(reply.contains("(<tool_call>)") && reply.contains("valid JSON") && !reply.contains('\n'), "{reply}");
    }
}
