//! A stored session told again as ACP updates (`session/load`): each prompt as the user's
//! message, the answers and thinking as the agent's, and every tool call whole — its title as
//! the live call had it, its status, its change as diffs or its result — as the live session
//! showed them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdateFields,
};

use super::calls;
use crate::agent::HistoryRecap;
use crate::config::Redactor;
use crate::conversation::{Block, Message, Role, ToolResult};
use crate::store::ToolDisplay;

/// The updates that tell `history` again.
pub(super) fn updates(
    history: &[Arc<Message>],
    displays: &HashMap<String, ToolDisplay>,
    recap: &HistoryRecap,
    root: &Path,
    redactor: &Redactor,
) -> Vec<SessionUpdate> {
    let results: HashMap<&str, &ToolResult> = history
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_result())
        .map(|r| (r.call_id.as_str(), r))
        .collect();
    let chunk = |text: &str, kind: fn(ContentChunk) -> SessionUpdate| {
        kind(ContentChunk::new(ContentBlock::from(redactor.redact(text).into_owned())))
    };
    let mut out = Vec::new();
    for message in history {
        match message.role {
            Role::User => {
                let prompt = match crate::agent::split_attachments(&message.content) {
                    Some((prompt, _)) => prompt,
                    None => message.text(),
                };
                if !prompt.trim().is_empty() {
                    out.push(chunk(&prompt, SessionUpdate::UserMessageChunk));
                }
            }
            Role::Assistant => {
                for block in &message.content {
                    match block {
                        Block::Thinking(t) if !t.text.trim().is_empty() => {
                            out.push(chunk(&t.text, SessionUpdate::AgentThoughtChunk));
                        }
                        Block::Text { text } if !text.trim().is_empty() => {
                            out.push(chunk(text, SessionUpdate::AgentMessageChunk));
                        }
                        Block::ToolCall(call) => {
                            let summary = recap.summaries.get(&call.id).map(String::as_str).unwrap_or_default();
                            let arguments = redactor.redact(&call.arguments);
                            let display = displays.get(&call.id);
                            let diff = display.and_then(|d| d.diff.as_deref()).map(|d| redactor.redact(d).into_owned());
                            let mut shown = ToolCall::new(call.id.clone(), calls::title(&call.name, summary))
                                .kind(calls::kind(&call.name))
                                .raw_input(calls::raw_input(&arguments))
                                .locations(calls::locations(&arguments, root, diff.as_deref()));
                            shown.update(match results.get(call.id.as_str()) {
                                Some(result) => {
                                    let content = redactor.redact(&result.content);
                                    calls::finished(&content, result.is_error, diff.as_deref(), root)
                                }
                                // A call whose result never came (cairn stopped mid-turn).
                                None => ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
                            });
                            out.push(SessionUpdate::ToolCall(shown));
                        }
                        Block::Thinking(_) | Block::Text { .. } | Block::ToolResult(_) | Block::Image(_) => {}
                    }
                }
            }
            Role::Tool => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall as Call;

    #[test]
    fn a_stored_turn_is_told_as_it_happened() {
        let mut reply = Message::assistant("I'll change it.");
        reply.content.push(Block::ToolCall(Call::new("c1", "file_edit", r#"{"path": "a.txt"}"#)));
        let history: Vec<Arc<Message>> = vec![
            Arc::new(Message::user("rename it")),
            Arc::new(reply),
            Arc::new(Message::tool(ToolResult::ok("c1", "file_edit", "Edited a.txt: +1 −1 lines"))),
            Arc::new(Message::assistant("Done.")),
        ];
        let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".to_string();
        let displays = HashMap::from([(
            "c1".to_string(),
            ToolDisplay { diff: Some(diff), duration_ms: 3, not_run: false, decided_by: None, summary: None },
        )]);
        let recap = HistoryRecap {
            summaries: HashMap::from([("c1".into(), "a.txt".into())]),
            marks: Vec::new(),
            subagents: HashMap::new(),
        };
        let got = updates(&history, &displays, &recap, Path::new("/p"), &Redactor::default());
        assert_eq!(got.len(), 4, "{got:#?}");
        assert!(matches!(&got[0], SessionUpdate::UserMessageChunk(c) if c.content == ContentBlock::from("rename it")));
        assert!(
            matches!(&got[1], SessionUpdate::AgentMessageChunk(c) if c.content == ContentBlock::from("I'll change it."))
        );
        let SessionUpdate::ToolCall(call) = &got[2] else { panic!("{:?}", got[2]) };
        assert_eq!((call.title.as_str(), call.status), ("file_edit a.txt", ToolCallStatus::Completed));
        assert!(
            matches!(&call.content[..], [agent_client_protocol::v1::schema::ToolCallContent::Diff(d)] if d.new_text == "new\n")
        );
        assert_eq!(call.locations[0].path, Path::new("/p/a.txt"));
        assert!(matches!(&got[3], SessionUpdate::AgentMessageChunk(c) if c.content == ContentBlock::from("Done.")));
    }
}
