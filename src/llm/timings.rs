//! llama-server's own account of a request (`timings` in its last streamed chunk): how many
//! prompt tokens it took from its KV cache (`cache_n`), how many it had to process
//! (`prompt_n`), and how long prefill and generation took. The prompt-cache figures of a local
//! server, and what its prefill and generation really cost.

use serde::Serialize;
use serde_json::Value;

use crate::conversation::Usage;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ServerTimings {
    /// Prompt tokens reused from the server's cache.
    pub cache_n: u64,
    /// Prompt tokens processed (prefilled) for this request.
    pub prompt_n: u64,
    pub prompt_ms: f64,
    /// Tokens generated.
    pub predicted_n: u64,
    pub predicted_ms: f64,
}

impl ServerTimings {
    /// The `timings` of a chunk, when it has them.
    pub(super) fn of_chunk(chunk: &Value) -> Option<ServerTimings> {
        let t = chunk.get("timings").filter(|t| t.is_object())?;
        let n = |key: &str| t[key].as_u64();
        let ms = |key: &str| t[key].as_f64().unwrap_or(0.0).max(0.0);
        Some(ServerTimings {
            cache_n: n("cache_n").unwrap_or(0),
            prompt_n: n("prompt_n")?,
            prompt_ms: ms("prompt_ms"),
            predicted_n: n("predicted_n").unwrap_or(0),
            predicted_ms: ms("predicted_ms"),
        })
    }

    /// The usage as the server's cache saw it: what it reused is a cache read, what it
    /// processed is input. Versions of llama-server that report `cached_tokens` in the usage
    /// agree with this; older ones report only the timings.
    pub fn usage(&self, reported: &Usage) -> Usage {
        Usage {
            input_tokens: self.prompt_n,
            cache_read_input_tokens: self.cache_n,
            cache_creation_input_tokens: 0,
            output_tokens: if reported.output_tokens > 0 { reported.output_tokens } else { self.predicted_n },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_servers_cache_figures_become_the_usage() {
        let chunk = json!({"choices": [], "timings": {"cache_n": 236, "prompt_n": 12, "prompt_ms": 30.9,
            "predicted_n": 35, "predicted_ms": 661.0}});
        let t = ServerTimings::of_chunk(&chunk).unwrap();
        assert_eq!((t.cache_n, t.prompt_n, t.predicted_n), (236, 12, 35));
        // An old llama-server: the usage counts every prompt token as new.
        let reported = Usage { input_tokens: 248, output_tokens: 35, ..Default::default() };
        let usage = t.usage(&reported);
        assert_eq!((usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens), (12, 236, 35));
        assert_eq!(usage.prompt_tokens(), reported.prompt_tokens(), "the same prompt, split by the cache");
        assert_eq!(ServerTimings::of_chunk(&json!({"choices": []})), None);
        assert_eq!(
            ServerTimings::of_chunk(&json!({"timings": {"cache_n": 3}})),
            None,
            "no prompt_n: not llama-server's"
        );
    }
}
