//! Discovery against the mock: probing candidates and asking a server for its model and window.

use std::time::Duration;

use cairn::config::LocalCandidate;
use cairn::llm::{ProbeResult, discover_model, probe_local};

use crate::support::mock_llm::{MockLlm, Script};

fn candidate(name: &'static str, base_url: String) -> LocalCandidate {
    LocalCandidate { name, base_url }
}

fn unused_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn the_first_answering_candidate_in_list_order_wins() {
    let first = MockLlm::start(Script::new()).await;
    let second = MockLlm::start(Script::new()).await;
    let candidates = [
        candidate("nobody", unused_port_url()),
        candidate("first", first.openai_base_url()),
        candidate("second", second.openai_base_url()),
    ];
    let found = probe_local(&candidates, Duration::from_secs(2)).await;
    assert_eq!(found.map(|c| c.name), Some("first"));
    assert_eq!(probe_local(&candidates[..1], Duration::from_millis(300)).await, None);
}

#[tokio::test]
async fn the_model_comes_from_the_models_list() {
    let mock = MockLlm::start(Script::new()).await;
    let found = discover_model(&mock.openai_base_url(), None).await.unwrap();
    assert_eq!(found, ProbeResult { model: "mock-model".into(), context_window: None });
}

#[tokio::test]
async fn llama_server_props_give_the_context_window() {
    let mock = MockLlm::start(Script::new().models(&["qwen3-coder", "other"]).props_n_ctx(32_768)).await;
    let found = discover_model(&format!("{}/", mock.openai_base_url()), None).await.unwrap();
    assert_eq!(found, ProbeResult { model: "qwen3-coder".into(), context_window: Some(32_768) });
}

#[tokio::test]
async fn an_empty_model_list_says_what_to_do() {
    let mock = MockLlm::start(Script::new().models(&[])).await;
    let err = discover_model(&mock.openai_base_url(), None).await.unwrap_err();
    assert!(err.contains("lists no models") && err.contains("--model"), "{err}");
    assert!(err.contains(&mock.openai_base_url()), "{err}");
}

#[tokio::test]
async fn an_unreachable_server_says_what_to_do() {
    let url = unused_port_url();
    let err = discover_model(&url, None).await.unwrap_err();
    assert!(err.contains(&url) && err.contains("--model"), "{err}");
}
