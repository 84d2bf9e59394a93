//! What the three streaming clients share: one endpoint URL with its HTTP client, the key as a
//! header (and a redactor keeping it out of error texts), the stream limits, the buffer bodies
//! are written into — and the loop that posts a body and feeds the event stream to a wire's
//! own reader until that reader says the response is complete.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::http::{self, Api, ClientSetupError};
use super::sse::{SseEvent, SseStream, StreamLimits};
use super::wire_cache::SpareBuffer;
use super::{LlmError, StreamEvent};
use crate::config::{Redactor, RetryConfig, Secret};

/// How a provider wants its key.
#[derive(Clone, Copy, Debug)]
pub(super) enum KeyHeader {
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
    /// `Authorization: Bearer KEY` (OpenAI and compatible servers).
    Bearer,
}

/// A wire's reader of one streamed response.
pub trait StreamReader {
    /// Takes one event; `Ok(true)` once the response is complete.
    fn handle(&mut self, event: &SseEvent, events: &UnboundedSender<StreamEvent>) -> Result<bool, LlmError>;

    /// Events so far that carried content or moved the response on (a keep-alive does not):
    /// while it does not move, the stream's idle deadline runs.
    fn progress(&self) -> u64;
}

pub struct Endpoint {
    http: reqwest::Client,
    url: String,
    key: Option<(HeaderName, HeaderValue)>,
    /// The key, to keep out of error texts.
    redactor: Redactor,
    limits: StreamLimits,
    api: Api,
    /// The last body's buffer, back once it was sent: the next body is written into it.
    buffer: SpareBuffer,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.url).field("has_key", &self.key.is_some()).finish()
    }
}

impl Endpoint {
    /// `{base}{path}` (a trailing `/` on `base` is dropped). A missing key sends no header: the
    /// server's 401 then says what to set.
    pub(super) fn new(
        base: &str,
        path: &str,
        api: Api,
        api_key: Option<&Secret>,
        header: KeyHeader,
        retry: &RetryConfig,
    ) -> Result<Endpoint, ClientSetupError> {
        let base = base.trim_end_matches('/');
        let (name, prefix) = match header {
            KeyHeader::XApiKey => (HeaderName::from_static("x-api-key"), ""),
            KeyHeader::Bearer => (reqwest::header::AUTHORIZATION, "Bearer "),
        };
        Ok(Endpoint {
            http: http::build_client(base)?,
            url: format!("{base}{path}"),
            key: http::key_header(api_key, api.key_var, prefix)?.map(|value| (name, value)),
            redactor: Redactor::for_key(api.key_var, api_key),
            limits: StreamLimits::from_config(retry),
            api,
            buffer: SpareBuffer::default(),
        })
    }

    pub(super) fn url(&self) -> &str {
        &self.url
    }

    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The key's header value, for the server's other endpoints.
    pub(super) fn key(&self) -> Option<&HeaderValue> {
        self.key.as_ref().map(|(_, value)| value)
    }

    /// An empty buffer to write the next body into (with the last body's capacity).
    pub(super) fn take_buffer(&self) -> Vec<u8> {
        self.buffer.take()
    }

    /// Post `body` (written into a buffer from [`Endpoint::take_buffer`]) with `headers` and the
    /// key, and feed the streamed events to `reader` until it has the whole response.
    pub(super) async fn stream(
        &self,
        mut headers: HeaderMap,
        body: Vec<u8>,
        reader: &mut impl StreamReader,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<(), LlmError> {
        if let Some((name, value)) = &self.key {
            headers.insert(name.clone(), value.clone());
        }
        let body = self.buffer.body(body);
        let response =
            http::post_stream(&self.http, self.api, &self.url, headers, body, self.limits.idle, cancel).await?;
        let mut sse = SseStream::new(response, self.limits, &self.url);
        while let Some(event) = sse.next(cancel).await? {
            let before = reader.progress();
            let done = reader.handle(&event, events)?;
            if reader.progress() != before {
                sse.progressed();
            }
            if done {
                break;
            }
        }
        Ok(())
    }

    /// `error` without the key in any of its texts.
    pub(super) fn redacted(&self, error: LlmError) -> LlmError {
        error.redacted(&self.redactor)
    }
}
