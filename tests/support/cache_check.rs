//! Reading per-request usage out of a stream-json run, for cache measurements.

use serde_json::Value;

/// Per agent request: (prompt tokens, tokens read from cache), from the `context` lines.
pub fn per_request(lines: &[Value]) -> Vec<(u64, u64)> {
    lines
        .iter()
        .filter(|l| l["type"] == "context")
        .map(|l| {
            let u = &l["usage"];
            let read = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
            let total =
                u["input_tokens"].as_u64().unwrap_or(0) + read + u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
            (total, read)
        })
        .collect()
}

/// Share of prompt tokens read from cache over `requests`.
pub fn share(requests: &[(u64, u64)]) -> f64 {
    let total: u64 = requests.iter().map(|r| r.0).sum();
    let read: u64 = requests.iter().map(|r| r.1).sum();
    if total == 0 { 0.0 } else { read as f64 / total as f64 }
}

/// One prompt of a session that many runs continue: `cairn -p PROMPT --output-format stream-json`
/// plus `extra`, with `--session ID` once `session` holds the id the first run reported. Checks
/// the run succeeded and stayed in that session; its stream-json lines.
pub async fn prompt_in_session(
    sandbox: &super::cairn::Sandbox,
    api: super::cairn::Api,
    mock: &super::mock_llm::MockLlm,
    session: &mut Option<String>,
    prompt: &str,
    extra: &[&str],
) -> Vec<Value> {
    let mut args = vec!["-p", prompt, "--output-format", "stream-json"];
    args.extend_from_slice(extra);
    let id = session.clone().unwrap_or_default();
    if session.is_some() {
        args.extend(["--session", id.as_str()]);
    }
    let out = sandbox.run(api, mock, &args).await;
    assert!(out.status.success(), "{prompt:?}: {}", super::cairn::text(&out.stderr));
    let lines = super::cairn::json_lines(&out);
    let this = lines.last().expect("a result line")["session_id"].as_str().expect("a session id").to_string();
    assert_eq!(session.get_or_insert(this.clone()), &this, "{prompt:?} continues the one session");
    lines
}
