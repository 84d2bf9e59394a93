//! What decided a call, as the record keeps it: a `Ruling` from the permission policy, a hook,
//! the user's answer (and the rule the user chose to remember, kept here for the session or
//! written for the project), or the sandbox.

use super::Calls;
use crate::agent::approvals::{Answer, Refuser};
use crate::agent::events::NoticeLevel;
use crate::conversation::FinishedCall;
use crate::tools::Unattended;
use crate::tools::permissions::{DecidedBy, Decision, Permission, Rule};

/// What allowed or refused a call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::agent) struct Ruling {
    /// Headless `decided_by`: a rule, `read-only set`, `mode`, `user`, `user: --yes`, `sandbox`.
    pub by: Option<String>,
    /// The transcript's approval line; `None` where the mode's defaults let a call through.
    pub line: Option<String>,
}

impl Ruling {
    pub(in crate::agent) fn new(by: impl Into<String>, line: impl Into<String>) -> Ruling {
        Ruling { by: Some(by.into()), line: Some(line.into()) }
    }

    /// The policy allowed or refused the call by itself.
    pub(in crate::agent) fn of_policy(d: &Decision) -> Ruling {
        let by = d.decided_by.short();
        let line = match (d.permission, &d.decided_by) {
            (Permission::Allow, DecidedBy::Rule(rule)) => Some(format!("allowed by rule: {rule}")),
            (Permission::Allow, DecidedBy::ReadOnlySet) => Some("allowed: read-only command".to_string()),
            (Permission::Allow, DecidedBy::Mode(_) | DecidedBy::Unparsable) => None,
            (Permission::Deny | Permission::Ask, DecidedBy::Rule(rule)) => Some(format!("refused by rule: {rule}")),
            (Permission::Deny | Permission::Ask, DecidedBy::Mode(mode)) => Some(format!("refused by {mode} mode")),
            (Permission::Deny | Permission::Ask, DecidedBy::ReadOnlySet) => Some("refused".to_string()),
            (Permission::Deny | Permission::Ask, DecidedBy::Unparsable) => {
                Some("refused: the command could not be parsed".to_string())
            }
        };
        Ruling { by: Some(by), line }
    }

    /// A call that asked was refused.
    pub(super) fn refused(by: Refuser, asked_by: &DecidedBy) -> Ruling {
        match by {
            Refuser::User => Ruling::new("user", "denied by you"),
            Refuser::NoOne(Unattended::Headless) => {
                Ruling::new(asked_by.short(), format!("denied: headless without --yes (asked by {})", asked_by.label()))
            }
            Refuser::NoOne(Unattended::McpClient) => Ruling::new(
                asked_by.short(),
                format!("denied: the MCP client cannot ask its user (asked by {})", asked_by.label()),
            ),
            Refuser::Yes => Ruling::new(
                asked_by.short(),
                format!("denied: only you may approve it, and --yes does not (asked by {})", asked_by.label()),
            ),
            Refuser::Unanswered(why) => {
                Ruling::new(asked_by.short(), format!("not answered: {why} (asked by {})", asked_by.label()))
            }
        }
    }

    /// Kept in the call's record.
    pub(super) fn into_record(self, record: &mut FinishedCall) {
        record.decided_by = self.by;
        record.approval = self.line;
    }
}

/// `bash(git push), bash(git push *)`.
fn rule_list(rules: &[Rule]) -> String {
    rules.iter().map(|r| r.text()).collect::<Vec<_>>().join(", ")
}

impl Calls<'_> {
    /// Keep what the user chose to remember, and say who approved.
    pub(super) fn remember(&mut self, answer: Answer, asked_by: &DecidedBy) -> Ruling {
        match answer {
            Answer::Once => Ruling::new("user", "approved by you (once)"),
            Answer::Session(rules) => {
                self.tools.allow_for_session(&rules);
                Ruling::new("user", format!("approved by you for this session: {}", rule_list(&rules)))
            }
            Answer::Project(rules) => match self.tools.allow_for_project(&rules) {
                Ok(path) => {
                    // The user's own act: the next start does not ask about these rules again.
                    let written: Vec<String> = rules
                        .iter()
                        .map(|r| format!(".cairn/settings.local.toml#permissions.allow:{}", r.text()))
                        .collect();
                    if let Err(e) = self.place.trust().adopt(|item| written.contains(&item.id)) {
                        tracing::warn!(error = %e, "could not add the rules to the folder's trust");
                    }
                    let shown = path.strip_prefix(self.place.root()).unwrap_or(&path).display().to_string();
                    Ruling::new(
                        "user",
                        format!("approved by you for this project: {} (saved in {shown})", rule_list(&rules)),
                    )
                }
                Err(e) => {
                    self.link.notice(
                        NoticeLevel::Error,
                        format!("could not save {} for the project: {e}; approved this call once", rule_list(&rules)),
                    );
                    Ruling::new("user", "approved by you (once; the rule could not be saved)")
                }
            },
            Answer::Yes => Ruling::new("user: --yes", format!("approved by --yes (asked by {})", asked_by.label())),
        }
    }
}
