//! What the model's tool calls go through: the tools (the built-in ones and the MCP servers',
//! as one cache-stable section), what they have read this session (so an edit of a file never
//! read, or changed since, is caught), and the approval gate.

use std::sync::Arc;

use super::approvals::ApprovalGate;
use super::tool_section::ToolSection;
use crate::conversation::{Mode, ToolSpec};
use crate::tools::{FileTracker, Registry};

pub(super) struct Toolbox {
    section: ToolSection,
    files: Arc<FileTracker>,
    gate: ApprovalGate,
}

impl Toolbox {
    pub(super) fn new(section: ToolSection, gate: ApprovalGate) -> Toolbox {
        Toolbox { section, files: Arc::new(FileTracker::default()), gate }
    }

    /// Every tool a call may name, as of now (MCP servers come and go).
    pub(super) fn registry(&self) -> Arc<Registry> {
        self.section.registry()
    }

    /// The tools `mode` offers, as the model sees them.
    pub(super) fn specs(&self, mode: Mode) -> Vec<ToolSpec> {
        self.section.specs(mode)
    }

    pub(super) fn section(&self) -> &ToolSection {
        &self.section
    }

    pub(super) fn files(&self) -> &Arc<FileTracker> {
        &self.files
    }

    pub(super) fn gate(&mut self) -> &mut ApprovalGate {
        &mut self.gate
    }

    /// A new session has read nothing and approved nothing.
    pub(super) fn new_session(&mut self) {
        self.files = Arc::new(FileTracker::default());
        self.gate.new_session();
    }
}
