//! cairn's auxiliary model calls, told apart from the agent's own requests by their prompts
//! (`assets/prompts/`): a compaction's summary — read in place (the conversation, then the
//! instruction as the request's tail) or, with a `[compaction] model` of its own, from a
//! transcript. One call per compaction: it also gives the hidden segments their lines and
//! names the memories worth keeping.

use super::mock_llm::RecordedRequest;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuxCall {
    Compaction,
}

impl AuxCall {
    /// The auxiliary call `req` is; `None` for the agent's own requests.
    pub fn of(req: &RecordedRequest) -> Option<AuxCall> {
        AuxCall::in_body(&req.body.to_string())
    }

    /// The same, from a request body as text.
    pub fn in_body(body: &str) -> Option<AuxCall> {
        body.contains("You are summarising part of a conversation between a user and cairn")
            .then_some(AuxCall::Compaction)
    }
}

/// The stretches a compaction's instruction names (`- 12–40: from …`), as `12–40`: the reply
/// gives each a line under `## Stretches`.
pub fn named_stretches(req: &RecordedRequest) -> Vec<String> {
    let body = req.body.to_string().replace("\\n", "\n");
    body.lines()
        .filter_map(|l| l.strip_prefix("- ").and_then(|l| l.split_once(": from ")).map(|(r, _)| r.to_string()))
        .filter(|r| r.contains('–') && r.len() < 30)
        .collect()
}

/// The trailing sections of a compaction reply to `req`: a line `line` for each stretch it
/// names, then the memories (JSON, as the prompt asks).
pub fn trailing_sections(req: &RecordedRequest, line: &str, memories: &str) -> String {
    let stretches: String = named_stretches(req).iter().map(|r| format!("- {r}: {line}\n")).collect();
    let stretches = if stretches.is_empty() { String::new() } else { format!("\n\n## Stretches\n{stretches}") };
    format!("{stretches}\n\n## Memories\n{memories}\n")
}
