//! One provider client for every wire: the endpoint (its URL, HTTP client, key and stream
//! limits, in `endpoint`), the bodies of recent requests as the wire wrote them, and the one
//! request path — encode, post, read the stream to its end, keep the key out of any error. A
//! wire (`anthropic`, `openai`, `openai_responses`) brings only its encoder, its stream decoder
//! and what it says of itself.

use futures_util::future::BoxFuture;
use reqwest::header::HeaderMap;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::endpoint::{Endpoint, StreamReader};
use super::{ChatRequest, ChatResponse, LlmError, Provider, ServedWindow, StreamEvent};
use crate::config::ProviderKind;

/// What one provider's API is on the wire.
pub trait Wire: Send + Sync + 'static {
    /// `AnthropicClient`: what `Debug` calls the client.
    const CLIENT: &'static str;
    /// The reader of one streamed response.
    type Decoder: StreamReader + Send;

    fn kind(&self) -> ProviderKind;

    /// `request`'s body, written into `buffer`, and the headers it needs beside the key. A wire
    /// keeps the messages of recent requests as it serialised them, so each is written once.
    fn encode(&self, request: &ChatRequest, buffer: Vec<u8>) -> (Vec<u8>, HeaderMap);

    fn decoder(&self, request: &ChatRequest) -> Self::Decoder;

    /// The response the decoder read, or why there is none (a stream cut short).
    fn finish(&self, decoder: Self::Decoder, url: &str, request: &ChatRequest) -> Result<ChatResponse, LlmError>;

    /// See [`Provider::honours_cache_control`].
    fn honours_cache_control(&self, _model: &str) -> bool {
        false
    }

    /// See [`Provider::served_window`].
    fn served_window<'a>(&'a self, _endpoint: &'a Endpoint, _model: &'a str) -> BoxFuture<'a, ServedWindow> {
        Box::pin(async { ServedWindow::Unknown })
    }
}

/// A client of one endpoint speaking wire `W`.
pub struct Client<W> {
    pub(super) endpoint: Endpoint,
    pub(super) wire: W,
}

/// The endpoint and whether there is a key; never the key, nor the wire's cached bodies.
impl<W: Wire> std::fmt::Debug for Client<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(W::CLIENT).field("endpoint", &self.endpoint).finish()
    }
}

impl<W: Wire> Client<W> {
    pub(super) fn speaking(endpoint: Endpoint, wire: W) -> Client<W> {
        Client { endpoint, wire }
    }

    async fn run(
        &self,
        request: &ChatRequest,
        events: &UnboundedSender<StreamEvent>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        let (body, headers) = self.wire.encode(request, self.endpoint.take_buffer());
        let mut decoder = self.wire.decoder(request);
        self.endpoint.stream(headers, body, &mut decoder, events, cancel).await?;
        self.wire.finish(decoder, self.endpoint.url(), request)
    }
}

impl<W: Wire> Provider for Client<W> {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        events: &'a UnboundedSender<StreamEvent>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move { self.run(request, events, cancel).await.map_err(|e| self.endpoint.redacted(e)) })
    }

    fn kind(&self) -> ProviderKind {
        self.wire.kind()
    }

    fn honours_cache_control(&self, model: &str) -> bool {
        self.wire.honours_cache_control(model)
    }

    fn served_window<'a>(&'a self, model: &'a str) -> BoxFuture<'a, ServedWindow> {
        self.wire.served_window(&self.endpoint, model)
    }
}
