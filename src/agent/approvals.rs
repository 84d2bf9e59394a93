//! The approval gate of tool calls: the policy a front end chose (ask, approve all, deny all),
//! the tools the user approved for the rest of the session, and the dialog's round trip — a
//! request out as an event, the answer back from the router.

use std::collections::HashSet;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ApprovalDecision, ApprovalRequest};
use super::link::Emitter;
use crate::conversation::ToolCall;
use crate::tools::{ApprovalPolicy, Prepared};

/// What became of a call that needed approval.
pub(super) enum Approval {
    Approved,
    /// Denied, with the text the model gets instead of a result.
    Denied(String),
    Interrupted,
}

pub(super) struct ApprovalGate {
    policy: ApprovalPolicy,
    answers: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>,
    /// Tools the user approved for the rest of the session (`a` in the dialog).
    session_approved: HashSet<String>,
    next_id: u64,
}

impl ApprovalGate {
    pub(super) fn new(policy: ApprovalPolicy, answers: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>) -> Self {
        ApprovalGate { policy, answers, session_approved: HashSet::new(), next_id: 1 }
    }

    /// Whether a person answers (the TUI), so a "needs input" notification makes sense.
    pub(super) fn asks_the_user(&self) -> bool {
        match self.policy {
            ApprovalPolicy::Ask => true,
            ApprovalPolicy::ApproveAll | ApprovalPolicy::DenyAll => false,
        }
    }

    /// Approvals for the session end with it.
    pub(super) fn new_session(&mut self) {
        self.session_approved.clear();
    }

    /// Ask about `call` (unless the policy or an earlier "for the session" answers it) and
    /// wait for the answer or an interrupt.
    pub(super) async fn ask(
        &mut self,
        call: &ToolCall,
        prepared: &Prepared,
        reason: String,
        cancel: &CancellationToken,
        events: &Emitter,
    ) -> Approval {
        match self.policy {
            ApprovalPolicy::ApproveAll => return Approval::Approved,
            ApprovalPolicy::DenyAll => {
                return Approval::Denied(format!(
                    "Denied: cairn is running headless without --yes, so calls that need approval are not run (`{}` {reason}). Do not retry it; continue with what read-only tools can do, or finish and tell the user to rerun with --yes.",
                    call.name
                ));
            }
            ApprovalPolicy::Ask => {}
        }
        if self.session_approved.contains(&call.name) {
            return Approval::Approved;
        }
        let id = self.next_id;
        self.next_id += 1;
        events.emit(AgentEvent::ApprovalRequested(ApprovalRequest {
            id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            summary: prepared.summary.clone(),
            arguments: call.arguments.clone(),
            reason,
            diff: prepared.change.as_ref().map(|c| c.unified_diff()),
        }));
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Approval::Interrupted,
                answer = self.answers.recv() => match answer {
                    // A stale answer to an earlier dialog: ignore it.
                    Some((answered, _)) if answered != id => continue,
                    Some((_, ApprovalDecision::Approve)) => return Approval::Approved,
                    Some((_, ApprovalDecision::ApproveForSession)) => {
                        self.session_approved.insert(call.name.clone());
                        return Approval::Approved;
                    }
                    Some((_, ApprovalDecision::Deny { reason })) => {
                        let why = reason.filter(|r| !r.trim().is_empty()).map(|r| format!(" Their reason: {r}")).unwrap_or_default();
                        return Approval::Denied(format!(
                            "The user denied this `{}` call.{why} Do not repeat it; adjust your approach or ask the user how to proceed.",
                            call.name
                        ));
                    }
                    None => return Approval::Interrupted,
                },
            }
        }
    }
}
