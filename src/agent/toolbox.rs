//! What the model's tool calls go through: the tools, what they have read this session (so an
//! edit of a file never read, or changed since, is caught), and the approval gate.

use std::sync::Arc;

use super::approvals::ApprovalGate;
use crate::conversation::{Mode, ToolSpec};
use crate::tools::{FileTracker, Registry};

pub(super) struct Toolbox {
    registry: Arc<Registry>,
    files: Arc<FileTracker>,
    gate: ApprovalGate,
}

impl Toolbox {
    pub(super) fn new(registry: Arc<Registry>, gate: ApprovalGate) -> Toolbox {
        Toolbox { registry, files: Arc::new(FileTracker::default()), gate }
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

    /// After a conversation rewind the model no longer saw what it read in the rewound turns;
    /// what the user approved still stands.
    pub(super) fn forget_reads(&mut self) {
        self.files = Arc::new(FileTracker::default());
    }

    /// A new session has read nothing and approved nothing.
    pub(super) fn new_session(&mut self) {
        self.files = Arc::new(FileTracker::default());
        self.gate.new_session();
    }
}
