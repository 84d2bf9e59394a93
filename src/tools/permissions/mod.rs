//! Permissions: rules with scopes, a parsed check of compound commands, and a read-only command
//! set. [`Policy::decide`] answers allow / ask / deny for one call, says what decided, and for an
//! ask what the dialog may offer to remember. See `docs/permissions.md` for the rule syntax and
//! the precedence.
//!
//! - `rule`: one rule, `TOOL` or `TOOL(PATTERN)`, and what its pattern means per tool.
//! - `rules`: every rule in force, from every level, and which one decides.
//! - `shell`: a command line split into simple commands with tree-sitter-bash.
//! - `readonly`: the commands that cannot change anything.
//! - `decide`: the decision itself; `choices`: what an ask offers to remember.
//! - `settings`: rules from the files, and writing an approved one to the project-local file.

mod choices;
mod decide;
mod readonly;
mod rule;
mod rules;
mod settings;
pub mod shell;

pub use choices::Choices;
pub use decide::{Call, DecidedBy, Decision, Permission, Policy};
pub use rule::{Effect, Level, Rule};
pub use rules::{Origin, RuleError, Rules};
pub use settings::load_rules;
