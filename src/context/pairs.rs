//! Tool-pair sanitising: whatever the stored history holds (a crash between a tool call and its
//! result, an orphaned result from a recorded session), the view sent to a provider pairs every
//! call with exactly one result, in the message right after the call.

use std::collections::HashSet;

use crate::conversation::{Block, Message, Role, ToolResult};

/// The result given to a call that has none in the history.
pub const MISSING_RESULT: &str =
    "[no result: the session was interrupted before this call finished; run it again if it is still needed]";

/// Make `messages` a valid sequence for any provider:
/// - every tool call of an assistant message is answered by the tool messages right after it
///   (a missing answer gets [`MISSING_RESULT`], duplicates and strays are removed);
/// - a tool result whose call is not in the preceding assistant message (an orphan) becomes
///   plain user context, never a tool result;
/// - empty assistant messages are dropped; the first message is from the user.
pub fn sanitize_pairs(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        match msg.role {
            Role::Assistant => {
                if msg.content.is_empty() {
                    i += 1;
                    continue;
                }
                out.push(msg.clone());
                i += 1;
                let calls: Vec<(String, String)> = msg.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                let mut answered: HashSet<String> = HashSet::new();
                let mut results: Vec<Message> = Vec::new();
                while i < messages.len() && messages[i].role == Role::Tool {
                    let tool_msg = &messages[i];
                    match tool_msg.tool_result() {
                        Some(r)
                            if calls.iter().any(|(id, _)| *id == r.call_id) && answered.insert(r.call_id.clone()) =>
                        {
                            results.push(tool_msg.clone())
                        }
                        Some(r) => out_orphan(&mut results, r),
                        None => {}
                    }
                    i += 1;
                }
                // Answers in call order; orphans (now user text) after them.
                let (mut answers, orphans): (Vec<Message>, Vec<Message>) =
                    results.into_iter().partition(|m| m.role == Role::Tool);
                answers.sort_by_key(|m| {
                    m.tool_result()
                        .and_then(|r| calls.iter().position(|(id, _)| *id == r.call_id))
                        .unwrap_or(usize::MAX)
                });
                let mut ordered = Vec::with_capacity(calls.len());
                for (id, name) in &calls {
                    match answers.iter().position(|m| m.tool_result().is_some_and(|r| r.call_id == *id)) {
                        Some(pos) => ordered.push(answers.remove(pos)),
                        None => {
                            ordered.push(Message::tool(ToolResult::error(id.clone(), name.clone(), MISSING_RESULT)))
                        }
                    }
                }
                out.extend(ordered);
                out.extend(orphans);
            }
            Role::Tool => {
                if let Some(r) = msg.tool_result() {
                    out_orphan(&mut out, r);
                }
                i += 1;
            }
            Role::User => {
                out.push(msg.clone());
                i += 1;
            }
        }
    }
    if out.first().is_some_and(|m| m.role != Role::User) {
        out.insert(0, Message::user("[the start of this conversation is not shown]"));
    }
    out
}

fn out_orphan(out: &mut Vec<Message>, r: &ToolResult) {
    out.push(Message {
        role: Role::User,
        content: vec![Block::Text { text: format!("[output of an earlier `{}` call]\n{}", r.name, r.content) }],
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::check_request;
    use crate::conversation::ToolCall;

    fn call(ids: &[&str]) -> Message {
        let mut m = Message::assistant("");
        for id in ids {
            m.content.push(Block::ToolCall(ToolCall::new(*id, "bash", "{}")));
        }
        m
    }

    fn result(id: &str) -> Message {
        Message::tool(ToolResult::ok(id, "bash", format!("out {id}")))
    }

    #[test]
    fn unanswered_call_after_a_crash_gets_a_stub_result() {
        let history = vec![Message::user("go"), call(&["a", "b"]), result("a")];
        let view = sanitize_pairs(&history);
        assert_eq!(view.len(), 4);
        assert_eq!(view[3].tool_result().unwrap().content, MISSING_RESULT);
        assert_eq!(check_request(&view), Ok(()));
    }

    #[test]
    fn orphaned_result_becomes_plain_context() {
        let history = vec![Message::user("go"), result("zz"), Message::assistant("done")];
        let view = sanitize_pairs(&history);
        assert_eq!(view[1].role, Role::User);
        assert!(view[1].text().contains("out zz"));
        assert_eq!(check_request(&view), Ok(()));
    }

    #[test]
    fn results_are_reordered_to_call_order_and_duplicates_dropped() {
        let history = vec![Message::user("go"), call(&["a", "b"]), result("b"), result("a"), result("a")];
        let view = sanitize_pairs(&history);
        let ids: Vec<_> = view.iter().filter_map(|m| m.tool_result()).map(|r| r.call_id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert_eq!(check_request(&view), Ok(()));
    }

    #[test]
    fn leading_assistant_gets_a_user_message_first() {
        let view = sanitize_pairs(&[Message::assistant("hi"), Message::user("x")]);
        assert_eq!(view[0].role, Role::User);
        assert_eq!(check_request(&view), Ok(()));
    }
}
