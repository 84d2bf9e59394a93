//! Discovery against the mock: probing candidates and asking a server for its model and window.

use std::time::Duration;

use cairn::config::{LocalCandidate, RetryConfig};
use cairn::llm::{OpenAiClient, ProbeResult, Provider, ServedWindow, discover_model, probe_local};
use serde_json::json;

use crate::support::cairn::{Sandbox, json_lines, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

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
    assert_eq!(found, ProbeResult { model: "mock-model".into() });
    let client = OpenAiClient::new(&mock.openai_base_url(), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("mock-model").await, ServedWindow::Unknown, "a server that does not say");
}

#[tokio::test]
async fn llama_server_props_give_the_context_window() {
    let mock = MockLlm::start(Script::new().models(&["qwen3-coder", "other"]).props_n_ctx(32_768)).await;
    let found = discover_model(&format!("{}/", mock.openai_base_url()), None).await.unwrap();
    assert_eq!(found, ProbeResult { model: "qwen3-coder".into() });
    let client = OpenAiClient::new(&format!("{}/", mock.openai_base_url()), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("qwen3-coder").await, ServedWindow::Reported(32_768));
}

#[tokio::test]
async fn lm_studio_says_the_window_it_loaded_the_model_with_else_the_most_it_takes() {
    let loaded =
        MockLlm::start(Script::new().models(&["qwen2.5-coder-7b"]).lm_studio_window(Some(16_384), 32_768)).await;
    let client = OpenAiClient::new(&loaded.openai_base_url(), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("qwen2.5-coder-7b").await, ServedWindow::Reported(16_384));
    assert_eq!(client.served_window("not-there").await, ServedWindow::Unknown, "a model it does not have");
    let idle = MockLlm::start(Script::new().models(&["qwen2.5-coder-7b"]).lm_studio_window(None, 32_768)).await;
    let client = OpenAiClient::new(&idle.openai_base_url(), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("qwen2.5-coder-7b").await, ServedWindow::Reported(32_768));
}

#[tokio::test]
async fn vllm_says_the_window_in_its_models_list() {
    let mock = MockLlm::start(Script::new().models(&["Qwen/Qwen2.5-7B", "other"]).vllm_max_model_len(32_768)).await;
    let client = OpenAiClient::new(&mock.openai_base_url(), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("Qwen/Qwen2.5-7B").await, ServedWindow::Reported(32_768));
}

#[tokio::test]
async fn ollama_says_nothing_before_loading_the_model() {
    let mock = MockLlm::start(Script::new().models(&["qwen2.5-coder:7b"]).ollama_window(8_192)).await;
    let client = OpenAiClient::new(&mock.openai_base_url(), None, &RetryConfig::default()).unwrap();
    assert_eq!(client.served_window("qwen2.5-coder:7b").await, ServedWindow::OllamaNotLoaded);
}

/// Ollama loads a model at its first request, with a window its settings and GPU decide; cairn
/// asks then and budgets for the answer, saying so.
#[tokio::test]
async fn the_window_ollama_loads_a_model_with_is_learnt_after_the_first_request() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .models(&["qwen2.5-coder:7b"])
            .ollama_window(8_192)
            .turn(Turn::tool("glob", json!({"pattern": "*"})))
            .turn(Turn::text("Nothing here.")),
    )
    .await;
    let doctor =
        sandbox.bare_command(&["doctor"]).env("OPENAI_BASE_URL", mock.openai_base_url()).output().await.unwrap();
    assert!(text(&doctor.stdout).contains("assumed until Ollama loads the model"), "{}", text(&doctor.stdout));
    let out = sandbox
        .bare_command(&["-p", "what is here?", "--output-format", "stream-json"])
        .env("OPENAI_BASE_URL", mock.openai_base_url())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["model"], "qwen2.5-coder:7b");
    assert_eq!(result["context"]["window"], 8_192, "{result}");
    let notices: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "notice").filter_map(|l| l["text"].as_str()).collect();
    assert!(notices.iter().any(|n| n.starts_with("Ollama has not loaded qwen2.5-coder:7b yet")), "{notices:?}");
    let learnt = notices.iter().find(|n| n.starts_with("Ollama runs")).expect("the learnt window is announced");
    assert!(learnt.contains("8192-token window, not the 32768 assumed") && learnt.contains("OLLAMA_CONTEXT_LENGTH"));
    let windows: Vec<u64> =
        lines.iter().filter(|l| l["type"] == "context").filter_map(|l| l["context"]["window"].as_u64()).collect();
    assert_eq!(windows, [8_192, 8_192], "from the first report on");
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

/// Ollama's default window on a small GPU cannot hold cairn's system prompt and tools: better a
/// clear stop than a request whose start the server silently drops.
#[tokio::test]
async fn a_served_window_too_small_for_the_prompt_stops_the_turn_and_says_how_to_fix_it() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(
        Script::new()
            .models(&["llama3.2"])
            .ollama_window(2_048)
            .turn(Turn::tool("glob", json!({"pattern": "*"})))
            .turn(Turn::text("never sent")),
    )
    .await;
    let out = sandbox
        .bare_command(&["-p", "what is here?", "--output-format", "json"])
        .env("OPENAI_BASE_URL", mock.openai_base_url())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(mock.requests().len(), 1, "nothing is sent once the window is known to be too small");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = result["result"].as_str().unwrap();
    assert!(error.contains("2048-token window") && error.contains("OLLAMA_CONTEXT_LENGTH"), "{error}");
    assert_eq!(result["is_error"], true);
}
