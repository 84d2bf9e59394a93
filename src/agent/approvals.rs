//! The approval gate of tool calls: how a front end answers what the permission rules leave to
//! asking (ask the user, `--yes`, or deny headless), and the dialog's round trip — a request
//! out as an event, the answer back from the router through the [`ApprovalDesk`], which finds
//! the dialog by its id (a subagent's gate shares its parent's desk, so answers reach whichever
//! agent asked). The gate only answers; remembering a rule the user chose is the toolbox's
//! business.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ApprovalDecision, ApprovalKind, ApprovalRequest};
use super::link::Emitter;
use crate::conversation::ToolCall;
use crate::tools::permissions::{Choices, Rule};
use crate::tools::{ApprovalPolicy, Unattended};

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
    /// Only a user answering the dialog may approve it (a write to a protected path, a run
    /// outside the sandbox): `--yes` refuses it.
    pub needs_user: bool,
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Refuser {
    /// `n` in the dialog.
    User,
    /// No one can be asked here (headless without `--yes`, an MCP client without
    /// elicitation): what asked decided.
    NoOne(Unattended),
    /// `--yes`, which cannot approve what only the user may.
    Yes,
    /// The front end could not ask its user; why.
    Unanswered(String),
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

/// What the model is told of a call no one could approve, where that is so: what asked, and
/// what would let it run there.
fn refusal(unattended: Unattended, q: &Question<'_>) -> String {
    let (situation, then) = match unattended {
        Unattended::Headless => (
            "cairn is running headless without --yes",
            "finish and tell the user to rerun with --yes or an --allow rule",
        ),
        Unattended::McpClient => (
            "cairn is serving another agent over MCP, and that agent's client cannot ask its user (it takes no elicitation)",
            "finish and say in your answer what needs approval: only the permission rules decide here — a rule in the project's .cairn/settings.local.toml, or --allow where `cairn mcp-serve` is configured",
        ),
    };
    format!(
        "Denied: {situation}, so calls that need approval are not run (`{}` {}; asked by {}). Do not retry it; continue with what read-only tools can do, or {then}.",
        q.call.name, q.reason, q.asked_by
    )
}

/// The dialogs waiting for an answer, by id: every agent of a session (the main one and its
/// subagents) asks through one desk, and the router hands each answer in.
#[derive(Default)]
pub(super) struct ApprovalDesk {
    last_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<ApprovalDecision>>>,
}

impl ApprovalDesk {
    fn open(&self) -> (u64, oneshot::Receiver<ApprovalDecision>) {
        let id = self.last_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        (id, rx)
    }

    /// The user's answer to dialog `id`; an answer to a dialog no longer open is ignored.
    pub(super) fn answer(&self, id: u64, decision: ApprovalDecision) {
        if let Some(waiting) = self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id) {
            let _ = waiting.send(decision);
        }
    }

    fn close(&self, id: u64) {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }
}

/// Removes a dialog from the desk when its question is dropped unanswered (an interrupt).
struct OpenDialog<'a> {
    desk: &'a ApprovalDesk,
    id: u64,
}

impl Drop for OpenDialog<'_> {
    fn drop(&mut self) {
        self.desk.close(self.id);
    }
}

#[derive(Clone)]
pub(super) struct ApprovalGate {
    policy: ApprovalPolicy,
    desk: Arc<ApprovalDesk>,
    /// The subagent whose calls this gate asks about, as the dialog names it.
    asker: Option<String>,
}

impl ApprovalGate {
    pub(super) fn new(policy: ApprovalPolicy, desk: Arc<ApprovalDesk>) -> Self {
        ApprovalGate { policy, desk, asker: None }
    }

    /// The same gate, its dialogs labelled with the subagent that asks.
    pub(super) fn for_subagent(&self, label: String) -> ApprovalGate {
        ApprovalGate { asker: Some(label), ..self.clone() }
    }

    /// A user answers the dialogs (the TUI, an editor, an MCP client that takes elicitations),
    /// so a sandboxed command can be offered a run outside the sandbox. Where no one answers
    /// them, or `--yes` does, the sandbox is never lifted.
    pub(super) fn is_interactive(&self) -> bool {
        match self.policy {
            ApprovalPolicy::Ask => true,
            ApprovalPolicy::ApproveAll | ApprovalPolicy::DenyAll(_) => false,
        }
    }

    /// Why a command the sandbox stopped is not offered a run outside it: as the model is told,
    /// and as the call's approval line says it. `None` where a user is asked.
    pub(super) fn why_no_rerun(&self) -> Option<(&'static str, &'static str)> {
        match self.policy {
            ApprovalPolicy::Ask => None,
            ApprovalPolicy::ApproveAll => Some((
                "cairn runs with --yes, and --yes never runs a command outside the sandbox here: only the user may approve that, in the approval dialog",
                "--yes never lifts it",
            )),
            ApprovalPolicy::DenyAll(Unattended::Headless) => Some((
                "cairn is running headless: it never runs a command outside the sandbox here, --yes or not",
                "headless runs never lift it",
            )),
            ApprovalPolicy::DenyAll(Unattended::McpClient) => Some((
                "cairn is serving another agent over MCP and its client cannot ask its user: it never runs a command outside the sandbox then",
                "an MCP client that cannot ask never lifts it",
            )),
        }
    }

    /// Ask about a call (unless the front end's policy answers it) and wait for the answer or
    /// an interrupt.
    pub(super) async fn ask(&self, q: Question<'_>, cancel: &CancellationToken, events: &Emitter) -> Approval {
        match self.policy {
            ApprovalPolicy::ApproveAll if q.needs_user => {
                return Approval::Denied {
                    message: format!(
                        "Denied: `{}` {}; only the user may approve that, in the approval dialog, and cairn runs with --yes, which does not approve it. Do not retry it or work around it; finish without it and tell the user what needs their approval.",
                        q.call.name, q.reason
                    ),
                    by: Refuser::Yes,
                };
            }
            ApprovalPolicy::ApproveAll => return Approval::Approved(Answer::Yes),
            ApprovalPolicy::DenyAll(unattended) => {
                return Approval::Denied { message: refusal(unattended, &q), by: Refuser::NoOne(unattended) };
            }
            ApprovalPolicy::Ask => {}
        }
        let (id, answer) = self.desk.open();
        let _open = OpenDialog { desk: &self.desk, id };
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
            asked_by: q.asked_by.clone(),
            exact: texts(&q.choices.exact),
            prefix: texts(&q.choices.prefix),
            kind: q.kind,
            agent: self.asker.clone(),
            task: None,
        }));
        // The rules the dialog showed: the exact ones, or the prefix the user switched to.
        let shown = |prefix: bool| {
            if prefix && !q.choices.prefix.is_empty() { q.choices.prefix.clone() } else { q.choices.exact.clone() }
        };
        let decision = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Approval::Interrupted,
            answer = answer => match answer {
                Ok(decision) => decision,
                // Only the dialog itself closes its entry; treated as an interrupt all the same.
                Err(_) => return Approval::Interrupted,
            },
        };
        match decision {
            ApprovalDecision::Approve => Approval::Approved(Answer::Once),
            ApprovalDecision::ApproveForSession { prefix } => {
                let rules = shown(prefix);
                Approval::Approved(if rules.is_empty() { Answer::Once } else { Answer::Session(rules) })
            }
            ApprovalDecision::ApproveForProject { prefix } => {
                let rules = shown(prefix);
                Approval::Approved(if rules.is_empty() { Answer::Once } else { Answer::Project(rules) })
            }
            ApprovalDecision::Deny { reason } => {
                let why =
                    reason.filter(|r| !r.trim().is_empty()).map(|r| format!(" Their reason: {r}")).unwrap_or_default();
                let what = if outside_sandbox {
                    "running this command outside the sandbox".to_string()
                } else {
                    format!("this `{}` call", q.call.name)
                };
                Approval::Denied {
                    message: format!(
                        "The user denied {what}.{why} Do not repeat it; adjust your approach or ask the user how to proceed."
                    ),
                    by: Refuser::User,
                }
            }
            ApprovalDecision::Unanswered { why } => {
                let what = if outside_sandbox { "running this command outside the sandbox" } else { "this call" };
                Approval::Denied {
                    message: format!(
                        "Not run: {why}, so no one approved {what} (`{}` {}; asked by {}). Nobody said no: do not retry it now; continue with what read-only tools can do, or finish and say what needs approval.",
                        q.call.name, q.reason, q.asked_by
                    ),
                    by: Refuser::Unanswered(why),
                }
            }
        }
    }
}
