//! The keep-alive's IO: when the next decision is due, and the ping itself — the last request
//! answered, sent again for one token so it reads the whole cached prefix — recorded and
//! priced as the session's usage (`keepalive`).

use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::events::{AgentEvent, NoticeLevel};
use crate::agent::keep_warm::Site;
use crate::context::KeepAlive;
use crate::llm::Reasoning;

impl Worker {
    fn keep_alive_site(&self, now: i64) -> Site {
        let config = &self.place.config().cache;
        let answered = self.background.last_answered();
        let tail = answered.as_ref().and_then(|(r, _)| r.tail.as_ref()).map_or(0, |t| t.len());
        Site {
            now,
            ttl_secs: self.cache.ttl_secs(),
            lead_secs: i64::try_from(config.keepalive_lead_secs).unwrap_or(i64::MAX),
            max_pings: config.keepalive_max_pings,
            prefix_tokens: answered.as_ref().map_or(0, |(_, tokens)| *tokens),
            uncached_tokens: crate::context::estimate_text_tokens(tail, self.place.config().context.chars_per_token),
            // Breakpoints are sent and the provider has shown it caches: never a ping to a
            // provider without a prompt cache.
            caching: answered.as_ref().is_some_and(|(r, _)| r.cache.is_some()) && self.cache.caches(),
            model: *self.session.pipeline().cost_model(),
        }
    }

    /// How long until the keep-alive must decide again; `None` when nothing is due (the user
    /// is not idle, or this spell is settled).
    pub(super) fn keep_alive_wake(&mut self) -> Option<std::time::Duration> {
        if self.keep_warm.waiting() && self.background.last_answered().is_none() {
            self.keep_warm.settle("no ping: the history changed since the last request (a compaction)".into());
            return None;
        }
        let now = chrono::Utc::now().timestamp();
        let site = self.keep_alive_site(now);
        match self.keep_warm.decide(&site)? {
            KeepAlive::WaitUntil(at) => Some(std::time::Duration::from_secs(at.saturating_sub(now).max(0) as u64)),
            KeepAlive::Ping { .. } => Some(std::time::Duration::ZERO),
            KeepAlive::Off(why) => {
                self.keep_warm.settle(format!("no ping: {why}"));
                None
            }
            KeepAlive::Decline { cost, saving, probability } => {
                self.keep_warm.settle(format!(
                    "no ping: a {:.0} % chance you are back in time saves {saving:.4}, less than the ping's {cost:.4} (or the cap of pings is reached)",
                    probability * 100.0
                ));
                None
            }
        }
    }

    /// The moment a ping was due: decide again and send it if it still pays.
    pub(super) async fn keep_alive_due(&mut self) {
        let now = chrono::Utc::now().timestamp();
        let site = self.keep_alive_site(now);
        let Some(KeepAlive::Ping { probability, .. }) = self.keep_warm.decide(&site) else { return };
        let Some((mut request, _)) = self.background.last_answered() else { return };
        match request.reasoning {
            None | Some(Reasoning::Default) | Some(Reasoning::Off) => {}
            // Thinking asked for needs room for its budget: one token is not the same request,
            // and a change of thinking parameters would not read the cached messages.
            Some(Reasoning::Budget { .. }) | Some(Reasoning::Adaptive(_)) | Some(Reasoning::Effort(_)) => {
                self.keep_warm.settle("no ping: the requests ask for thinking".into());
                return;
            }
        }
        request.max_tokens = 1;
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let sent = self.model.send(&request, &tx, &CancellationToken::new()).await;
        let now = chrono::Utc::now().timestamp();
        match sent {
            Ok(response) => {
                self.session.record_usage(None, "keepalive", &response.model, &response.usage);
                let cost = self.spend.pricing().cost(&response.model, &response.usage);
                self.spend.add(cost);
                self.keep_warm.pinged(now, cost);
                self.keep_warm.last = Some(format!(
                    "pinged: {} tokens read from cache to keep it warm ({:.0} % chance you are back before it runs out)",
                    response.usage.cache_read_input_tokens,
                    probability * 100.0
                ));
                tracing::info!(read = response.usage.cache_read_input_tokens, "keep-alive ping");
                let status = self.context_status();
                self.link.emit(AgentEvent::Context(status));
            }
            Err(e) => {
                self.keep_warm.settle(format!("the ping failed: {e}"));
                self.link.notice(NoticeLevel::Warning, format!("the prompt cache keep-alive ping failed: {e}"));
            }
        }
    }
}
