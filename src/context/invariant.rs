//! The request invariant (CONTEXT.md §7): no tool result without its call in the preceding
//! assistant message, no call without its result, the first message from the user.
//! Size against the window is checked by the budget, which knows the window.

use std::collections::HashSet;

use crate::conversation::{Block, Message, Role};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("the request has no messages")]
    Empty,
    #[error("the first message is from the {0}, not the user")]
    FirstNotUser(&'static str),
    #[error("message {index}: tool result {call_id} does not answer a call of the preceding assistant message")]
    OrphanResult { index: usize, call_id: String },
    #[error("message {index}: tool call {call_id} has no result")]
    UnansweredCall { index: usize, call_id: String },
    #[error("message {index}: tool call id {call_id} is used twice")]
    DuplicateCall { index: usize, call_id: String },
    #[error("message {index}: a {role} message holds a block it may not hold")]
    MisplacedBlock { index: usize, role: &'static str },
}

/// Check `messages` as they are about to be sent.
pub fn check_request<M: std::borrow::Borrow<Message>>(messages: &[M]) -> Result<(), Violation> {
    let first = messages.first().map(|m| m.borrow()).ok_or(Violation::Empty)?;
    if first.role != Role::User {
        return Err(Violation::FirstNotUser(first.role.as_str()));
    }
    let mut seen_ids: HashSet<&str> = HashSet::new();
    let mut i = 0;
    while i < messages.len() {
        let msg: &Message = messages[i].borrow();
        for block in &msg.content {
            let allowed = match (msg.role, block) {
                (Role::User, Block::Text { .. } | Block::Image(_)) => true,
                (Role::Assistant, Block::Text { .. } | Block::ToolCall(_) | Block::Thinking(_)) => true,
                (Role::Tool, Block::ToolResult(_) | Block::Image(_)) => true,
                (Role::User | Role::Assistant | Role::Tool, _) => false,
            };
            if !allowed {
                return Err(Violation::MisplacedBlock { index: i, role: msg.role.as_str() });
            }
        }
        match msg.role {
            Role::Tool => {
                let call_id = msg.tool_result().map(|r| r.call_id.clone()).unwrap_or_default();
                return Err(Violation::OrphanResult { index: i, call_id });
            }
            Role::User => i += 1,
            Role::Assistant => {
                let mut pending: Vec<&str> = Vec::new();
                for call in msg.tool_calls() {
                    if !seen_ids.insert(&call.id) {
                        return Err(Violation::DuplicateCall { index: i, call_id: call.id.clone() });
                    }
                    pending.push(&call.id);
                }
                let call_index = i;
                i += 1;
                while i < messages.len() && messages[i].borrow().role == Role::Tool {
                    let Some(result) = messages[i].borrow().tool_result() else {
                        return Err(Violation::MisplacedBlock { index: i, role: "tool" });
                    };
                    match pending.iter().position(|id| *id == result.call_id) {
                        Some(pos) => {
                            pending.remove(pos);
                        }
                        None => return Err(Violation::OrphanResult { index: i, call_id: result.call_id.clone() }),
                    }
                    i += 1;
                }
                if let Some(id) = pending.first() {
                    return Err(Violation::UnansweredCall { index: call_index, call_id: id.to_string() });
                }
            }
        }
    }
    Ok(())
}
