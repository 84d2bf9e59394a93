use serde::{Deserialize, Serialize};

/// Token usage of one request, normalised across providers so that
/// `input + cache_read + cache_creation` is the whole prompt in every case (OpenAI reports cached
/// tokens inside `prompt_tokens`; the client subtracts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Every prompt token of the request, cached or not: what the context window holds.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }

    /// Share of the prompt read from cache, 0.0–1.0.
    pub fn cache_hit_rate(&self) -> f64 {
        let total = self.prompt_tokens();
        if total == 0 { 0.0 } else { self.cache_read_input_tokens as f64 / total as f64 }
    }
}
