//! What the model's tool calls go through: the tools (the built-in ones and the MCP servers',
//! as one cache-stable section), what they have read this session (so an edit of a file never
//! read, or changed since, is caught), the permission rules in force, the OS sandbox of `bash`,
//! and the approval gate.

use std::path::PathBuf;
use std::sync::Arc;

use super::approvals::ApprovalGate;
use super::tool_section::ToolSection;
use crate::conversation::{Mode, ToolSpec};
use crate::tools::permissions::{Decision, Effect, Level, Origin, Permission, Policy, Rule};
use crate::tools::{Editor, FileTracker, Registry, SandboxPolicy};

#[derive(Clone)]
pub(super) struct Toolbox {
    section: Arc<ToolSection>,
    /// A subagent's tools: only these of the section are offered and run (its type's, less
    /// what it may not have); `None` offers them all.
    only: Option<Vec<String>>,
    files: Arc<FileTracker>,
    gate: ApprovalGate,
    /// Every file level, the command line's `--allow`/`--deny`, and this session's approvals.
    policy: Policy,
    /// The sandbox `bash` runs in; plan mode runs it in the read-only form.
    sandbox: SandboxPolicy,
    /// The editor whose buffers the file tools use, when the front end offers one (ACP).
    editor: Option<Arc<dyn Editor>>,
}

impl Toolbox {
    pub(super) fn new(section: ToolSection, gate: ApprovalGate, policy: Policy, sandbox: SandboxPolicy) -> Toolbox {
        Toolbox {
            section: Arc::new(section),
            only: None,
            files: Arc::new(FileTracker::default()),
            gate,
            policy,
            sandbox,
            editor: None,
        }
    }

    /// The file tools read and write through `editor`.
    pub(super) fn with_editor(self, editor: Option<Arc<dyn Editor>>) -> Toolbox {
        Toolbox { editor, ..self }
    }

    pub(super) fn editor(&self) -> Option<Arc<dyn Editor>> {
        self.editor.clone()
    }

    /// A subagent's toolbox: these tools of the section only, a gate labelled with it, the rules
    /// of its parent (the session's approvals so far included) and its sandbox, and files read
    /// of its own.
    pub(super) fn for_subagent(&self, only: Vec<String>, gate: ApprovalGate) -> Toolbox {
        Toolbox {
            section: self.section.clone(),
            only: Some(only),
            files: Arc::new(FileTracker::default()),
            gate,
            policy: self.policy.clone(),
            sandbox: self.sandbox.clone(),
            // Its calls are not shown in the editor: its commands run in cairn's own runner.
            editor: self.editor.clone().map(crate::tools::files_only),
        }
    }

    /// Whether the model may call `name` here (it is offered).
    pub(super) fn offers(&self, name: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.iter().any(|n| n == name))
    }

    /// Every tool a call may name, as of now (MCP servers come and go).
    pub(super) fn registry(&self) -> Arc<Registry> {
        self.section.registry()
    }

    /// The tools, as the model sees them: the same in every mode, so a mode switch keeps the
    /// cached prefix (what a mode allows is decided where calls are dispatched).
    pub(super) fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.section.specs(Mode::Edit);
        specs.retain(|s| self.offers(&s.name));
        specs
    }

    pub(super) fn section(&self) -> &ToolSection {
        &self.section
    }

    pub(super) fn files(&self) -> &Arc<FileTracker> {
        &self.files
    }

    pub(super) fn gate(&self) -> &ApprovalGate {
        &self.gate
    }

    /// After a conversation rewind the model no longer saw what it read in the rewound turns;
    /// what the user approved still stands.
    pub(super) fn forget_reads(&mut self) {
        self.files = Arc::new(FileTracker::default());
    }

    pub(super) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The sandbox a cleared command runs in instead of the configured one: plan mode's, or —
    /// in any mode — the read-only one when cairn runs it unasked because it only reads, so a
    /// classifier miss can neither write nor read outside the project.
    pub(super) fn sandbox_of(&self, mode: Mode, decision: &Decision) -> Option<SandboxPolicy> {
        match mode {
            Mode::Plan => Some(self.sandbox.for_read_only_command(&decision.extra_reads)),
            _ if decision.read_only && decision.permission == Permission::Allow => {
                Some(self.sandbox.for_read_only_command(&decision.extra_reads))
            }
            Mode::Edit | Mode::Ask => None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ProjectSettings};
    use crate::tools::permissions::{Call, Permission, load_rules};
    use crate::tools::{Access, ApprovalPolicy};

    fn decide(toolbox: &Toolbox, command: &str) -> Permission {
        let args = serde_json::json!({ "command": command });
        let call = Call { tool: "bash", access: Access::Execute, args: &args, paths: &[] };
        toolbox.policy().decide(Mode::Edit, &call).permission
    }

    #[test]
    fn a_session_rule_ends_with_the_session_and_a_project_rule_stays() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let rules = load_rules(&Config::default(), &root.join("config.toml"), &ProjectSettings::default()).unwrap();
        let mut toolbox = Toolbox::new(
            ToolSection::plain(Arc::new(Registry::builtin())),
            ApprovalGate::new(ApprovalPolicy::Ask, Arc::default()),
            Policy::new(rules, &root),
            SandboxPolicy::full_access(),
        );
        assert_eq!(decide(&toolbox, "touch a"), Permission::Ask);
        toolbox.allow_for_session(&[Rule::parse("bash(touch a)").unwrap()]);
        let written = toolbox.allow_for_project(&[Rule::parse("bash(touch b *)").unwrap()]).unwrap();
        assert_eq!(written, root.join(".cairn/settings.local.toml"));
        assert_eq!(
            (decide(&toolbox, "touch a"), decide(&toolbox, "touch b c")),
            (Permission::Allow, Permission::Allow)
        );
        assert_eq!(decide(&toolbox, "touch a b"), Permission::Ask, "the exact rule covers exactly that command");

        toolbox.new_session();
        assert_eq!(decide(&toolbox, "touch a"), Permission::Ask, "the session's approvals ended with it");
        assert_eq!(decide(&toolbox, "touch b"), Permission::Allow, "the project's rule stays");
    }
}
