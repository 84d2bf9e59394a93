//! The approval gate of tool calls: how a front end answers what the permission rules leave to
//! asking (ask the user, `--yes`, or deny headless), and the dialog's round trip — a request
//! out as an event, the answer back from the router. The gate only answers; remembering a rule
//! the user chose is the toolbox's business.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ApprovalDecision, ApprovalKind, ApprovalRequest};
use super::link::Emitter;
use crate::conversation::ToolCall;
use crate::tools::ApprovalPolicy;
use crate::tools::permissions::{Choices, Rule};

/// What the user is asked about one call.
pub(super) struct Question<'a> {
    pub call: &'a ToolCall,
    /// The path or the command, one line.
    pub summary: &'a str,
    pub diff: Option<String>,
    /// What the call does that needs approval.
    pub reason: &'a str,
    /// What left it to the user, as the approval line names it (`mode: edit`, `rule: …`,
    /// `sandbox`).
    pub asked_by: String,
    /// What the dialog may offer to remember.
    pub choices: &'a Choices,
    pub kind: ApprovalKind,
}

/// How a call that needed approval was approved.
#[derive(Clone, Debug)]
pub(super) enum Answer {
    /// `y`.
    Once,
    /// `a`: these rules for the rest of the session.
    Session(Vec<Rule>),
    /// `p`: these rules written to the project-local settings file.
    Project(Vec<Rule>),
    /// `--yes`.
    Yes,
}

/// Who refused a call that needed approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refuser {
    /// `n` in the dialog.
    User,
    /// Headless without `--yes`: what asked decided.
    Headless,
}

/// What became of a call that needed approval.
pub(super) enum Approval {
    Approved(Answer),
    /// Denied, with the text the model gets instead of a result.
    Denied {
        message: String,
        by: Refuser,
    },
    Interrupted,
}

pub(super) struct ApprovalGate {
    policy: ApprovalPolicy,
    answers: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>,
    next_id: u64,
}

impl ApprovalGate {
    pub(super) fn new(policy: ApprovalPolicy, answers: mpsc::UnboundedReceiver<(u64, ApprovalDecision)>) -> Self {
        ApprovalGate { policy, answers, next_id: 1 }
    }

    /// A user answers the dialogs (the TUI), so a sandboxed command can be offered a run
    /// outside the sandbox. Headless runs never lift the sandbox, `--yes` or not.
    pub(super) fn is_interactive(&self) -> bool {
        match self.policy {
            ApprovalPolicy::Ask => true,
            ApprovalPolicy::ApproveAll | ApprovalPolicy::DenyAll => false,
        }
    }

    /// Ask about a call (unless the front end's policy answers it) and wait for the answer or
    /// an interrupt.
    pub(super) async fn ask(&mut self, q: Question<'_>, cancel: &CancellationToken, events: &Emitter) -> Approval {
        match self.policy {
            ApprovalPolicy::ApproveAll => return Approval::Approved(Answer::Yes),
            ApprovalPolicy::DenyAll => {
                return Approval::Denied {
                    message: format!(
                        "Denied: cairn is running headless without --yes, so calls that need approval are not run (`{}` {}; asked by {}). Do not retry it; continue with what read-only tools can do, or finish and tell the user to rerun with --yes or an --allow rule.",
                        q.call.name, q.reason, q.asked_by
                    ),
                    by: Refuser::Headless,
                };
            }
            ApprovalPolicy::Ask => {}
        }
        let id = self.next_id;
        self.next_id += 1;
        let outside_sandbox = matches!(q.kind, ApprovalKind::OutsideSandbox { .. });
        let texts = |rules: &[Rule]| rules.iter().map(|r| r.text().to_string()).collect::<Vec<_>>();
        events.emit(AgentEvent::ApprovalRequested(ApprovalRequest {
            id,
            call_id: q.call.id.clone(),
            tool: q.call.name.clone(),
            summary: q.summary.to_string(),
            arguments: q.call.arguments.clone(),
            reason: q.reason.to_string(),
            diff: q.diff,
            asked_by: q.asked_by,
            exact: texts(&q.choices.exact),
            prefix: texts(&q.choices.prefix),
            kind: q.kind,
        }));
        // The rules the dialog showed: the exact ones, or the prefix the user switched to.
        let shown = |prefix: bool| {
            if prefix && !q.choices.prefix.is_empty() { q.choices.prefix.clone() } else { q.choices.exact.clone() }
        };
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Approval::Interrupted,
                answer = self.answers.recv() => match answer {
                    // A stale answer to an earlier dialog: ignore it.
                    Some((answered, _)) if answered != id => continue,
                    Some((_, ApprovalDecision::Approve)) => return Approval::Approved(Answer::Once),
                    Some((_, ApprovalDecision::ApproveForSession { prefix })) => {
                        let rules = shown(prefix);
                        return Approval::Approved(if rules.is_empty() { Answer::Once } else { Answer::Session(rules) });
                    }
                    Some((_, ApprovalDecision::ApproveForProject { prefix })) => {
                        let rules = shown(prefix);
                        return Approval::Approved(if rules.is_empty() { Answer::Once } else { Answer::Project(rules) });
                    }
                    Some((_, ApprovalDecision::Deny { reason })) => {
                        let why = reason.filter(|r| !r.trim().is_empty()).map(|r| format!(" Their reason: {r}")).unwrap_or_default();
                        let what = if outside_sandbox {
                            "running this command outside the sandbox".to_string()
                        } else {
                            format!("this `{}` call", q.call.name)
                        };
                        return Approval::Denied {
                            message: format!(
                                "The user denied {what}.{why} Do not repeat it; adjust your approach or ask the user how to proceed."
                            ),
                            by: Refuser::User,
                        };
                    }
                    None => return Approval::Interrupted,
                },
            }
        }
    }
}
