//! The mode policy: which calls may run, which need the user's approval, which are refused.
//! Enforced here, in the dispatcher's path, whatever the prompt said or the model asked.
//!
//! [`super::permissions::Policy`] supersedes this once the dispatcher consults it: the same
//! mode defaults, plus rules with scopes, the read-only bash set and per-part command checks.

use super::{Access, ProjectPath};
use crate::conversation::Mode;

/// How approvals are answered when a call needs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Ask the user (the TUI).
    Ask,
    /// `--yes`: approve everything that policy allows.
    ApproveAll,
    /// Headless without `--yes`: deny, and tell the model why.
    DenyAll,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Run,
    NeedsApproval { reason: String },
    Refuse { message: String },
}

/// Decide a call from the mode, what the tool does, and the paths it touches.
pub fn decide(mode: Mode, tool: &str, access: Access, paths: &[ProjectPath]) -> Verdict {
    let outside: Vec<&str> = paths.iter().filter(|p| !p.inside_project).map(|p| p.display.as_str()).collect();
    match mode {
        Mode::Ask => Verdict::Refuse {
            message: format!(
                "`{tool}` was not run: the session is in ask mode, where no tools run. Answer from what you already know, or ask the user to switch to edit mode (Shift+Tab or /mode edit)."
            ),
        },
        Mode::Plan => {
            if !access.is_read_only() {
                return Verdict::Refuse {
                    message: format!(
                        "`{tool}` was not run: the session is in plan mode, which is read-only (file_read, glob, grep and memory tools only). Describe the change in your plan instead; the user can switch to edit mode to carry it out."
                    ),
                };
            }
            if !outside.is_empty() {
                return Verdict::Refuse {
                    message: format!(
                        "`{tool}` was not run: {} is outside the project, and plan mode only reads inside it.",
                        outside.join(", ")
                    ),
                };
            }
            Verdict::Run
        }
        Mode::Edit => match access {
            Access::Read | Access::Memory if outside.is_empty() => Verdict::Run,
            Access::Read | Access::Memory => {
                Verdict::NeedsApproval { reason: format!("reads outside the project: {}", outside.join(", ")) }
            }
            Access::Write if !outside.is_empty() => {
                Verdict::NeedsApproval { reason: format!("writes outside the project: {}", outside.join(", ")) }
            }
            Access::Write => Verdict::NeedsApproval { reason: "changes a file".into() },
            Access::Execute => Verdict::NeedsApproval { reason: "runs a command".into() },
            Access::Network => Verdict::NeedsApproval { reason: "fetches from the network".into() },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(inside: bool) -> ProjectPath {
        ProjectPath {
            absolute: "/x".into(),
            display: if inside { "x" } else { "/etc/x" }.into(),
            inside_project: inside,
        }
    }

    #[test]
    fn plan_mode_refuses_every_write_and_command() {
        for access in [Access::Write, Access::Execute] {
            let v = decide(Mode::Plan, "file_write", access, &[path(true)]);
            assert!(matches!(v, Verdict::Refuse { message } if message.contains("plan mode")));
        }
        assert_eq!(decide(Mode::Plan, "file_read", Access::Read, &[path(true)]), Verdict::Run);
    }

    #[test]
    fn plan_mode_refuses_reads_outside_the_project() {
        assert!(matches!(decide(Mode::Plan, "file_read", Access::Read, &[path(false)]), Verdict::Refuse { .. }));
    }

    #[test]
    fn edit_mode_asks_for_writes_commands_and_outside_reads() {
        assert!(matches!(decide(Mode::Edit, "bash", Access::Execute, &[]), Verdict::NeedsApproval { .. }));
        assert!(matches!(decide(Mode::Edit, "file_edit", Access::Write, &[path(true)]), Verdict::NeedsApproval { .. }));
        assert!(matches!(
            decide(Mode::Edit, "file_read", Access::Read, &[path(false)]),
            Verdict::NeedsApproval { reason } if reason.contains("/etc/x")
        ));
        assert_eq!(decide(Mode::Edit, "grep", Access::Read, &[path(true)]), Verdict::Run);
    }

    #[test]
    fn ask_mode_refuses_everything() {
        assert!(matches!(decide(Mode::Ask, "glob", Access::Read, &[]), Verdict::Refuse { .. }));
    }
}
