//! One tool call's turn: the prompt run on its agent to the end (its background work let land,
//! so the cost counts every request), approvals asked of the calling client as elicitations,
//! and what came of it as the tool's result — the answer, the session, the cost, and each call
//! the rules refused with the reason.

use rmcp::model::{CallToolResult, ContentBlock, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::agent::{
    AgentEvent, AgentHandle, ApprovalDecision, ApprovalKind, ApprovalRequest, TurnOutcome, TurnStats, UserCommand,
};
use crate::conversation::clip;

/// A call the permission rules (or the client's user) did not let run.
struct Refused {
    tool: String,
    summary: String,
    reason: String,
}

/// What came of a tool call's turn.
pub(super) struct Done {
    session_id: String,
    outcome: TurnOutcome,
    stats: TurnStats,
    /// What the whole session has cost so far.
    session_cost: Option<f64>,
    refused: Vec<Refused>,
}

impl Done {
    fn failed(session_id: String, error: String) -> Done {
        Done {
            session_id,
            outcome: TurnOutcome::Failed { error },
            stats: TurnStats::default(),
            session_cost: None,
            refused: Vec::new(),
        }
    }

    /// The tool's result: the answer as text (with the session and the cost on a last line, for
    /// clients that read text only), and all of it as structured content.
    pub(super) fn into_result(self) -> CallToolResult {
        let (status, answer) = match &self.outcome {
            TurnOutcome::Completed { text } => ("completed", text.clone()),
            TurnOutcome::Interrupted { .. } => ("interrupted", self.outcome.result_text()),
            TurnOutcome::MaxTurns { .. } => ("max_turns", self.outcome.result_text()),
            TurnOutcome::Failed { error } => ("failed", error.clone()),
        };
        let cost = |usd: Option<f64>| usd.map(crate::config::format_usd).unwrap_or_else(|| "unknown".into());
        let mut text = answer.clone();
        for refused in &self.refused {
            text.push_str(&format!("\n[not run: {} {} — {}]", refused.tool, refused.summary, refused.reason));
        }
        text.push_str(&format!(
            "\n\n[cairn session {} · this call {} · session {}]",
            self.session_id,
            cost(self.stats.cost_usd),
            cost(self.session_cost)
        ));
        let usage = &self.stats.usage;
        let structured = json!({
            "session_id": self.session_id,
            "status": status,
            "answer": answer,
            "cost_usd": self.stats.cost_usd,
            "session_cost_usd": self.session_cost,
            "requests": self.stats.all_requests,
            "usage": {
                "input_tokens": usage.prompt_tokens(),
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
            },
            "refused": self.refused.iter().map(|r| json!({"tool": r.tool, "summary": r.summary, "reason": r.reason})).collect::<Vec<Value>>(),
        });
        let mut result = if self.outcome.is_error() && status == "failed" {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        result.structured_content = Some(structured);
        result
    }
}

/// Run `prompt` on `handle` to the end of its turn; `peer` answers approvals (elicitations)
/// when the client takes them; `cancel` (the client cancelled the call) interrupts the turn.
pub(super) async fn run(
    mut handle: AgentHandle,
    prompt: String,
    peer: Option<Peer<RoleServer>>,
    cancel: CancellationToken,
) -> Done {
    let mut session_id = handle.session.id.clone();
    let mut session_cost = None;
    let mut refused = Vec::new();
    let mut interrupted = false;
    let mut unsettled = None;
    let _ = handle.commands.send(UserCommand::Submit(prompt));
    let (outcome, stats) = loop {
        let event = tokio::select! {
            biased;
            event = handle.events.recv() => event,
            ended = handle.worker.ended() => return Done::failed(session_id, ended),
            _ = cancel.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = handle.commands.send(UserCommand::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            return Done::failed(
                session_id,
                "the agent stopped unexpectedly; the log in cairn's data folder says why".into(),
            );
        };
        match event {
            AgentEvent::SessionStored(info) => session_id = info.id,
            AgentEvent::Context(status) => session_cost = status.cost_usd.or(session_cost),
            AgentEvent::ApprovalRequested(request) => {
                let (peer, commands) = (peer.clone(), handle.commands.clone());
                tokio::spawn(async move {
                    let decision = match peer {
                        Some(peer) => elicit(&peer, &request).await,
                        None => ApprovalDecision::Deny { reason: None },
                    };
                    let _ = commands.send(UserCommand::Approval { id: request.id, decision });
                });
            }
            AgentEvent::ToolFinished(done) if done.not_run && !done.by_user && done.decided_by.is_some() => {
                refused.push(Refused { tool: done.tool, summary: done.summary, reason: clip(&done.content, 400) });
            }
            AgentEvent::TurnFinished(summary) if interrupted => break (summary.outcome, summary.stats),
            AgentEvent::TurnFinished(summary) => {
                // Background work (a compaction, memories) lands first, so the cost is whole.
                let _ = handle.commands.send(UserCommand::Settle);
                unsettled = Some(summary);
            }
            AgentEvent::Settled(later) => {
                if let Some(mut summary) = unsettled.take() {
                    summary.stats.absorb(&later);
                    break (summary.outcome, summary.stats);
                }
            }
            _ => {}
        }
    };
    handle.shutdown().await;
    Done { session_id, outcome, stats, session_cost, refused }
}

/// The calling client's user answers an approval: once, for the rest of the session (the rule
/// the terminal's dialog would remember), or no.
async fn elicit(peer: &Peer<RoleServer>, request: &ApprovalRequest) -> ApprovalDecision {
    let (message, choices) = question(request);
    let schema = json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "title": "Your answer", "oneOf": choices}},
        "required": ["answer"],
    });
    let requested_schema = match schema.as_object().cloned().map(ElicitationSchema::from_json_schema) {
        Some(Ok(schema)) => schema,
        _ => {
            return ApprovalDecision::Unanswered {
                why: "cairn could not build the question for the calling client".into(),
            };
        }
    };
    let client =
        peer.peer_info().map(|info| info.client_info.name.clone()).unwrap_or_else(|| "the calling client".into());
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
    match peer.create_elicitation(params).await {
        Ok(result) => {
            match (result.action, result.content.as_ref().and_then(|c| c.get("answer")).and_then(Value::as_str)) {
                (ElicitationAction::Accept, Some("once")) => ApprovalDecision::Approve,
                (ElicitationAction::Accept, Some("session")) => ApprovalDecision::ApproveForSession { prefix: false },
                (ElicitationAction::Accept, _) => ApprovalDecision::Deny {
                    reason: Some(format!("they answered no in {client}, the MCP client cairn serves")),
                },
                (ElicitationAction::Decline, _) => ApprovalDecision::Deny {
                    reason: Some(format!("they declined cairn's question in {client}, the MCP client cairn serves")),
                },
                // Cancel, and whatever a later MCP revision adds (the enum is non-exhaustive).
                (_, _) => ApprovalDecision::Unanswered {
                    why: format!("the question was dismissed in {client} without an answer"),
                },
            }
        }
        Err(e) => ApprovalDecision::Unanswered {
            why: format!("{client}, the MCP client cairn serves, could not ask its user ({e})"),
        },
    }
}

/// The question's text and its choices (`oneOf` titled constants).
fn question(request: &ApprovalRequest) -> (String, Vec<Value>) {
    let mut message = match &request.kind {
        ApprovalKind::Call => {
            format!(
                "cairn asks to run {} {}: {} (asked by {}).",
                request.tool, request.summary, request.reason, request.asked_by
            )
        }
        ApprovalKind::OutsideSandbox { why } => {
            format!("The sandbox stopped `{}` ({why}). May cairn run it again outside the sandbox?", request.summary)
        }
    };
    if let Some(diff) = &request.diff {
        message.push_str(&format!("\n\n{}", clip(diff, 4_000)));
    }
    let mut choices = vec![json!({"const": "once", "title": "Allow once"})];
    if matches!(request.kind, ApprovalKind::Call) && !request.exact.is_empty() {
        choices
            .push(json!({"const": "session", "title": format!("Allow {} for this session", request.exact.join(", "))}));
    }
    choices.push(json!({"const": "no", "title": "No"}));
    (message, choices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_offers_the_session_rule_only_where_there_is_one() {
        let mut request = ApprovalRequest {
            id: 1,
            call_id: "c1".into(),
            tool: "bash".into(),
            summary: "$ cargo test".into(),
            arguments: "{}".into(),
            reason: "runs a command".into(),
            diff: None,
            asked_by: "mode: edit".into(),
            exact: vec!["bash(cargo test)".into()],
            prefix: Vec::new(),
            kind: ApprovalKind::Call,
            agent: None,
            task: None,
        };
        let (message, choices) = question(&request);
        assert!(message.contains("bash $ cargo test: runs a command (asked by mode: edit)"), "{message}");
        let consts: Vec<&str> = choices.iter().filter_map(|c| c["const"].as_str()).collect();
        assert_eq!(consts, ["once", "session", "no"]);
        let schema = json!({"type": "object", "properties": {"answer": {"type": "string", "oneOf": choices}}});
        assert!(ElicitationSchema::from_json_schema(schema.as_object().unwrap().clone()).is_ok());
        request.exact.clear();
        assert_eq!(question(&request).1.len(), 2);
    }
}
