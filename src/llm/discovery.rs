//! Finding local OpenAI-compatible servers (Ollama, llama-server, LM Studio, vLLM) and asking a
//! server which model it serves and with what context window (llama-server's `/props`, Ollama's
//! `/api/ps`, LM Studio's `/api/v0/models`, vLLM's `max_model_len` in `/models`).
//!
//! Only reads: it never loads models or changes a server's state.

use std::time::Duration;

use serde_json::Value;

use super::http;
use crate::config::{LocalCandidate, Secret};

/// How long `discover_model` waits for each answer: local servers answer at once, remote ones
/// within a few seconds.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// `/props` and `/api/ps` are niceties; a server that knows neither must not slow start-up.
const PROPS_TIMEOUT: Duration = Duration::from_secs(2);

/// What a server says about the window it runs a model with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServedWindow {
    /// The server runs the model with this many tokens of context (llama-server's `n_ctx`,
    /// Ollama's `context_length` of a loaded model).
    Reported(u64),
    /// Ollama, with the model not loaded yet: its window is decided when it loads (by
    /// `OLLAMA_CONTEXT_LENGTH`, the Modelfile, or the GPU's memory) and can be asked after the
    /// first request.
    OllamaNotLoaded,
    /// The server does not say.
    Unknown,
}

/// What a server said about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// The first model the server lists.
    pub model: String,
}

/// Asks every candidate's `GET {base}/models` at once and returns the first candidate, in list
/// order, that answered 2xx within `timeout`.
pub async fn probe_local(candidates: &[LocalCandidate], timeout: Duration) -> Option<LocalCandidate> {
    let probes = candidates.iter().map(|candidate| async move {
        let Ok(client) = http::build_client(&candidate.base_url) else { return false };
        let url = format!("{}/models", candidate.base_url.trim_end_matches('/'));
        let answered = client.get(&url).timeout(timeout).send().await.is_ok_and(|r| r.status().is_success());
        tracing::debug!(server = candidate.name, url, answered, "probed for a local model server");
        answered
    });
    let answers = futures_util::future::join_all(probes).await;
    candidates.iter().zip(answers).find(|(_, answered)| *answered).map(|(candidate, _)| candidate.clone())
}

/// The model a server serves: the first of `GET {base}/models`. Its window is asked separately,
/// with [`crate::llm::Provider::served_window`].
pub async fn discover_model(base_url: &str, api_key: Option<&Secret>) -> Result<ProbeResult, String> {
    let redactor = crate::config::Redactor::for_key("OPENAI_API_KEY", api_key);
    ask_for_model(base_url, api_key).await.map_err(|e| redactor.redact(&e).into_owned())
}

async fn ask_for_model(base_url: &str, api_key: Option<&Secret>) -> Result<ProbeResult, String> {
    let base = base_url.trim_end_matches('/');
    let client = http::build_client(base).map_err(|e| e.to_string())?;
    let auth = http::key_header(api_key, "OPENAI_API_KEY", "Bearer ").map_err(|e| e.to_string())?;
    let url = format!("{base}/models");
    let mut get = client.get(&url).timeout(DISCOVERY_TIMEOUT);
    if let Some(auth) = &auth {
        get = get.header(reqwest::header::AUTHORIZATION, auth.clone());
    }
    let response = get.send().await.map_err(|e| {
        format!("{}; is the server running? pass --model to skip asking it", http::connection_error(&url, &e))
    })?;
    let status = response.status();
    let body = response.text().await.map_err(|e| http::connection_error(&url, &e).to_string())?;
    if !status.is_success() {
        return Err(format!(
            "{url} answered HTTP {}: {}; pass --model to name the model yourself",
            status.as_u16(),
            http::error_message(&body, status.as_u16())
        ));
    }
    let model = first_model(&body).map_err(|problem| format!("{url} {problem}; pass --model to name the model"))?;
    let Some(model) = model else {
        return Err(format!("the server at {base} lists no models; load one or pass --model"));
    };
    Ok(ProbeResult { model })
}

/// The window `base` (an OpenAI-compatible `…/v1`) runs `model` with, asking llama-server's
/// `/props` and Ollama's `/api/ps` at once. Never fails: a server that does not say is
/// [`ServedWindow::Unknown`].
pub(crate) async fn served_window(
    client: &reqwest::Client,
    base: &str,
    auth: Option<&reqwest::header::HeaderValue>,
    model: &str,
) -> ServedWindow {
    let lm_studio = format!("api/v0/models/{model}");
    let (props, ps, lms, models) = tokio::join!(
        native_json(client, base, "props", auth),
        native_json(client, base, "api/ps", auth),
        native_json(client, base, &lm_studio, auth),
        own_json(client, base, "models", auth),
    );
    let reported = props
        .as_ref()
        .and_then(context_from_props)
        .or_else(|| lms.as_ref().and_then(context_from_lm_studio))
        .or_else(|| models.as_ref().and_then(|m| context_from_vllm_models(m, model)));
    if let Some(n) = reported {
        return ServedWindow::Reported(n);
    }
    ps.map_or(ServedWindow::Unknown, |ps| context_from_ollama_ps(&ps, model))
}

/// What one local server said when asked: its first model and that model's window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Surveyed {
    pub model: String,
    pub window: ServedWindow,
}

/// Asks every candidate at once which model it serves and with what window, for `cairn
/// doctor`: `None` for a server that does not answer within `timeout`.
pub async fn survey_local(candidates: &[LocalCandidate], timeout: Duration) -> Vec<Option<Surveyed>> {
    let asks = candidates.iter().map(|candidate| async move {
        let client = http::build_client(&candidate.base_url).ok()?;
        let base = candidate.base_url.trim_end_matches('/');
        let response = client.get(format!("{base}/models")).timeout(timeout).send().await.ok()?;
        let body = response.error_for_status().ok()?.text().await.ok()?;
        let model = first_model(&body).ok().flatten()?;
        let window = served_window(&client, base, None, &model).await;
        Some(Surveyed { model, window })
    });
    futures_util::future::join_all(asks).await
}

/// `GET {root}/{path}`, where root is `base` without its `/v1`: the servers' own APIs live
/// beside the OpenAI-compatible one. `None` for any failure.
async fn native_json(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    auth: Option<&reqwest::header::HeaderValue>,
) -> Option<Value> {
    let base = base.trim_end_matches('/');
    get_json(client, format!("{}/{path}", base.strip_suffix("/v1").unwrap_or(base)), auth).await
}

/// `GET {base}/{path}` on the OpenAI-compatible API itself; `None` for any failure.
async fn own_json(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    auth: Option<&reqwest::header::HeaderValue>,
) -> Option<Value> {
    get_json(client, format!("{}/{path}", base.trim_end_matches('/')), auth).await
}

async fn get_json(client: &reqwest::Client, url: String, auth: Option<&reqwest::header::HeaderValue>) -> Option<Value> {
    let mut get = client.get(&url).timeout(PROPS_TIMEOUT);
    if let Some(auth) = auth {
        get = get.header(reqwest::header::AUTHORIZATION, auth.clone());
    }
    get.send().await.ok().filter(|r| r.status().is_success())?.json().await.ok()
}

/// LM Studio's `GET /api/v0/models/{model}`: the window it loaded the model with
/// (`loaded_context_length`), else the most the model takes (`max_context_length`) — LM Studio
/// loads a model on demand with that much unless told otherwise.
fn context_from_lm_studio(json: &Value) -> Option<u64> {
    json["loaded_context_length"].as_u64().or_else(|| json["max_context_length"].as_u64()).filter(|n| *n > 0)
}

/// vLLM lists each model with the window it serves (`max_model_len`).
fn context_from_vllm_models(json: &Value, model: &str) -> Option<u64> {
    let models = json["data"].as_array()?;
    let entry = models.iter().find(|m| m["id"].as_str() == Some(model))?;
    entry["max_model_len"].as_u64().filter(|n| *n > 0)
}

/// The first `data[].id` of a `/models` answer; `Ok(None)` when the list is empty.
fn first_model(body: &str) -> Result<Option<String>, String> {
    let json: Value = serde_json::from_str(body).map_err(|_| "did not answer with JSON".to_string())?;
    let Some(models) = json["data"].as_array() else {
        return Err("answered without a `data` list of models".to_string());
    };
    Ok(models.iter().find_map(|m| m["id"].as_str()).filter(|id| !id.is_empty()).map(str::to_string))
}

/// llama-server's `GET /props`: `default_generation_settings.n_ctx` (the window of one slot)
/// or a top-level `n_ctx`.
pub fn context_from_props(json: &Value) -> Option<u64> {
    json["default_generation_settings"]["n_ctx"].as_u64().or_else(|| json["n_ctx"].as_u64()).filter(|n| *n > 0)
}

/// Ollama's `GET /api/ps` lists the loaded models, each with the `context_length` it was loaded
/// with. A name without a tag is Ollama's `:latest`.
fn context_from_ollama_ps(ps: &Value, model: &str) -> ServedWindow {
    let Some(loaded) = ps["models"].as_array() else { return ServedWindow::Unknown };
    let latest = format!("{model}:latest");
    let is_it =
        |m: &&Value| [&m["name"], &m["model"]].iter().filter_map(|v| v.as_str()).any(|n| n == model || n == latest);
    match loaded.iter().find(is_it).and_then(|m| m["context_length"].as_u64()).filter(|n| *n > 0) {
        Some(n) => ServedWindow::Reported(n),
        None => ServedWindow::OllamaNotLoaded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_listed_model_is_chosen() {
        assert_eq!(first_model(r#"{"data":[{"id":"qwen3"},{"id":"llama"}]}"#).unwrap().as_deref(), Some("qwen3"));
        assert_eq!(first_model(r#"{"data":[]}"#).unwrap(), None);
        assert!(first_model("<html>").unwrap_err().contains("JSON"));
        assert!(first_model(r#"{"models":[]}"#).unwrap_err().contains("data"));
    }

    #[test]
    fn llama_server_props_give_the_context_size() {
        assert_eq!(context_from_props(&json!({"default_generation_settings": {"n_ctx": 8192}})), Some(8192));
        assert_eq!(context_from_props(&json!({"n_ctx": 4096})), Some(4096));
        assert_eq!(context_from_props(&json!({"n_ctx": 0})), None);
        assert_eq!(context_from_props(&json!({"build_info": "b1"})), None);
    }

    #[test]
    fn ollama_ps_gives_the_window_of_the_loaded_model() {
        let ps = json!({"models": [
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "context_length": 4096},
            {"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 32768}
        ]});
        assert_eq!(context_from_ollama_ps(&ps, "qwen2.5-coder:7b"), ServedWindow::Reported(32_768));
        assert_eq!(context_from_ollama_ps(&ps, "llama3.2"), ServedWindow::Reported(4_096), "untagged is :latest");
        assert_eq!(context_from_ollama_ps(&ps, "mistral"), ServedWindow::OllamaNotLoaded);
        assert_eq!(context_from_ollama_ps(&json!({"models": []}), "mistral"), ServedWindow::OllamaNotLoaded);
        let old = json!({"models": [{"name": "mistral:latest", "size": 1}]});
        assert_eq!(
            context_from_ollama_ps(&old, "mistral"),
            ServedWindow::OllamaNotLoaded,
            "versions without the field"
        );
        assert_eq!(context_from_ollama_ps(&json!({"error": "x"}), "mistral"), ServedWindow::Unknown);
    }

    #[test]
    fn lm_studio_and_vllm_say_their_windows_where_they_list_models() {
        let loaded = json!({"id": "qwen2.5-7b", "state": "loaded", "loaded_context_length": 16_384, "max_context_length": 32_768});
        assert_eq!(context_from_lm_studio(&loaded), Some(16_384));
        assert_eq!(
            context_from_lm_studio(&json!({"id": "q", "state": "not-loaded", "max_context_length": 32_768})),
            Some(32_768)
        );
        assert_eq!(context_from_lm_studio(&json!({"error": "no such model"})), None);
        let vllm = json!({"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 32_768}]});
        assert_eq!(context_from_vllm_models(&vllm, "Qwen/Qwen2.5-7B"), Some(32_768));
        assert_eq!(context_from_vllm_models(&vllm, "other"), None);
        assert_eq!(context_from_vllm_models(&json!({"data": [{"id": "m"}]}), "m"), None, "not vLLM");
    }

    #[tokio::test]
    async fn nothing_listening_means_no_candidate() {
        // Port 9 (discard) on loopback: nothing listens there on a test machine.
        let candidates = [LocalCandidate { name: "nobody", base_url: "http://127.0.0.1:9/v1".into() }];
        assert_eq!(probe_local(&candidates, Duration::from_millis(300)).await, None);
    }
}
