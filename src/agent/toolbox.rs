//! What the model's tool calls go through: the tools, what they have read this session (so an
//! edit of a file never read, or changed since, is caught), the permission rules in force, the
//! OS sandbox of `bash`, and the approval gate.

use std::path::PathBuf;
use std::sync::Arc;

use super::approvals::ApprovalGate;
use crate::conversation::{Mode, ToolSpec};
use crate::tools::permissions::{Effect, Level, Origin, Policy, Rule};
use crate::tools::{FileTracker, Registry, SandboxPolicy};

pub(super) struct Toolbox {
    registry: Arc<Registry>,
    files: Arc<FileTracker>,
    gate: ApprovalGate,
    /// Every file level, the command line's `--allow`/`--deny`, and this session's approvals.
    policy: Policy,
    /// The sandbox `bash` runs in; plan mode runs it in the read-only form.
    sandbox: SandboxPolicy,
}

impl Toolbox {
    pub(super) fn new(registry: Arc<Registry>, gate: ApprovalGate, policy: Policy, sandbox: SandboxPolicy) -> Toolbox {
        Toolbox { registry, files: Arc::new(FileTracker::default()), gate, policy, sandbox }
    }

    pub(super) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The tools `mode` offers, as the model sees them.
    pub(super) fn specs(&self, mode: Mode) -> Vec<ToolSpec> {
        self.registry.specs(mode)
    }

    pub(super) fn files(&self) -> &Arc<FileTracker> {
        &self.files
    }

    pub(super) fn gate(&mut self) -> &mut ApprovalGate {
        &mut self.gate
    }

    pub(super) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The sandbox a command runs in, in `mode`.
    pub(super) fn sandbox_for(&self, mode: Mode) -> SandboxPolicy {
        match mode {
            Mode::Plan => self.sandbox.for_plan_mode(),
            Mode::Edit | Mode::Ask => self.sandbox.clone(),
        }
    }

    /// `a` in the dialog: allow these for the rest of the session.
    pub(super) fn allow_for_session(&mut self, rules: &[Rule]) {
        for rule in rules {
            self.policy.rules.push(Effect::Allow, Level::Session, rule.clone(), Origin::Unwritten);
        }
    }

    /// `p` in the dialog: write these to `.cairn/settings.local.toml` and allow them now.
    pub(super) fn allow_for_project(&mut self, rules: &[Rule]) -> Result<PathBuf, String> {
        self.policy.remember(rules)
    }

    /// A new session has read nothing and approved nothing (rules written to the project's
    /// files stay).
    pub(super) fn new_session(&mut self) {
        self.files = Arc::new(FileTracker::default());
        self.policy.rules.forget(Level::Session);
    }
}
