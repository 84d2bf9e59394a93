//! Which models a provider serves: `GET /v1/models` (Anthropic, with its key and version
//! headers) or `GET {base}/models` (OpenAI-compatible, with a bearer key), for the `/model`
//! picker. Only reads.

use std::time::Duration;

use reqwest::header::HeaderValue;
use serde_json::Value;

use super::http;
use crate::config::{ProviderKind, Secret};

/// A provider that answers slower than this is not worth waiting for in a picker.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// The ids the provider lists, in its order; why not, in words, when it cannot be asked.
pub async fn list_models(kind: ProviderKind, base_url: &str, key: Option<&Secret>) -> Result<Vec<String>, String> {
    let base = base_url.trim_end_matches('/');
    let client = http::build_client(base).map_err(|e| e.to_string())?;
    let mut get = match kind {
        ProviderKind::Anthropic => {
            let mut get = client
                .get(format!("{base}/v1/models?limit=1000"))
                .header("anthropic-version", HeaderValue::from_static("2023-06-01"));
            if let Some(key) = http::key_header(key, "ANTHROPIC_API_KEY", "").map_err(|e| e.to_string())? {
                get = get.header("x-api-key", key);
            }
            get
        }
        ProviderKind::Openai | ProviderKind::OpenaiResponses => {
            let mut get = client.get(format!("{base}/models"));
            if let Some(key) = http::key_header(key, "OPENAI_API_KEY", "Bearer ").map_err(|e| e.to_string())? {
                get = get.header(reqwest::header::AUTHORIZATION, key);
            }
            get
        }
    };
    get = get.timeout(LIST_TIMEOUT);
    let response = get.send().await.map_err(|e| format!("the provider did not answer: {e}"))?;
    let status = response.status().as_u16();
    let body = response.text().await.map_err(|e| format!("the provider's answer broke off: {e}"))?;
    if !(200..300).contains(&status) {
        return Err(format!("the provider answered HTTP {status}: {}", http::error_message(&body, status)));
    }
    let json: Value = serde_json::from_str(&body).map_err(|_| "the provider's model list is not JSON".to_string())?;
    let ids = json["data"]
        .as_array()
        .ok_or_else(|| "the provider's answer has no `data` list of models".to_string())?
        .iter()
        .filter_map(|m| m["id"].as_str())
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .collect();
    Ok(ids)
}
