//! Permissions: rules with scopes, a parsed check of compound commands, and a read-only command
//! set. [`Policy::decide`] answers allow / ask / deny for one call, says what decided, and for an
//! ask what the dialog may offer to remember. See `docs/permissions.md` for the rule syntax, the
//! precedence and the threat model.
//!
//! - `rule`: one rule, `TOOL` or `TOOL(PATTERN)`, and what its pattern means per tool;
//!   `command_match`: a `bash` pattern against a command's words, surely or possibly.
//! - `rules`: every rule in force, from every level, and which one decides.
//! - `shell`: a command line split into simple commands with tree-sitter-bash; `words`: the
//!   value of each word (quotes, `$'…'`, braces, `~`); `globbing`: file patterns expanded.
//! - `invocations`: every program a part runs, through wrappers and inline scripts.
//! - `readonly`: the commands proven not to change anything, with their option grammars;
//!   `reads`: what they read, resolved and walked.
//! - `protected`: paths in the project that commands may not write and file tools always ask
//!   for.
//! - `decide`, `decide_bash`: the decision itself; `choices`: what an ask offers to remember.
//! - `settings`: rules from the files, and writing an approved one to the project-local file.

mod choices;
mod command_match;
mod decide;
mod decide_bash;
mod globbing;
mod invocations;
pub mod protected;
mod readonly;
mod reads;
mod rule;
mod rules;
mod settings;
pub mod shell;
mod words;

pub use choices::Choices;
pub use decide::{Call, DecidedBy, Decision, Permission, Policy};
pub use rule::{Effect, Level, Rule, names_tool};
pub use rules::{Origin, RuleError, Rules};
pub use settings::load_rules;
