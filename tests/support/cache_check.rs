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
