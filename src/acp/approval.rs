//! Asking the user through the client (`session/request_permission`): a call the permission
//! rules leave to asking, with the same choices as the terminal's dialog — once, for the
//! session, always in this project (the exact rule or its broader prefix), or no; a command the
//! sandbox stopped, run again outside it or not; and the folder's trust before its files run.

use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, ToolCallContent, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};

use crate::agent::{ApprovalDecision, ApprovalKind, ApprovalRequest};
use crate::trust::TrustQuestion;

const ONCE: &str = "allow-once";
const SESSION: &str = "allow-session";
const SESSION_PREFIX: &str = "allow-session-prefix";
const PROJECT: &str = "allow-project";
const PROJECT_PREFIX: &str = "allow-project-prefix";
const REJECT: &str = "reject";

/// The choices for `request`, as the terminal's dialog offers them.
pub(super) fn options(request: &ApprovalRequest) -> Vec<PermissionOption> {
    let option = |id: &'static str, name: String, kind| PermissionOption::new(id, name, kind);
    if let ApprovalKind::OutsideSandbox { .. } = request.kind {
        return vec![
            option(ONCE, "Run it outside the sandbox".into(), PermissionOptionKind::AllowOnce),
            option(REJECT, "Keep it in the sandbox".into(), PermissionOptionKind::RejectOnce),
        ];
    }
    let mut out = vec![option(ONCE, "Allow once".into(), PermissionOptionKind::AllowOnce)];
    let rules = |rules: &[String]| rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ");
    if !request.exact.is_empty() {
        let exact = rules(&request.exact);
        out.push(option(SESSION, format!("Allow {exact} for this session"), PermissionOptionKind::AllowAlways));
        if !request.prefix.is_empty() {
            let prefix = rules(&request.prefix);
            out.push(option(
                SESSION_PREFIX,
                format!("Allow {prefix} for this session"),
                PermissionOptionKind::AllowAlways,
            ));
        }
        out.push(option(
            PROJECT,
            format!("Always allow {exact} in this project (.cairn/settings.local.toml)"),
            PermissionOptionKind::AllowAlways,
        ));
        if !request.prefix.is_empty() {
            let prefix = rules(&request.prefix);
            out.push(option(
                PROJECT_PREFIX,
                format!("Always allow {prefix} in this project (.cairn/settings.local.toml)"),
                PermissionOptionKind::AllowAlways,
            ));
        }
    }
    out.push(option(REJECT, "Reject".into(), PermissionOptionKind::RejectOnce));
    out
}

/// The agent's answer for what the user chose. A question the client cancelled (the turn was
/// cancelled) is a no; the agent has stopped waiting by then anyway.
pub(super) fn decision(outcome: &RequestPermissionOutcome) -> ApprovalDecision {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return ApprovalDecision::Deny { reason: None };
    };
    match &*selected.option_id.0 {
        ONCE => ApprovalDecision::Approve,
        SESSION => ApprovalDecision::ApproveForSession { prefix: false },
        SESSION_PREFIX => ApprovalDecision::ApproveForSession { prefix: true },
        PROJECT => ApprovalDecision::ApproveForProject { prefix: false },
        PROJECT_PREFIX => ApprovalDecision::ApproveForProject { prefix: true },
        _ => ApprovalDecision::Deny { reason: None },
    }
}

/// The id of the pseudo call the trust question is shown on.
pub(super) const TRUST_CALL: &str = "cairn-folder-trust";
const TRUST: &str = "trust";
const DECLINE: &str = "decline";

/// The folder's trust as a question: what its files would run, and the two answers.
pub(super) fn trust_question(question: &TrustQuestion) -> (ToolCallUpdate, Vec<PermissionOption>) {
    let root = question.root().display();
    let mut text = match &question.trusted_at {
        Some(at) => format!("You trusted {root} on {at}; what its files run has changed since:\n\n"),
        None => format!("{root} has files that configure cairn. Nothing of them runs until you trust the folder:\n\n"),
    };
    for line in question.lines() {
        text.push_str(&format!("- {line}\n"));
    }
    text.push_str("\nWithout trust, cairn works here without the folder's hooks, MCP servers, commands, skills, instruction files and allow rules.");
    let fields = ToolCallUpdateFields::new()
        .title(format!("Trust {root}?"))
        .kind(ToolKind::Other)
        .content(vec![ToolCallContent::from(ContentBlock::from(text))]);
    let options = vec![
        PermissionOption::new(
            TRUST,
            "Trust this folder (recorded in cairn's config)",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(DECLINE, "Work without its settings", PermissionOptionKind::RejectOnce),
    ];
    (ToolCallUpdate::new(TRUST_CALL, fields), options)
}

/// Whether the user trusts the folder; a cancelled question is a no.
pub(super) fn trusted(outcome: &RequestPermissionOutcome) -> bool {
    matches!(outcome, RequestPermissionOutcome::Selected(s) if &*s.option_id.0 == TRUST)
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    use super::*;

    fn request(exact: &[&str], prefix: &[&str], kind: ApprovalKind) -> ApprovalRequest {
        ApprovalRequest {
            id: 1,
            call_id: "c1".into(),
            tool: "bash".into(),
            summary: "$ git push".into(),
            arguments: "{}".into(),
            reason: "runs a command".into(),
            diff: None,
            asked_by: "mode: edit".into(),
            exact: exact.iter().map(|s| s.to_string()).collect(),
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
            kind,
            agent: None,
            task: None,
        }
    }

    fn chosen(id: &str) -> RequestPermissionOutcome {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn the_choices_are_the_dialogs_and_each_answers_as_it_says() {
        let ids = |r: &ApprovalRequest| options(r).into_iter().map(|o| o.option_id.0.to_string()).collect::<Vec<_>>();
        let full = request(&["bash(git push)"], &["bash(git push *)"], ApprovalKind::Call);
        assert_eq!(ids(&full), [ONCE, SESSION, SESSION_PREFIX, PROJECT, PROJECT_PREFIX, REJECT]);
        assert!(options(&full)[2].name.contains("`bash(git push *)` for this session"));
        assert_eq!(ids(&request(&[], &[], ApprovalKind::Call)), [ONCE, REJECT], "nothing to remember: once or no");
        let sandbox = request(&[], &[], ApprovalKind::OutsideSandbox { why: "no network".into() });
        assert_eq!(options(&sandbox)[0].name, "Run it outside the sandbox");
        assert_eq!(decision(&chosen(ONCE)), ApprovalDecision::Approve);
        assert_eq!(decision(&chosen(SESSION_PREFIX)), ApprovalDecision::ApproveForSession { prefix: true });
        assert_eq!(decision(&chosen(PROJECT)), ApprovalDecision::ApproveForProject { prefix: false });
        assert_eq!(decision(&chosen(REJECT)), ApprovalDecision::Deny { reason: None });
        assert_eq!(decision(&RequestPermissionOutcome::Cancelled), ApprovalDecision::Deny { reason: None });
        assert!(
            trusted(&chosen(TRUST)) && !trusted(&chosen(DECLINE)) && !trusted(&RequestPermissionOutcome::Cancelled)
        );
    }
}
