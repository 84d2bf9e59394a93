//! How a front end answers the calls the permission rules leave to asking. What is allowed,
//! asked or refused is decided by [`super::permissions::Policy`].

/// How approvals are answered when a call needs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Ask the user (the TUI).
    Ask,
    /// `--yes`: approve everything the rules leave to asking (never what they refuse).
    ApproveAll,
    /// Headless without `--yes`: deny, and tell the model why and which rule asked.
    DenyAll,
}
