//! One request, built once. Its head — the system prompt, the tool section and the tail, with
//! the instruction files read from disk for it — is assembled once from the session's state
//! ([`RequestHead`]), and weighed once ([`Overhead`]); the pipeline is asked once for the
//! messages and their figures ([`crate::context::SentView`]); together they are the
//! [`PreparedRequest`]. Every consumer of that request reads it there: the pre-flight's budget,
//! the exact counts on a llama-server, the cache watch, the status line, the request sent, the
//! one a compaction reads in place, and what the session report keeps of it (its usage row's
//! overhead, its four parts). `/context` reads a head and a view made the same way.
//!
//! Knows how a request is made, not when: the worker decides that (`worker/turn`).

mod head;

pub(crate) use head::{HeadSources, Overhead, RequestHead, Sending};

use crate::context::SentView;
use crate::conversation::Mode;
use crate::llm::ChatRequest;

/// A request ready to send, and what it weighs.
pub(crate) struct PreparedRequest {
    /// What reaches the provider.
    pub(crate) request: ChatRequest,
    /// The mode it is sent in (its line is in the tail).
    pub(crate) mode: Mode,
    /// Tokens of its system prompt (with the tail) and of its tools.
    pub(crate) overhead: Overhead,
    /// Rough tokens of the messages standing in for what was compacted or trimmed away, and of
    /// the others (the session report's parts).
    pub(crate) carried_tokens: u64,
    pub(crate) visible_tokens: u64,
    /// Its rough tokens, which the provider's count calibrates.
    pub(crate) raw_tokens: u64,
    /// Its calibrated estimate: the figure the status line shows before it is sent.
    pub(crate) estimate: u64,
}

impl RequestHead {
    /// The request: this head with the pipeline's messages.
    pub(crate) fn complete(self, view: SentView) -> PreparedRequest {
        let (mode, overhead) = (self.mode(), *self.overhead());
        let mut request = self.into_request();
        request.messages = view.messages;
        PreparedRequest {
            request,
            mode,
            overhead,
            carried_tokens: view.carried_tokens,
            visible_tokens: view.visible_tokens,
            raw_tokens: view.raw_tokens,
            estimate: view.estimate,
        }
    }
}
