//! The context figures the front ends show: the status line's one number, the `/context`
//! breakdown and the headless counters — all read from the pipeline's calibrated estimate.

use super::Worker;
use crate::agent::events::{CacheReport, ContextBreakdown, ContextPart, ContextReport, ContextStatus};
use crate::context::{ContextBudget, StageCounters, estimate_text_tokens};
use crate::conversation::Mode;

impl Worker {
    pub(super) fn budget(&self) -> ContextBudget {
        ContextBudget::new(self.model.window(), &self.place.config().context)
    }

    /// Rough tokens of the system prompt and the tool schemas.
    fn overhead_parts(&self, mode: Mode) -> (u64, u64) {
        let cpt = self.place.config().context.chars_per_token;
        let (system, tools) = self.system_and_tools();
        if let Some((system, tools)) = self.counted_overhead(mode, &system, &tools) {
            // The system prompt is one message of the template.
            return (system + self.session.pipeline().exact_counts().framing(), tools);
        }
        // The task list and the mode line travel with every request, after the cached part.
        let tail = self.request_tail(mode).map_or(0, |t| t.len());
        let system: usize = system.iter().map(|b| b.text.len()).sum::<usize>() + tail;
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
        let overhead = self.overhead_tokens(self.link.mode());
        self.session.pipeline_mut().estimate(overhead, self.model.window())
    }

    pub(super) fn context_status(&mut self) -> ContextStatus {
        let tokens = self.estimated_tokens();
        ContextStatus {
            tokens,
            window: self.model.window(),
            level: self.budget().level(tokens),
            compacting: self.background.compacting(),
            cache_hit_rate: self.cache.hit_rate(),
            cost_usd: self.spend.session(),
        }
    }

    /// Counters since `start`, with the window and the last request's size.
    pub(super) fn context_report(&self, start: &StageCounters) -> ContextReport {
        let c = self.session.pipeline().counters().since(start);
        ContextReport {
            window: self.model.window(),
            last_request_tokens: self.cache.last_usage().map(|u| u.prompt_tokens()).unwrap_or(0),
            truncations: c.truncations,
            dedup_replacements: c.dedup_replacements,
            pruned_results: c.pruned_results,
            compactions: c.compactions,
            trimmed_messages: c.trimmed_messages,
            compaction_failures: c.compaction_failures,
        }
    }

    /// The `/context` breakdown: the parts as the model's tokenizer counted them when it can,
    /// else estimated parts scaled to add up to the calibrated total.
    pub(super) fn describe_context(&mut self) -> ContextBreakdown {
        let total = self.estimated_tokens();
        let parts = match self.exact_parts(self.link.mode(), total) {
            Some(parts) => parts,
            None => self.estimated_parts(total),
        };
        self.context_breakdown(parts, total)
    }

    /// What the next request carries, estimated in four parts: the system prompt (without
    /// memories) and tools, the memory block, the summary and carried words, the messages.
    pub(super) fn request_parts(&mut self) -> [u64; 4] {
        let (system, tools) = self.overhead_parts(self.link.mode());
        let (summary, messages) = self.session.pipeline_mut().parts(self.model.window());
        let memories = self.memory_tokens();
        [system.saturating_sub(memories) + tools, memories, summary, messages]
    }

    fn memory_tokens(&self) -> u64 {
        let cpt = self.place.config().context.chars_per_token;
        self.session
            .pipeline()
            .state()
            .prompt
            .memory_block
            .as_deref()
            .map(|m| estimate_text_tokens(m.len(), cpt))
            .unwrap_or(0)
    }

    /// The parts as estimated, scaled to add up to the calibrated total.
    fn estimated_parts(&mut self, total: u64) -> Vec<ContextPart> {
        let (system, tools) = self.overhead_parts(self.link.mode());
        let (summary, messages) = self.session.pipeline_mut().parts(self.model.window());
        let memories = self.memory_tokens();
        let part = |name: &str, tokens: u64| ContextPart { name: name.into(), tokens, exact: false };
        let mut parts = vec![
            part("system prompt", system.saturating_sub(memories)),
            part("memories", memories),
            part("tools", tools),
            part("summary and carried instructions", summary),
            part("messages", messages),
        ];
        let raw: u64 = parts.iter().map(|p| p.tokens).sum();
        if raw > 0 && total != raw {
            let mut assigned = 0;
            let last = parts.len() - 1;
            for (i, part) in parts.iter_mut().enumerate() {
                part.tokens = if i == last { total.saturating_sub(assigned) } else { part.tokens * total / raw };
                assigned += part.tokens;
            }
        }
        parts
    }

    fn context_breakdown(&mut self, parts: Vec<ContextPart>, total: u64) -> ContextBreakdown {
        let budget = self.budget();
        let session = self.place.store().session_usage(self.session.id()).ok();
        let state = self.session.pipeline().state();
        let mut segments: Vec<crate::agent::events::SegmentInfo> = self
            .place
            .store()
            .segments(self.session.id())
            .unwrap_or_default()
            .into_iter()
            .map(|r| crate::agent::events::SegmentInfo {
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
                last_request: self.cache.last_usage(),
                breaks: self.cache.breaks(),
                keep_alive: crate::agent::events::KeepAliveReport {
                    pings: self.keep_warm.sent,
                    cost_usd: self.keep_warm.cost,
                    last: self.keep_warm.last.clone(),
                },
            },
            segments,
            cost: crate::agent::events::CostReport {
                session_usd: self.spend.session(),
                last_request_usd: self.spend.last_request(),
            },
            instruction_files: crate::agent::InstructionFilesReport::of(&self.place.instruction_scan()),
        }
    }
}
