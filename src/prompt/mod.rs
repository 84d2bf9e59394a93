//! The system prompt, in layers ordered from most to least stable, because the providers cache
//! by prefix (tools, then system, then messages): the static layers (base prompt, tool
//! conventions, mode rules), a cache boundary, the frozen memory block, another boundary, then
//! the dynamic layers (instruction files, environment, session recall). The boundaries are
//! positions — the `cache_breakpoint` on a block — never text sent to the model.
//!
//! Knows no provider's wire format: it returns provider-neutral `SystemBlock`s.

mod agent_types;
mod arguments;
pub mod commands;
mod environment;
mod frontmatter;
mod git;
mod instructions;
pub mod skills;
mod subagent;
mod task_list;

pub use agent_types::{AgentType, AgentTypes, DEFAULT_TYPE, ModelChoice};
pub use commands::CustomCommand;
pub use environment::Environment;
pub use instructions::{
    InstructionFile, InstructionScan, fingerprint, read_instruction_files, render_instructions, scan_instruction_files,
};
pub use skills::Skill;
pub use subagent::subagent_section;
pub use task_list::task_list_tail;

use crate::conversation::Mode;
use crate::conversation::SystemBlock;

const BASE: &str = include_str!("../../assets/prompts/system.md");
const TOOL_CONVENTIONS: &str = include_str!("../../assets/prompts/tool_conventions.md");
const MODE_EDIT: &str = include_str!("../../assets/prompts/mode_edit.md");
const MODE_PLAN: &str = include_str!("../../assets/prompts/mode_plan.md");
const MODE_ASK: &str = include_str!("../../assets/prompts/mode_ask.md");
pub const MEMORIES_PREAMBLE: &str = include_str!("../../assets/prompts/memories.md");

fn mode_rules(mode: Mode) -> &'static str {
    match mode {
        Mode::Edit => MODE_EDIT,
        Mode::Plan => MODE_PLAN,
        Mode::Ask => MODE_ASK,
    }
}

/// The static part: identical bytes for the same mode, in every session and every turn.
pub fn static_prompt(mode: Mode) -> String {
    let tools = if mode == Mode::Ask { "" } else { TOOL_CONVENTIONS.trim_end() };
    [BASE.trim_end(), tools, mode_rules(mode).trim_end()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// What one request's system prompt is made of.
pub struct PromptParts<'a> {
    pub mode: Mode,
    /// The memory block, frozen for the session (rebuilt only after a compaction).
    pub memories: Option<&'a str>,
    pub instructions: &'a [InstructionFile],
    /// The environment layer, rendered once per session ([`Environment::render`]).
    pub environment: &'a str,
    /// Session recall, frozen with the memories.
    pub recall: Option<&'a str>,
    /// The skills' names and descriptions ([`skills::listing`]), read once per session: part
    /// of the static, cached prefix. Empty: no skills layer.
    pub skills: &'a str,
    /// A subagent's role and parent brief ([`subagent_section`]): fixed for its life, so it
    /// joins the static part.
    pub role: Option<&'a str>,
}

/// The system prompt for one request.
pub fn build(parts: &PromptParts<'_>) -> Vec<SystemBlock> {
    let mut first = static_prompt(parts.mode);
    if parts.mode != Mode::Ask && !parts.skills.trim().is_empty() {
        first.push_str("\n\n");
        first.push_str(parts.skills.trim_end());
    }
    if let Some(role) = parts.role.filter(|r| !r.trim().is_empty()) {
        first.push_str("\n\n");
        first.push_str(role.trim_end());
    }
    let mut blocks = vec![SystemBlock { text: first, cache_breakpoint: true }];
    if let Some(memories) = parts.memories.filter(|m| !m.trim().is_empty()) {
        blocks.push(SystemBlock { text: memories.to_string(), cache_breakpoint: true });
    }
    let mut dynamic = render_instructions(parts.instructions);
    dynamic.push_str(parts.environment);
    if let Some(recall) = parts.recall.filter(|r| !r.trim().is_empty()) {
        dynamic.push('\n');
        dynamic.push_str(recall);
    }
    blocks.push(SystemBlock { text: dynamic, cache_breakpoint: false });
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        Environment {
            root: "/p".into(),
            cwd: "/p".into(),
            platform: "linux".into(),
            date: "2026-11-22".into(),
            git_branch: Some("main".into()),
            git_status: Some(" M src/lib.rs".into()),
        }
    }

    #[test]
    fn static_part_is_byte_stable_and_mode_specific() {
        assert_eq!(static_prompt(Mode::Plan), static_prompt(Mode::Plan));
        assert!(static_prompt(Mode::Plan).contains("# Mode: plan"));
        assert!(!static_prompt(Mode::Edit).contains("# Mode: plan"));
        assert!(static_prompt(Mode::Edit).contains("# Using tools"));
        assert!(!static_prompt(Mode::Ask).contains("# Using tools"), "ask mode has no tools to explain");
    }

    #[test]
    fn layers_are_ordered_from_stable_to_volatile_with_two_boundaries() {
        let files = [InstructionFile { path: "AGENTS.md".into(), text: "use tabs".into(), clipped_from: None }];
        let environment = env().render();
        let parts = PromptParts {
            mode: Mode::Edit,
            memories: Some("# Memories\n- x"),
            instructions: &files,
            environment: &environment,
            recall: None,
            skills: "",
            role: None,
        };
        let blocks = build(&parts);
        assert_eq!(blocks.len(), 3);
        assert!(blocks[0].cache_breakpoint && blocks[1].cache_breakpoint && !blocks[2].cache_breakpoint);
        assert!(blocks[1].text.starts_with("# Memories"));
        assert!(blocks[2].text.contains("use tabs") && blocks[2].text.contains("2026-11-22"));
        assert!(blocks[2].text.contains(" M src/lib.rs"));
        assert!(
            !blocks[0].text.contains("2026") && !blocks[1].text.contains("2026"),
            "nothing dated before a boundary"
        );
        assert_eq!(build(&parts), blocks, "same inputs, same bytes");
    }

    #[test]
    fn skills_are_listed_in_the_cached_static_block_and_not_in_ask_mode() {
        let environment = env().render();
        let mut parts = PromptParts {
            mode: Mode::Edit,
            memories: None,
            instructions: &[],
            environment: &environment,
            recall: None,
            skills: "# Skills\n- pdf: Fill PDF forms",
            role: None,
        };
        let blocks = build(&parts);
        assert!(blocks[0].cache_breakpoint && blocks[0].text.ends_with("- pdf: Fill PDF forms"));
        parts.mode = Mode::Ask;
        assert!(!build(&parts)[0].text.contains("pdf"), "ask mode has no skill tool");
    }

    #[test]
    fn without_memories_there_is_one_boundary() {
        let environment = env().render();
        let parts = PromptParts {
            mode: Mode::Edit,
            memories: None,
            instructions: &[],
            environment: &environment,
            recall: None,
            skills: "",
            role: None,
        };
        let blocks = build(&parts);
        assert_eq!(blocks.len(), 2);
        assert!(blocks[0].cache_breakpoint && !blocks[1].cache_breakpoint);
    }
}
