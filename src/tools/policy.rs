//! How a front end answers the calls the permission rules leave to asking. What is allowed,
//! asked or refused is decided by [`super::permissions::Policy`].

/// How approvals are answered when a call needs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Ask the user (the TUI; an editor through ACP; an MCP client that takes elicitations).
    Ask,
    /// `--yes`: approve everything the rules leave to asking (never what they refuse).
    ApproveAll,
    /// No one can be asked: deny, and tell the model why, which rule asked and what would let
    /// it run where it is.
    DenyAll(Unattended),
}

/// Where no one can be asked, which says what the model is told a refused call would need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unattended {
    /// `cairn -p` without `--yes`: `--yes` or an `--allow` rule would let it run.
    Headless,
    /// `cairn mcp-serve` for a client that takes no elicitation: only the rules and `--allow`
    /// decide there.
    McpClient,
}
