//! The context figures the front ends show: the status line's one number, the `/context`
//! breakdown and the headless counters — all read from the pipeline's calibrated estimate.

use super::events::{CacheReport, ContextBreakdown, ContextPart, ContextReport, ContextStatus};
use super::worker::Worker;
use crate::context::{ContextBudget, StageCounters, estimate_text_tokens};
use crate::conversation::Mode;

impl Worker {
    pub(super) fn budget(&self) -> ContextBudget {
        ContextBudget::new(self.model.context_window, &self.config.context)
    }

    /// Rough tokens of the system prompt and the tool schemas.
    fn overhead_parts(&self, mode: Mode) -> (u64, u64) {
        let cpt = self.config.context.chars_per_token;
        let (system, tools) = self.system_and_tools(mode);
        let system: usize = system.iter().map(|b| b.text.len()).sum();
        let tools: usize =
            tools.iter().map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len()).sum();
        (estimate_text_tokens(system, cpt), estimate_text_tokens(tools, cpt))
    }

    pub(super) fn overhead_tokens(&self, mode: Mode) -> u64 {
        let (system, tools) = self.overhead_parts(mode);
        system + tools
    }

    /// The one number.
    pub(super) fn estimated_tokens(&mut self) -> u64 {
        let overhead = self.overhead_tokens(self.current_mode());
        self.pipeline.estimate(overhead, self.model.context_window)
    }

    pub(super) fn context_status(&mut self) -> ContextStatus {
        let tokens = self.estimated_tokens();
        ContextStatus {
            tokens,
            window: self.model.context_window,
            level: self.budget().level(tokens),
            compacting: self.compaction.is_some(),
            cache_hit_rate: self
                .last_usage
                .filter(|u| self.cache_seen && u.prompt_tokens() > 0)
                .map(|u| u.cache_hit_rate()),
        }
    }

    /// Counters since `start`, with the window and the last request's size.
    pub(super) fn context_report(&self, start: &StageCounters) -> ContextReport {
        let c = self.pipeline.counters().since(start);
        ContextReport {
            window: self.model.context_window,
            last_request_tokens: self.last_usage.map(|u| u.prompt_tokens()).unwrap_or(0),
            truncations: c.truncations,
            dedup_replacements: c.dedup_replacements,
            pruned_results: c.pruned_results,
            compactions: c.compactions,
            trimmed_messages: c.trimmed_messages,
            compaction_failures: c.compaction_failures,
        }
    }

    /// The run's cache figures since `start`.
    pub(super) fn cache_report(&self, start: &crate::llm::CacheCounts) -> super::events::CacheStats {
        let c = self.cache.counts;
        super::events::CacheStats {
            read_share: 0.0,
            expected_breaks: c.expected_breaks - start.expected_breaks,
            ttl_breaks: c.ttl_breaks - start.ttl_breaks,
            unexpected_breaks: c.unexpected_breaks - start.unexpected_breaks,
        }
    }

    /// Parts scaled so they add up to the calibrated total.
    pub(super) fn describe_context(&mut self) -> ContextBreakdown {
        let (system, tools) = self.overhead_parts(self.current_mode());
        let (summary, messages) = self.pipeline.parts(self.model.context_window);
        let cpt = self.config.context.chars_per_token;
        let memories = self
            .pipeline
            .state()
            .prompt
            .memory_block
            .as_deref()
            .map(|m| estimate_text_tokens(m.len(), cpt))
            .unwrap_or(0);
        let mut parts = vec![
            ContextPart { name: "system prompt".into(), tokens: system.saturating_sub(memories) },
            ContextPart { name: "memories".into(), tokens: memories },
            ContextPart { name: "tools".into(), tokens: tools },
            ContextPart { name: "summary and carried instructions".into(), tokens: summary },
            ContextPart { name: "messages".into(), tokens: messages },
        ];
        let raw: u64 = parts.iter().map(|p| p.tokens).sum();
        let total = self.estimated_tokens();
        if raw > 0 && total != raw {
            let mut assigned = 0;
            let last = parts.len() - 1;
            for (i, part) in parts.iter_mut().enumerate() {
                part.tokens = if i == last { total.saturating_sub(assigned) } else { part.tokens * total / raw };
                assigned += part.tokens;
            }
        }
        let budget = self.budget();
        let session = self.store.session_usage(&self.session.id).ok();
        let state = self.pipeline.state();
        let mut segments: Vec<super::events::SegmentInfo> = self
            .store
            .segments(&self.session.id)
            .unwrap_or_default()
            .into_iter()
            .map(|r| super::events::SegmentInfo {
                level: r.level,
                first_seq: r.first_seq,
                last_seq: r.last_seq,
                tokens: r.tokens,
                summarized: r.summary.is_some(),
                shown: (r.first_seq..=r.last_seq).any(|s| state.is_visible(s)),
            })
            .collect();
        segments.sort_by(|a, b| b.level.cmp(&a.level).then(a.first_seq.cmp(&b.first_seq)));
        ContextBreakdown {
            parts,
            total,
            budget,
            level: budget.level(total),
            counters: self.context_report(&StageCounters::default()),
            cache: CacheReport {
                session_hit_rate: session.filter(|s| s.usage.prompt_tokens() > 0).map(|s| s.usage.cache_hit_rate()),
                last_request: self.last_usage,
                breaks: self.cache.breaks.iter().map(|b| b.describe()).collect(),
            },
            segments,
        }
    }
}
