//! The context figures the front ends show: the status line's one number, the `/context`
//! breakdown and the headless counters — all read from the pipeline's calibrated estimate.

use super::Worker;
use crate::agent::events::{CacheReport, ContextBreakdown, ContextPart, ContextReport, ContextStatus};
use crate::agent::request::{Overhead, PreparedRequest, RequestHead};
use crate::context::{ContextBudget, SentView, StageCounters, estimate_text_tokens};

impl Worker {
    pub(super) fn budget(&self) -> ContextBudget {
        ContextBudget::new(self.model.window(), &self.place.config().context)
    }

    /// Tokens of the system prompt and tools of a request sent now, in the current mode, when no
    /// request is being prepared (a session loaded, a mode or model switched, a compaction run
    /// by hand).
    pub(super) fn overhead_now(&self) -> u64 {
        self.head(self.link.mode()).overhead().total()
    }

    /// The status line's figures, for a request whose system prompt and tools take `overhead`.
    pub(super) fn context_status(&mut self, overhead: u64) -> ContextStatus {
        let tokens = self.session.pipeline_mut().estimate(overhead, self.model.window());
        self.status_of(tokens)
    }

    /// The status line's figures for an estimate of `tokens`.
    pub(super) fn status_of(&self, tokens: u64) -> ContextStatus {
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

    /// The `/context` breakdown of a request with `head` (its counts made): the parts as the
    /// model's tokenizer counted them when it can, else estimated parts scaled to add up to the
    /// calibrated total.
    pub(super) fn describe_context(&mut self, head: &RequestHead) -> ContextBreakdown {
        let view = self.session.pipeline_mut().for_request(head.overhead().total(), self.model.window());
        let total = view.estimate;
        let parts = match self.exact_parts(head, &view, total) {
            Some(parts) => parts,
            None => self.estimated_parts(head, &view, total),
        };
        self.context_breakdown(parts, total, head)
    }

    /// What `prepared` carries, estimated in four parts (for the session report): the system
    /// prompt (without memories) and tools, the memory block, the summary and carried words,
    /// the messages.
    pub(super) fn request_parts(&self, prepared: &PreparedRequest) -> [u64; 4] {
        let Overhead { system, tools, .. } = prepared.overhead;
        let memories = self.memory_tokens();
        [system.saturating_sub(memories) + tools, memories, prepared.carried_tokens, prepared.visible_tokens]
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
    fn estimated_parts(&self, head: &RequestHead, view: &SentView, total: u64) -> Vec<ContextPart> {
        let Overhead { system, tools, .. } = *head.overhead();
        let memories = self.memory_tokens();
        let part = |name: &str, tokens: u64| ContextPart { name: name.into(), tokens, exact: false };
        let mut parts = vec![
            part("system prompt", system.saturating_sub(memories)),
            part("memories", memories),
            part("tools", tools),
            part("summary and carried instructions", view.carried_tokens),
            part("messages", view.visible_tokens),
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

    fn context_breakdown(&mut self, parts: Vec<ContextPart>, total: u64, head: &RequestHead) -> ContextBreakdown {
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
            instruction_files: crate::agent::InstructionFilesReport::of(head.instructions()),
        }
    }
}
