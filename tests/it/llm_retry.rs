//! Retries over real HTTP: every transient failure is retried to success with a `Retrying` event
//! before the wait and exactly one final response; exhaustion and cancellation end cleanly.

use std::time::{Duration, Instant};

use cairn::config::RetryConfig;
use cairn::conversation::Message;
use cairn::llm::{LlmError, Provider, RetryPolicy, StreamEvent, send_with_retries};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use crate::support::llm::{anthropic, final_text, openai, request, responses, retries, send, send_with};
use crate::support::mock_llm::{Fault, MockLlm, PARTIAL_TEXT, Script, Turn, Wire};

const ANSWER: &str = "The real answer, after the trouble.";

/// Runs one fault followed by a good turn on `wire` and checks the retry happened as it should.
async fn recovers_from(wire: Wire, fault: Fault, reason_contains: &str) {
    let mock = MockLlm::start(Script::new().fault(fault.clone()).turn(Turn::text(ANSWER))).await;
    let req = request(vec![Message::user("hi")]);
    let (result, events) = match wire {
        Wire::Anthropic => send(&anthropic(&mock), &req).await,
        Wire::OpenAi => send(&openai(&mock), &req).await,
        Wire::OpenAiResponses => send(&responses(&mock), &req).await,
    };
    let response = result.unwrap_or_else(|e| panic!("{wire:?} {fault:?}: {e}"));
    assert_eq!(response.message.text(), ANSWER, "{wire:?} {fault:?}");
    assert_eq!(mock.requests().len(), 2, "{wire:?} {fault:?}: one failed attempt, one good one");
    let retried = retries(&events);
    assert_eq!(retried.len(), 1, "{wire:?} {fault:?}: {events:?}");
    assert_eq!(retried[0].0, 2, "the event names the attempt about to be made");
    assert!(retried[0].1.contains(reason_contains), "{wire:?} {fault:?}: reason {:?}", retried[0].1);
    assert_eq!(final_text(&events), ANSWER, "{wire:?} {fault:?}: after Retrying only the new attempt streams");
    assert!(mock.problems().is_empty(), "{:?}", mock.problems());
}

#[tokio::test]
async fn rate_limits_with_fractional_retry_after_are_retried() {
    let fault = Fault::Status { code: 429, retry_after: Some(0.01), body: None };
    recovers_from(Wire::Anthropic, fault.clone(), "HTTP 429").await;
    recovers_from(Wire::OpenAi, fault, "HTTP 429").await;
    recovers_from(Wire::OpenAi, Fault::RateLimited, "HTTP 429").await;
    recovers_from(Wire::OpenAiResponses, Fault::RateLimited, "HTTP 429").await;
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried() {
    recovers_from(Wire::Anthropic, Fault::Overloaded, "HTTP 529").await;
    recovers_from(Wire::OpenAi, Fault::Overloaded, "HTTP 503").await;
    recovers_from(Wire::Anthropic, Fault::ServerError, "HTTP 500").await;
    recovers_from(Wire::OpenAi, Fault::ServerError, "HTTP 500").await;
    recovers_from(Wire::OpenAiResponses, Fault::Overloaded, "HTTP 503").await;
    recovers_from(Wire::OpenAiResponses, Fault::ServerError, "HTTP 500").await;
}

#[tokio::test]
async fn broken_streams_are_retried_and_their_partial_text_discarded() {
    for wire in [Wire::Anthropic, Wire::OpenAi, Wire::OpenAiResponses] {
        recovers_from(wire, Fault::DropMidStream, "connection broke").await;
        recovers_from(wire, Fault::EndEarly, "ended before the response was complete").await;
        recovers_from(wire, Fault::MalformedEvent, "not valid JSON").await;
    }
    recovers_from(Wire::Anthropic, Fault::ErrorEvent, "overloaded").await;
    recovers_from(Wire::OpenAi, Fault::ErrorEvent, "server error").await;
    recovers_from(Wire::OpenAiResponses, Fault::ErrorEvent, "server error").await;
}

#[tokio::test]
async fn the_partial_answer_streams_before_the_retrying_event() {
    let mock = MockLlm::start(Script::new().fault(Fault::DropMidStream).turn(Turn::text(ANSWER))).await;
    let (result, events) = send(&anthropic(&mock), &request(vec![Message::user("hi")])).await;
    result.unwrap();
    let retry_at = events.iter().position(|e| matches!(e, StreamEvent::Retrying { .. })).unwrap();
    let before: String = events[..retry_at]
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(!before.is_empty() && PARTIAL_TEXT.starts_with(&before), "{before:?}");
}

#[tokio::test]
async fn retry_after_sets_the_wait() {
    let mock = MockLlm::start(
        Script::new().fault(Fault::Status { code: 429, retry_after: Some(0.015), body: None }).turn(Turn::text("ok")),
    )
    .await;
    let (result, events) = send(&openai(&mock), &request(vec![Message::user("hi")])).await;
    result.unwrap();
    let delays: Vec<Duration> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { delay, .. } => Some(*delay),
            _ => None,
        })
        .collect();
    assert_eq!(delays, vec![Duration::from_millis(15)]);
}

#[tokio::test]
async fn giving_up_after_max_attempts_reports_the_last_error() {
    let script = Script::new().fault(Fault::ServerError).fault(Fault::ServerError).fault(Fault::Overloaded);
    let mock = MockLlm::start(script.turn(Turn::text("too late"))).await;
    let policy =
        RetryPolicy { max_attempts: 3, base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(5) };
    let (result, events) = send_with(&anthropic(&mock), &request(vec![Message::user("hi")]), &policy).await;
    match result {
        Err(LlmError::RetriesExhausted { attempts: 3, last }) => assert!(last.contains("HTTP 529"), "{last}"),
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(mock.requests().len(), 3);
    assert_eq!(retries(&events).iter().map(|r| r.0).collect::<Vec<_>>(), vec![2, 3]);
}

#[tokio::test]
async fn cancelling_mid_stream_returns_cancelled_promptly() {
    let long = "word ".repeat(200);
    let mock = MockLlm::start(Script::new().chunk_delay_ms(300).turn(Turn::text(long))).await;
    let client = openai(&mock);
    let req = request(vec![Message::user("talk")]);
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let policy = RetryPolicy::from_config(&RetryConfig::default());
    let started = Instant::now();
    let token = &cancel;
    let call = async move {
        let result = send_with_retries(&client, &req, &tx, token, &policy).await;
        drop(tx); // ends the watcher if the call returns without the event it waits for
        result
    };
    let watcher = async {
        // Cancel once the first words have arrived: the stream is demonstrably in flight.
        while let Some(event) = rx.recv().await {
            if matches!(event, StreamEvent::TextDelta(_)) {
                cancel.cancel();
                return;
            }
        }
    };
    let (result, ()) = tokio::join!(call, watcher);
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    // The whole turn would take about 2 s of chunk delays; cancellation must not wait for it.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_during_the_backoff_returns_cancelled() {
    let mock = MockLlm::start(Script::new().fault(Fault::ServerError).turn(Turn::text("never"))).await;
    let client = anthropic(&mock);
    let req = request(vec![Message::user("hi")]);
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    // A 60 s backoff: the test only finishes quickly if the sleep is cancellable.
    let policy =
        RetryPolicy { max_attempts: 3, base_delay: Duration::from_secs(60), max_delay: Duration::from_secs(60) };
    let started = Instant::now();
    let provider: &dyn Provider = &client;
    let token = &cancel;
    let call = async move {
        let result = send_with_retries(provider, &req, &tx, token, &policy).await;
        drop(tx); // ends the watcher if the call returns without the event it waits for
        result
    };
    let watcher = async {
        while let Some(event) = rx.recv().await {
            if matches!(event, StreamEvent::Retrying { .. }) {
                cancel.cancel();
                return;
            }
        }
    };
    let (result, ()) = tokio::join!(call, watcher);
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert_eq!(mock.requests().len(), 1);
}
