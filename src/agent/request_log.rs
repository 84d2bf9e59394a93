//! What each request carried and what happened before it, written beside its usage for the
//! session report: the pipeline's stages since the request before, the context's four parts
//! as the provider counted them, the window and thresholds, and the cache break it showed.

use crate::context::{ContextBudget, Stage, StageReport};
use crate::llm::{BreakKind, CacheBreak};
use crate::report::{BreakMark, Parts, StageMark};
use crate::store::RequestFigures;

#[derive(Default)]
pub(super) struct RequestLog {
    /// Stages since the last request was sent.
    marks: Vec<StageMark>,
}

impl RequestLog {
    /// A stage changed the history: it is marked at the next request. Truncation happens to
    /// each output as it comes and is listed with the outputs instead; a compaction is in the
    /// store's log of compactions, which places it even after the session's last request.
    pub(super) fn mark(&mut self, report: &StageReport) {
        match report.stage {
            Stage::Truncation | Stage::Compaction => {}
            Stage::Dedup | Stage::Prune | Stage::Trim => self.marks.push(StageMark::of(report)),
        }
    }

    /// A new session: what was marked belongs to the one left.
    pub(super) fn clear(&mut self) {
        self.marks.clear();
    }

    /// The figures of a request answered with `prompt_tokens`: its estimated parts (system
    /// and tools, memories, summary, messages) scaled to the provider's count.
    pub(super) fn figures(
        &mut self,
        budget: &ContextBudget,
        raw_parts: [u64; 4],
        prompt_tokens: u64,
        cache_break: Option<&CacheBreak>,
    ) -> RequestFigures {
        let parts = Parts::scaled_to(raw_parts, prompt_tokens);
        let marks = std::mem::take(&mut self.marks);
        let cache_break = cache_break.map(|b| BreakMark {
            kind: match b.kind {
                BreakKind::Expected => "expected",
                BreakKind::TtlExpiry => "ttl_expiry",
                BreakKind::Unexpected => "unexpected",
            }
            .to_string(),
            dropped_tokens: b.dropped_tokens,
            reason: match &b.first_difference {
                Some((i, label)) => format!("{} (first difference: block {i}, {label})", b.reason),
                None => b.reason.clone(),
            },
        });
        RequestFigures {
            window: budget.window,
            effective: budget.effective,
            warning: budget.warning,
            auto_compact: budget.auto_compact,
            blocking: budget.blocking,
            system_tokens: parts.system,
            memory_tokens: parts.memories,
            summary_tokens: parts.summary,
            message_tokens: parts.messages,
            stages: serde_json::to_string(&marks).unwrap_or_else(|_| "[]".into()),
            cache_break: cache_break.and_then(|b| serde_json::to_string(&b).ok()),
        }
    }
}
