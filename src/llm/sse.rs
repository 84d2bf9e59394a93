//! Server-sent events over a streamed HTTP response: parses with `eventsource-stream`, fails a
//! response that makes no progress for the idle timeout or streams past the total limit, and
//! stops at once on cancellation (dropping the stream drops the connection).
//!
//! Knows nothing about what the events mean; the clients interpret `event` and `data`, and
//! say when an event carried content ([`SseStream::progressed`]): keep-alives (Anthropic's
//! `ping`, SSE comments) arrive on a dead response too, so they never reset the idle clock.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::LlmError;

/// One event: its name (empty when the server sent none) and its data lines joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// How long a response may go without content, and how long it may stream in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StreamLimits {
    pub idle: Duration,
    pub total: Duration,
}

impl StreamLimits {
    pub fn from_config(retry: &crate::config::RetryConfig) -> StreamLimits {
        StreamLimits {
            idle: Duration::from_millis(retry.stream_idle_timeout_ms),
            total: Duration::from_millis(retry.stream_total_timeout_ms),
        }
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<eventsource_stream::Event, EventStreamError<ReadError>>> + Send>>;

/// Why the byte stream stopped early: the innermost cause ("connection reset").
#[derive(Debug)]
struct ReadError(String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The events of one response, in order.
pub(crate) struct SseStream {
    events: Events,
    url: String,
    limits: StreamLimits,
    started: Instant,
    last_progress: Instant,
}

impl SseStream {
    /// `url` only names the endpoint in error messages.
    pub fn new(response: reqwest::Response, limits: StreamLimits, url: &str) -> SseStream {
        SseStream::from_bytes(response.bytes_stream(), limits, url)
    }

    fn from_bytes<S, B, E>(bytes: S, limits: StreamLimits, url: &str) -> SseStream
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: AsRef<[u8]> + Send + 'static,
        E: std::error::Error + Send + 'static,
    {
        let bytes = bytes.map(|item| item.map_err(|e| ReadError(read_error(&e))));
        let now = Instant::now();
        SseStream {
            events: Box::pin(bytes.eventsource()),
            url: url.to_string(),
            limits,
            started: now,
            last_progress: now,
        }
    }

    /// The caller found content in the last event: the idle clock starts again.
    pub fn progressed(&mut self) {
        self.last_progress = Instant::now();
    }

    /// The next event; `Ok(None)` when the server closed the stream normally.
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<SseEvent>, LlmError> {
        let idle_at = self.last_progress + self.limits.idle;
        let total_at = self.started + self.limits.total;
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            _ = tokio::time::sleep_until(idle_at.min(total_at)) => return Err(self.deadline_error(total_at <= idle_at)),
            item = self.events.next() => item,
        };
        match item {
            None => Ok(None),
            Some(Ok(event)) => Ok(Some(SseEvent { event: event.event, data: event.data })),
            Some(Err(EventStreamError::Transport(e))) => {
                Err(LlmError::transient(format!("the connection broke while reading from {}: {e}", self.url)))
            }
            Some(Err(EventStreamError::Utf8(e))) => {
                Err(LlmError::transient(format!("the stream from {} is not valid UTF-8: {e}", self.url)))
            }
            Some(Err(EventStreamError::Parser(e))) => {
                Err(LlmError::transient(format!("the stream from {} is not valid server-sent events: {e}", self.url)))
            }
        }
    }

    fn deadline_error(&self, total: bool) -> LlmError {
        LlmError::transient(if total {
            format!(
                "the response from {} was still streaming after {} s, the limit (retry.stream_total_timeout_ms); the connection was dropped",
                self.url,
                self.limits.total.as_secs_f64()
            )
        } else {
            format!(
                "the stream from {} stalled: no content for {} s (keep-alives aside); the connection was dropped",
                self.url,
                self.limits.idle.as_secs_f64()
            )
        })
    }
}

/// The innermost cause of a read error, which is the part worth showing ("connection reset").
fn read_error(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(idle_ms: u64, total_ms: u64) -> StreamLimits {
        StreamLimits { idle: Duration::from_millis(idle_ms), total: Duration::from_millis(total_ms) }
    }

    fn chunks(parts: &[&'static str]) -> impl Stream<Item = Result<&'static [u8], std::io::Error>> + Send + 'static {
        futures_util::stream::iter(parts.iter().map(|p| Ok(p.as_bytes())).collect::<Vec<_>>())
    }

    #[tokio::test]
    async fn events_split_across_chunks_are_reassembled() {
        let bytes = chunks(&["event: a\nda", "ta: {\"x\"", ": 1}\n\n", "data: two\n\n"]);
        let mut sse = SseStream::from_bytes(bytes, limits(5_000, 60_000), "http://test");
        let cancel = CancellationToken::new();
        let first = sse.next(&cancel).await.unwrap().unwrap();
        assert_eq!(first, SseEvent { event: "a".into(), data: "{\"x\": 1}".into() });
        assert_eq!(sse.next(&cancel).await.unwrap().unwrap().data, "two");
        assert_eq!(sse.next(&cancel).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_quiet_stream_times_out_as_transient() {
        let bytes = chunks(&["data: one\n\n"]).chain(futures_util::stream::pending());
        let mut sse = SseStream::from_bytes(bytes, limits(20, 60_000), "http://test");
        let cancel = CancellationToken::new();
        assert_eq!(sse.next(&cancel).await.unwrap().unwrap().data, "one");
        let err = sse.next(&cancel).await.unwrap_err();
        assert!(err.is_transient() && err.to_string().contains("stalled"), "{err}");
    }

    #[tokio::test]
    async fn cancellation_wins_over_a_waiting_stream() {
        let bytes = chunks(&[]).chain(futures_util::stream::pending());
        let mut sse = SseStream::from_bytes(bytes, limits(60_000, 60_000), "http://test");
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(matches!(sse.next(&cancel).await, Err(LlmError::Cancelled)));
    }

    #[tokio::test]
    async fn a_read_error_is_transient_and_names_the_url() {
        let broken = futures_util::stream::iter(vec![
            Ok(&b"data: one\n\n"[..]),
            Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset")),
        ]);
        let mut sse = SseStream::from_bytes(broken, limits(5_000, 60_000), "http://test/v1");
        let cancel = CancellationToken::new();
        sse.next(&cancel).await.unwrap();
        let err = sse.next(&cancel).await.unwrap_err().to_string();
        assert!(err.contains("http://test/v1") && err.contains("connection reset"), "{err}");
    }

    fn endless(frame: &'static str, every_ms: u64) -> impl Stream<Item = Result<&'static [u8], std::io::Error>> + Send {
        futures_util::stream::unfold((), move |()| async move {
            tokio::time::sleep(Duration::from_millis(every_ms)).await;
            Some((Ok(frame.as_bytes()), ()))
        })
    }

    #[tokio::test]
    async fn events_without_progress_run_into_the_idle_deadline() {
        let mut sse = SseStream::from_bytes(endless("event: ping\ndata: {}\n\n", 5), limits(60, 60_000), "http://t");
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let err = loop {
            match sse.next(&cancel).await {
                Ok(_) => continue,
                Err(e) => break e,
            }
        };
        assert!(err.is_transient() && err.to_string().contains("no content for 0.06 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn progress_keeps_a_stream_alive_until_the_total_limit() {
        let mut sse = SseStream::from_bytes(endless("data: more\n\n", 5), limits(40, 200), "http://t");
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let err = loop {
            match sse.next(&cancel).await {
                Ok(_) => sse.progressed(),
                Err(e) => break e,
            }
        };
        assert!(started.elapsed() >= Duration::from_millis(200), "ran {:?}", started.elapsed());
        assert!(err.is_transient() && err.to_string().contains("still streaming after 0.2 s"), "{err}");
    }
}
