/// Why a request failed. Messages are written for the person reading them.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The prompt did not fit the model's window: the context pipeline must shrink it.
    #[error("the request is larger than the model's context window: {message}")]
    ContextLength { message: String },

    /// 401/403: retrying will not help.
    #[error("{provider} rejected the API key (HTTP {status}): {message}\n  check {key_var}")]
    Auth { provider: &'static str, status: u16, message: String, key_var: &'static str },

    /// Any other 4xx: the request itself is wrong.
    #[error("{provider} refused the request (HTTP {status}): {message}")]
    Rejected { provider: &'static str, status: u16, message: String },

    /// A failure worth another attempt: 429, 5xx, 529, connection trouble, a stream that ended
    /// early or carried an event that does not parse.
    #[error("{message}")]
    Transient {
        message: String,
        /// `retry-after` from the server, when it sent one.
        retry_after: Option<std::time::Duration>,
    },

    #[error("gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted { attempts: u32, last: String },

    #[error("cancelled")]
    Cancelled,
}

impl LlmError {
    pub fn is_transient(&self) -> bool {
        matches!(self, LlmError::Transient { .. })
    }

    pub fn transient(message: impl Into<String>) -> LlmError {
        LlmError::Transient { message: message.into(), retry_after: None }
    }

    /// The same error with every key `redactor` knows replaced: a server may quote the key it
    /// refused, and error texts reach the screen, the headless result and the log.
    pub fn redacted(self, redactor: &crate::config::Redactor) -> LlmError {
        let clean = |mut text: String| {
            redactor.redact_in_place(&mut text);
            text
        };
        match self {
            LlmError::ContextLength { message } => LlmError::ContextLength { message: clean(message) },
            LlmError::Auth { provider, status, message, key_var } => {
                LlmError::Auth { provider, status, message: clean(message), key_var }
            }
            LlmError::Rejected { provider, status, message } => {
                LlmError::Rejected { provider, status, message: clean(message) }
            }
            LlmError::Transient { message, retry_after } => {
                LlmError::Transient { message: clean(message), retry_after }
            }
            LlmError::RetriesExhausted { attempts, last } => LlmError::RetriesExhausted { attempts, last: clean(last) },
            LlmError::Cancelled => LlmError::Cancelled,
        }
    }
}

/// Whether an error body, of either provider or a local server, says the prompt was too long.
pub fn is_context_length_message(status: u16, body: &str) -> bool {
    if !(status == 400 || status == 413 || status == 422 || status == 500) {
        return false;
    }
    let b = body.to_ascii_lowercase();
    const WORDINGS: &[&str] = &[
        "prompt is too long",                 // Anthropic
        "context_length_exceeded",            // OpenAI error code
        "maximum context length",             // OpenAI message, vLLM
        "context window",                     // various: "exceeds the context window"
        "exceeds the available context size", // llama-server, a prompt that does not fit
        "context size has been exceeded",     // llama-server, a slot that filled up while generating
        "too many tokens",
        "input is too long",
        "context length",
    ];
    WORDINGS.iter().any(|w| b.contains(w))
}
