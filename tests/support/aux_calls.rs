//! cairn's auxiliary model calls, told apart from the agent's own requests by their prompts
//! (`assets/prompts/`): a compaction's summary, the memory extraction after it, and a
//! segment's summary.

use super::mock_llm::RecordedRequest;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuxCall {
    Compaction,
    Extraction,
    Segment,
}

impl AuxCall {
    /// The auxiliary call `req` is; `None` for the agent's own requests.
    pub fn of(req: &RecordedRequest) -> Option<AuxCall> {
        AuxCall::in_body(&req.body.to_string())
    }

    /// The same, from a request body as text.
    pub fn in_body(body: &str) -> Option<AuxCall> {
        if body.contains("You are summarising part of a conversation between a user and cairn") {
            Some(AuxCall::Compaction)
        } else if body.contains("pick out what is worth remembering") {
            Some(AuxCall::Extraction)
        } else if body.contains("summarising one stretch of a coding session") {
            Some(AuxCall::Segment)
        } else {
            None
        }
    }
}
