//! Retries of transient provider failures: exponential backoff with jitter (or the server's
//! `retry-after`), a `Retrying` event before each wait so front ends can discard the partial
//! answer, and a cancellable sleep.
//!
//! Knows nothing about HTTP: it only sees [`LlmError`]s from a [`Provider`].

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{ChatRequest, ChatResponse, LlmError, Provider, StreamEvent};
use crate::config::RetryConfig;

/// How often and how patiently to retry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; at least 1.
    pub max_attempts: u32,
    pub base_delay: Duration,
    /// Ceiling for one wait, `retry-after` included.
    pub max_delay: Duration,
}

impl RetryPolicy {
    pub fn from_config(config: &RetryConfig) -> RetryPolicy {
        RetryPolicy {
            max_attempts: config.max_attempts.max(1),
            base_delay: Duration::from_millis(config.base_delay_ms),
            max_delay: Duration::from_millis(config.max_delay_ms),
        }
    }

    /// The wait after failed attempt `attempt` (1-based): the server's `retry-after` when it
    /// sent one, else `base × 2^(attempt−1)` with ±25 % jitter; never more than `max_delay`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let wait = match retry_after {
            Some(server) => server,
            None => {
                let factor = 2f64.powi(attempt.saturating_sub(1).min(62) as i32);
                let backoff = self.base_delay.as_secs_f64() * factor;
                let jitter = 0.75 + fastrand::f64() * 0.5;
                Duration::try_from_secs_f64(backoff.min(self.max_delay.as_secs_f64()) * jitter)
                    .unwrap_or(self.max_delay)
            }
        };
        wait.min(self.max_delay)
    }
}

/// Sends `request` through `provider`, retrying transient failures as `policy` says. Emits
/// `StreamEvent::Retrying` before each wait; everything streamed before that event belongs to a
/// failed attempt. Any other error returns at once.
pub async fn send_with_retries(
    provider: &dyn Provider,
    request: &ChatRequest,
    events: &UnboundedSender<StreamEvent>,
    cancel: &CancellationToken,
    policy: &RetryPolicy,
) -> Result<ChatResponse, LlmError> {
    let max_attempts = policy.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let error = match provider.stream(request, events, cancel).await {
            Ok(response) => {
                if attempt > 1 {
                    tracing::info!(
                        attempt,
                        provider = provider.kind().as_str(),
                        "provider request succeeded after retrying"
                    );
                }
                return Ok(response);
            }
            Err(error) => error,
        };
        let LlmError::Transient { message, retry_after } = error else {
            return Err(error);
        };
        if attempt >= max_attempts {
            tracing::warn!(attempt, error = %message, "provider request failed; no attempts left");
            return Err(LlmError::RetriesExhausted { attempts: attempt, last: message });
        }
        let delay = policy.delay(attempt, retry_after);
        tracing::warn!(
            attempt,
            max_attempts,
            delay_ms = delay.as_millis() as u64,
            server_retry_after = retry_after.is_some(),
            error = %message,
            "provider request failed; retrying",
        );
        attempt += 1;
        // A closed receiver only means nobody is watching.
        let _ = events.send(StreamEvent::Retrying { attempt, max_attempts, delay, reason: message });
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(base_ms: u64, max_ms: u64) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(base_ms),
            max_delay: Duration::from_millis(max_ms),
        }
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        let p = policy(1_000, 60_000);
        for _ in 0..200 {
            let first = p.delay(1, None).as_secs_f64();
            assert!((0.75..=1.25).contains(&first), "{first}");
            let fourth = p.delay(4, None).as_secs_f64();
            assert!((6.0..=10.0).contains(&fourth), "{fourth}");
        }
    }

    #[test]
    fn no_wait_exceeds_the_ceiling() {
        let p = policy(1_000, 60_000);
        for attempt in [7, 8, 30, 200, u32::MAX] {
            assert!(p.delay(attempt, None) <= Duration::from_secs(60));
        }
        assert_eq!(p.delay(1, Some(Duration::from_secs(600))), Duration::from_secs(60));
    }

    #[test]
    fn server_retry_after_replaces_the_backoff() {
        let p = policy(1_000, 60_000);
        assert_eq!(p.delay(5, Some(Duration::from_millis(10))), Duration::from_millis(10));
    }

    #[test]
    fn config_maps_to_policy_with_at_least_one_attempt() {
        let config = RetryConfig { max_attempts: 0, ..RetryConfig::default() };
        let p = RetryPolicy::from_config(&config);
        assert_eq!(p.max_attempts, 1);
        assert_eq!(p.base_delay, Duration::from_secs(1));
        assert_eq!(p.max_delay, Duration::from_secs(60));
    }
}
