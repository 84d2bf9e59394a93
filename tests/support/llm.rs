//! Driving cairn's model clients against the mock: a fast retry configuration, a request
//! builder, and a runner that collects the streamed events.

use cairn::config::{RetryConfig, Secret};
use cairn::conversation::{Message, SystemBlock, ToolSpec};
use cairn::llm::{
    AnthropicClient, ChatRequest, ChatResponse, LlmError, OpenAiClient, OpenAiResponsesClient, Provider, RetryPolicy,
    StreamEvent, send_with_retries,
};
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::mock_llm::MockLlm;

pub const TEST_KEY: &str = "sk-test-key-do-not-log";

/// Retries in milliseconds, so no test sleeps for long.
pub fn fast_retry() -> RetryConfig {
    RetryConfig {
        max_attempts: 4,
        base_delay_ms: 2,
        max_delay_ms: 20,
        stream_idle_timeout_ms: 10_000,
        ..RetryConfig::default()
    }
}

pub fn anthropic(mock: &MockLlm) -> AnthropicClient {
    AnthropicClient::new(&mock.anthropic_base_url(), Some(Secret::new(TEST_KEY)), &fast_retry()).unwrap()
}

pub fn openai(mock: &MockLlm) -> OpenAiClient {
    OpenAiClient::new(&mock.openai_base_url(), Some(Secret::new(TEST_KEY)), &fast_retry()).unwrap()
}

pub fn responses(mock: &MockLlm) -> OpenAiResponsesClient {
    OpenAiResponsesClient::new(&mock.openai_base_url(), Some(Secret::new(TEST_KEY)), &fast_retry()).unwrap()
}

pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "file_read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
        ToolSpec {
            name: "glob".into(),
            description: "Find files".into(),
            input_schema: json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
        },
    ]
}

pub fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        system: vec![SystemBlock { text: "You are cairn, a coding assistant.".into(), cache_breakpoint: true }],
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        tools: tool_specs(),
        tool_choice: cairn::llm::ToolChoice::Auto,
        max_tokens: 4096,
        cache: None,
        tail: None,
        reasoning: None,
        images: true,
    }
}

/// One `Provider::stream` call (no retries) and the events it sent.
pub async fn stream_once(
    provider: &dyn Provider,
    request: &ChatRequest,
) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let result = provider.stream(request, &tx, &CancellationToken::new()).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (result, events)
}

/// `send_with_retries` with [`fast_retry`] and the events it sent.
pub async fn send(
    provider: &dyn Provider,
    request: &ChatRequest,
) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    send_with(provider, request, &RetryPolicy::from_config(&fast_retry())).await
}

pub async fn send_with(
    provider: &dyn Provider,
    request: &ChatRequest,
    policy: &RetryPolicy,
) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let result = send_with_retries(provider, request, &tx, &CancellationToken::new(), policy).await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (result, events)
}

/// The text deltas after the last `Retrying` event: what a front end would still show.
pub fn final_text(events: &[StreamEvent]) -> String {
    let start = events.iter().rposition(|e| matches!(e, StreamEvent::Retrying { .. })).map_or(0, |i| i + 1);
    events[start..]
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub fn retries(events: &[StreamEvent]) -> Vec<(u32, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { attempt, reason, .. } => Some((*attempt, reason.clone())),
            _ => None,
        })
        .collect()
}

/// A reqwest client for posting hand-made bodies to the mock.
pub fn raw_client() -> reqwest::Client {
    // Another test may have installed the provider already; either way one is installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
