//! Server-sent events over a streamed HTTP response: parses with `eventsource-stream`, fails a
//! stream that goes quiet for longer than the idle timeout, and stops at once on cancellation
//! (dropping the stream drops the connection).
//!
//! Knows nothing about what the events mean; the clients interpret `event` and `data`.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use super::LlmError;

/// One event: its name (empty when the server sent none) and its data lines joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Why the byte stream stopped early.
#[derive(Debug)]
enum ByteError {
    Read(String),
    Idle(Duration),
}

impl std::fmt::Display for ByteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ByteError::Read(e) => f.write_str(e),
            ByteError::Idle(d) => write!(f, "no data for {} s", d.as_secs_f64()),
        }
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<eventsource_stream::Event, EventStreamError<ByteError>>> + Send>>;

/// The events of one response, in order.
pub(crate) struct SseStream {
    events: Events,
    url: String,
}

impl SseStream {
    /// `url` only names the endpoint in error messages.
    pub fn new(response: reqwest::Response, idle_timeout: Duration, url: &str) -> SseStream {
        SseStream::from_bytes(response.bytes_stream(), idle_timeout, url)
    }

    fn from_bytes<S, B, E>(bytes: S, idle_timeout: Duration, url: &str) -> SseStream
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: AsRef<[u8]> + Send + 'static,
        E: std::error::Error + Send + 'static,
    {
        // Each item gets its own deadline, so the clock measures the gap between chunks.
        let timed = futures_util::stream::unfold(Box::pin(bytes), move |mut bytes| async move {
            match tokio::time::timeout(idle_timeout, bytes.next()).await {
                Ok(Some(Ok(chunk))) => Some((Ok(chunk), bytes)),
                Ok(Some(Err(e))) => Some((Err(ByteError::Read(read_error(&e))), bytes)),
                Ok(None) => None,
                Err(_) => Some((Err(ByteError::Idle(idle_timeout)), bytes)),
            }
        });
        SseStream { events: Box::pin(timed.eventsource()), url: url.to_string() }
    }

    /// The next event; `Ok(None)` when the server closed the stream normally.
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<SseEvent>, LlmError> {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            item = self.events.next() => item,
        };
        match item {
            None => Ok(None),
            Some(Ok(event)) => Ok(Some(SseEvent { event: event.event, data: event.data })),
            Some(Err(EventStreamError::Transport(ByteError::Idle(idle)))) => Err(LlmError::transient(format!(
                "the stream from {} stalled: no data for {} s; the connection was dropped",
                self.url,
                idle.as_secs_f64()
            ))),
            Some(Err(EventStreamError::Transport(ByteError::Read(e)))) => {
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

    fn chunks(parts: &[&'static str]) -> impl Stream<Item = Result<&'static [u8], std::io::Error>> + Send + 'static {
        futures_util::stream::iter(parts.iter().map(|p| Ok(p.as_bytes())).collect::<Vec<_>>())
    }

    #[tokio::test]
    async fn events_split_across_chunks_are_reassembled() {
        let bytes = chunks(&["event: a\nda", "ta: {\"x\"", ": 1}\n\n", "data: two\n\n"]);
        let mut sse = SseStream::from_bytes(bytes, Duration::from_secs(5), "http://test");
        let cancel = CancellationToken::new();
        let first = sse.next(&cancel).await.unwrap().unwrap();
        assert_eq!(first, SseEvent { event: "a".into(), data: "{\"x\": 1}".into() });
        assert_eq!(sse.next(&cancel).await.unwrap().unwrap().data, "two");
        assert_eq!(sse.next(&cancel).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_quiet_stream_times_out_as_transient() {
        let bytes = chunks(&["data: one\n\n"]).chain(futures_util::stream::pending());
        let mut sse = SseStream::from_bytes(bytes, Duration::from_millis(20), "http://test");
        let cancel = CancellationToken::new();
        assert_eq!(sse.next(&cancel).await.unwrap().unwrap().data, "one");
        let err = sse.next(&cancel).await.unwrap_err();
        assert!(err.is_transient() && err.to_string().contains("stalled"), "{err}");
    }

    #[tokio::test]
    async fn cancellation_wins_over_a_waiting_stream() {
        let bytes = chunks(&[]).chain(futures_util::stream::pending());
        let mut sse = SseStream::from_bytes(bytes, Duration::from_secs(60), "http://test");
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
        let mut sse = SseStream::from_bytes(broken, Duration::from_secs(5), "http://test/v1");
        let cancel = CancellationToken::new();
        sse.next(&cancel).await.unwrap();
        let err = sse.next(&cancel).await.unwrap_err().to_string();
        assert!(err.contains("http://test/v1") && err.contains("connection reset"), "{err}");
    }
}
