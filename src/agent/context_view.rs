//! The context figures the front ends show: the status line's one number and the `/context`
//! breakdown. Both read the same calibrated estimate: the provider's last reported prompt
//! tokens plus a rough estimate of what was appended since.

use super::events::{CacheReport, ContextBreakdown, ContextPart, ContextStatus};
use super::worker::Worker;
use crate::context::{ContextBudget, estimate_message_tokens, estimate_text_tokens};

impl Worker {
    pub(super) fn budget(&self) -> ContextBudget {
        ContextBudget::new(self.model.context_window, &self.config.context)
    }

    /// Rough token counts of the next request's parts: system prompt, tool schemas, messages.
    fn raw_parts(&self) -> Vec<ContextPart> {
        let cpt = self.config.context.chars_per_token;
        let request = self.build_request(self.current_mode());
        let system: usize = request.system.iter().map(|b| b.text.len()).sum();
        let tools: usize =
            request.tools.iter().map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len()).sum();
        let messages: u64 = request.messages.iter().map(|m| estimate_message_tokens(m, cpt)).sum();
        vec![
            ContextPart { name: "system prompt".into(), tokens: estimate_text_tokens(system, cpt) },
            ContextPart { name: "tools".into(), tokens: estimate_text_tokens(tools, cpt) },
            ContextPart { name: "messages".into(), tokens: messages },
        ]
    }

    /// The one number: calibrated on the last reported usage when there is one.
    pub(super) fn estimated_tokens(&self) -> u64 {
        let cpt = self.config.context.chars_per_token;
        match self.last_usage {
            Some(usage) => {
                let since: u64 = self.history[self.usage_covers.min(self.history.len())..]
                    .iter()
                    .map(|m| estimate_message_tokens(m, cpt))
                    .sum();
                usage.prompt_tokens() + since
            }
            None => self.raw_parts().iter().map(|p| p.tokens).sum(),
        }
    }

    pub(super) fn context_status(&self) -> ContextStatus {
        let tokens = self.estimated_tokens();
        ContextStatus {
            tokens,
            window: self.model.context_window,
            level: self.budget().level(tokens),
            compacting: false,
            cache_hit_rate: self.last_usage.filter(|u| u.prompt_tokens() > 0).map(|u| u.cache_hit_rate()),
        }
    }

    /// Parts scaled so they add up to the calibrated total.
    pub(super) fn describe_context(&self) -> ContextBreakdown {
        let mut parts = self.raw_parts();
        let raw: u64 = parts.iter().map(|p| p.tokens).sum();
        let total = self.estimated_tokens();
        if raw > 0 && total != raw {
            let mut assigned = 0;
            let last = parts.len() - 1;
            for (i, part) in parts.iter_mut().enumerate() {
                part.tokens = if i == last { total - assigned } else { part.tokens * total / raw };
                assigned += part.tokens;
            }
        }
        let budget = self.budget();
        let session = self.store.session_usage(&self.session.id).ok();
        ContextBreakdown {
            parts,
            total,
            budget,
            level: budget.level(total),
            counters: self.context_report(),
            cache: CacheReport {
                session_hit_rate: session.filter(|s| s.usage.prompt_tokens() > 0).map(|s| s.usage.cache_hit_rate()),
                last_request: self.last_usage,
                breaks: Vec::new(),
            },
        }
    }
}
