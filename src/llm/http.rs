//! The HTTP layer the clients share: sending one streamed POST with cancellation, and turning an
//! HTTP failure (status, `retry-after`, error body, connection trouble) into an [`LlmError`].
//! The `reqwest::Client` itself is built by `net`, as every part of cairn that talks HTTP does.
//!
//! Knows nothing about either wire format beyond the `{"error": {"message": …}}` shape of error
//! bodies. Never logs or formats a header value.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::LlmError;
use super::is_context_length_message;
use crate::config::Secret;
pub(crate) use crate::net::{ClientSetupError, build_client, parse_base_url};

/// How long reading the body of an error response may take before we give up on its details.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Error bodies are quoted in messages; a proxy's HTML page should not fill the screen.
const MAX_QUOTED_BODY: usize = 300;

/// Who is on the other end, for error messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Api {
    /// As users name it: `Anthropic`, `OpenAI`, `the OpenAI-compatible server`.
    pub provider: &'static str,
    /// The environment variable that holds this provider's key.
    pub key_var: &'static str,
}

/// A key as a header value, marked sensitive so that no `Debug` of a request shows it.
pub(crate) fn key_header(
    key: Option<&Secret>,
    key_var: &'static str,
    prefix: &str,
) -> Result<Option<HeaderValue>, ClientSetupError> {
    let Some(key) = key else { return Ok(None) };
    // Keys pasted from files often carry a trailing newline; it is never part of a key.
    let mut value = HeaderValue::from_str(&format!("{prefix}{}", key.expose().trim()))
        .map_err(|_| ClientSetupError::InvalidKey { key_var })?;
    value.set_sensitive(true);
    Ok(Some(value))
}

/// Sends one POST expecting an event stream, and returns the response once its status is a
/// success. Anything else becomes the matching [`LlmError`]; cancellation drops the request.
/// `idle_timeout` bounds the wait for the response headers, as it bounds gaps in the stream.
pub(crate) async fn post_stream(
    client: &reqwest::Client,
    api: Api,
    url: &str,
    headers: HeaderMap,
    body: bytes::Bytes,
    idle_timeout: Duration,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, LlmError> {
    let request = client
        .post(url)
        .headers(headers)
        .header(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(body);
    let send = tokio::time::timeout(idle_timeout, request.send());
    let response = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        result = send => match result {
            Ok(sent) => sent.map_err(|e| connection_error(url, &e))?,
            Err(_) => return Err(LlmError::transient(format!(
                "{url} accepted the connection but sent no response for {} s",
                idle_timeout.as_secs_f64()
            ))),
        },
    };
    let status = response.status();
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.is_success() && !is_json {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers(), std::time::SystemTime::now());
    let body = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(LlmError::Cancelled),
        text = tokio::time::timeout(ERROR_BODY_TIMEOUT, response.text()) => match text {
            Ok(Ok(text)) => text,
            Ok(Err(_)) | Err(_) => String::new(),
        },
    };
    tracing::debug!(status = status.as_u16(), url, "provider answered with an error status or without a stream");
    if status.is_success() {
        // A 200 with a JSON error body: a proxy or gateway reporting an upstream failure as
        // success. Worth another attempt, as a 5xx (or a 200 with an HTML page) is.
        if let Some(error) = json_error(&body) {
            if is_context_length_message(400, &body) {
                return Err(LlmError::ContextLength { message: error });
            }
            return Err(LlmError::transient(format!(
                "{} answered HTTP 200 with an error instead of a stream: {error}",
                api.provider
            )));
        }
        // A 200 with any other JSON: a server that ignored `stream`, which another try won't change.
        return Err(LlmError::Rejected {
            provider: api.provider,
            status: status.as_u16(),
            message: format!(
                "expected an event stream but got JSON; does this server support streaming? {}",
                error_message(&body, status.as_u16())
            ),
        });
    }
    Err(status_error(api, status.as_u16(), retry_after, &body))
}

/// A request that never got a response: refused, reset, DNS, TLS, or the body broke off.
pub(crate) fn connection_error(url: &str, error: &reqwest::Error) -> LlmError {
    let what = if error.is_connect() {
        "could not connect to"
    } else if error.is_timeout() {
        "timed out talking to"
    } else if error.is_body() || error.is_decode() {
        "the connection broke while reading from"
    } else {
        "the request failed for"
    };
    LlmError::transient(format!("{what} {url}: {}", root_cause(error)))
}

/// The innermost error of a chain: for reqwest that is the useful part ("Connection refused").
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// Classifies a failed response by status and body. Context-length wording wins over the status
/// (some local servers answer 500 for an oversized prompt).
pub(crate) fn status_error(api: Api, status: u16, retry_after: Option<Duration>, body: &str) -> LlmError {
    let message = error_message(body, status);
    if is_context_length_message(status, body) || error_code(body).as_deref() == Some("context_length_exceeded") {
        return LlmError::ContextLength { message };
    }
    let provider = api.provider;
    match status {
        401 | 403 => LlmError::Auth { provider, status, message, key_var: api.key_var },
        408 | 429 | 500 | 502..=504 | 506..=599 => {
            let what = match status {
                429 => "rate-limited the request",
                529 => "is overloaded",
                408 => "timed out waiting for the request",
                _ => "had a server error",
            };
            LlmError::Transient { message: format!("{provider} {what} (HTTP {status}): {message}"), retry_after }
        }
        _ => LlmError::Rejected { provider, status, message },
    }
}

/// The human part of an error body: `error.message`, else `message`, else the body itself.
pub(crate) fn error_message(body: &str, status: u16) -> String {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [&json["error"]["message"], &json["message"], &json["error"], &json["detail"]];
        if let Some(text) = candidates.iter().find_map(|v| v.as_str()).filter(|t| !t.trim().is_empty()) {
            return text.trim().to_string();
        }
    }
    let body = body.trim();
    if body.is_empty() {
        let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason());
        return reason.unwrap_or("no details given").to_string();
    }
    quote(body)
}

/// The message of a body shaped `{"error": …}`, if it is one.
fn json_error(body: &str) -> Option<String> {
    let json = serde_json::from_str::<serde_json::Value>(body).ok()?;
    let error = json.get("error").filter(|e| !e.is_null())?;
    Some(
        error["message"]
            .as_str()
            .or(error.as_str())
            .map_or_else(|| quote(&error.to_string()), |m| m.trim().to_string()),
    )
}

fn error_code(body: &str) -> Option<String> {
    let json = serde_json::from_str::<serde_json::Value>(body).ok()?;
    json["error"]["code"].as_str().map(str::to_string)
}

/// At most [`MAX_QUOTED_BODY`] characters of a body, cut on a character boundary.
pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_BODY) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// `retry-after-ms` (OpenAI), else `retry-after` in seconds (possibly fractional) or as an HTTP
/// date. Anything unparsable is ignored: the backoff schedule applies instead.
pub(crate) fn retry_after(headers: &HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let now = chrono::DateTime::<chrono::Utc>::from(now);
    Some((date.with_timezone(&chrono::Utc) - now).to_std().unwrap_or(Duration::ZERO))
}

fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANTHROPIC: Api = Api { provider: "Anthropic", key_var: "ANTHROPIC_API_KEY" };

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn key_header_is_trimmed_sensitive_and_never_printed() {
        let key = Secret::new("sk-secret-123\n");
        let value = key_header(Some(&key), "ANTHROPIC_API_KEY", "Bearer ").unwrap().unwrap();
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().unwrap(), "Bearer sk-secret-123");
        assert!(!format!("{value:?}").contains("secret"));
        let bad = Secret::new("sk\u{7}bad");
        let err = key_header(Some(&bad), "ANTHROPIC_API_KEY", "").unwrap_err().to_string();
        assert!(err.contains("ANTHROPIC_API_KEY") && !err.contains("bad"), "{err}");
        assert!(key_header(None, "X", "").unwrap().is_none());
    }

    #[test]
    fn retry_after_accepts_fractional_seconds_ms_and_dates() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        assert_eq!(retry_after(&headers(&[("retry-after", "0.25")]), now), Some(Duration::from_millis(250)));
        assert_eq!(retry_after(&headers(&[("retry-after", "7")]), now), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3"), ("retry-after-ms", "1500")]), now),
            Some(Duration::from_millis(1500))
        );
        // 2015-10-21 07:28:00 GMT is 1_445_412_480 s after the epoch: 60 s later.
        let date = headers(&[("retry-after", "Wed, 21 Oct 2015 07:29:00 GMT")]);
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(60)));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn statuses_map_to_the_right_errors() {
        let auth = status_error(ANTHROPIC, 401, None, r#"{"error":{"message":"invalid x-api-key"}}"#);
        assert!(matches!(auth, LlmError::Auth { status: 401, key_var: "ANTHROPIC_API_KEY", .. }));
        assert!(auth.to_string().contains("invalid x-api-key"));
        for status in [429, 500, 502, 503, 504, 529] {
            let err = status_error(ANTHROPIC, status, Some(Duration::from_secs(2)), "");
            match err {
                LlmError::Transient { message, retry_after } => {
                    assert!(message.contains(&format!("HTTP {status}")), "{message}");
                    assert_eq!(retry_after, Some(Duration::from_secs(2)));
                }
                other => panic!("{status}: {other:?}"),
            }
        }
        let rejected = status_error(ANTHROPIC, 404, None, r#"{"error":{"message":"model: nope"}}"#);
        assert!(matches!(rejected, LlmError::Rejected { status: 404, ref message, .. } if message == "model: nope"));
        let ctx = status_error(ANTHROPIC, 400, None, r#"{"error":{"message":"prompt is too long: 1 > 0"}}"#);
        assert!(matches!(ctx, LlmError::ContextLength { .. }));
        let code = status_error(
            ANTHROPIC,
            400,
            None,
            r#"{"error":{"message":"shorter please","code":"context_length_exceeded"}}"#,
        );
        assert!(matches!(code, LlmError::ContextLength { .. }));
    }

    #[test]
    fn error_messages_fall_back_to_a_quoted_body() {
        assert_eq!(error_message(r#"{"message":"plain"}"#, 400), "plain");
        assert_eq!(error_message("", 502), "Bad Gateway");
        let long = "x".repeat(1000);
        assert_eq!(error_message(&long, 400).chars().count(), MAX_QUOTED_BODY + 1);
    }
}
