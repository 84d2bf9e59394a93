//! The system prompt, in layers ordered from most to least stable, because the providers cache
//! by prefix (tools, then system, then messages): the static layers (base prompt, tool
//! conventions, the three modes), a cache boundary, the frozen memory block, another boundary,
//! then the dynamic layers (instruction files, environment, session recall). The boundaries are
//! positions — the `cache_breakpoint` on a block — never text sent to the model. The current
//! mode is one line in the request's tail, after the last breakpoint ([`request_tail`]).
//!
//! Knows no provider's wire format: it returns provider-neutral `SystemBlock`s.

mod agent_types;
mod arguments;
pub mod commands;
mod environment;
mod frontmatter;
mod git;
mod init;
mod instructions;
pub mod skills;
mod subagent;
mod task_list;

pub use agent_types::{AgentType, AgentTypes, DEFAULT_TYPE, ModelChoice};
pub use commands::CustomCommand;
pub use environment::Environment;
pub use init::{INIT_LINE, init_prompt, survey};
pub use instructions::{InstructionFile, InstructionScan, fingerprint, render_instructions, scan_instruction_files};
pub use skills::Skill;
pub use subagent::subagent_section;
pub use task_list::task_list_tail;

use crate::conversation::Mode;
use crate::conversation::SystemBlock;

const BASE: &str = include_str!("../../assets/prompts/system.md");
const TOOL_CONVENTIONS: &str = include_str!("../../assets/prompts/tool_conventions.md");
const MODES: &str = include_str!("../../assets/prompts/modes.md");
const MODE_PLAN: &str = include_str!("../../assets/prompts/mode_plan.md");
const MODE_ASK: &str = include_str!("../../assets/prompts/mode_ask.md");
/// Plan mode's line for a subagent: read-only, and its findings go to the parent, not into a plan
/// for the user to approve.
const MODE_PLAN_SUBAGENT: &str = include_str!("../../assets/prompts/mode_plan_subagent.md");
pub const MEMORIES_PREAMBLE: &str = include_str!("../../assets/prompts/memories.md");

/// The one line naming the current mode when it is not edit (the default the static prompt
/// names), sent after the last cache breakpoint of every request — the request's tail — so
/// switching modes changes no cached block.
pub fn mode_line(mode: Mode, subagent: bool) -> Option<&'static str> {
    match mode {
        Mode::Edit => None,
        Mode::Plan if subagent => Some(MODE_PLAN_SUBAGENT.trim_end()),
        Mode::Plan => Some(MODE_PLAN.trim_end()),
        Mode::Ask => Some(MODE_ASK.trim_end()),
    }
}

/// What travels after the last cache breakpoint: the task list, if any, then the mode line.
pub fn request_tail(todo: Option<&str>, mode: Mode, subagent: bool) -> Option<String> {
    match (todo, mode_line(mode, subagent)) {
        (Some(list), Some(line)) => Some(format!("{}\n\n{line}", list.trim_end())),
        (Some(list), None) => Some(list.to_string()),
        (None, line) => line.map(str::to_string),
    }
}

/// The static part: identical bytes in every mode, every session and every turn (the modes
/// are described here once; which one is current travels in the request's tail).
pub fn static_prompt() -> String {
    [BASE.trim_end(), TOOL_CONVENTIONS.trim_end(), MODES.trim_end()].join("\n\n")
}

/// What one request's system prompt is made of.
pub struct PromptParts<'a> {
    /// The memory block, frozen for the session (rebuilt only after a compaction).
    pub memories: Option<&'a str>,
    pub instructions: &'a [InstructionFile],
    /// The environment layer, rendered once per session ([`Environment::render`]).
    pub environment: &'a str,
    /// Session recall, frozen with the memories.
    pub recall: Option<&'a str>,
    /// The skills' names and descriptions ([`skills::listing`]), read once per session: part
    /// of the static, cached prefix. Empty (also for an agent without the `skill` tool): no
    /// skills layer.
    pub skills: &'a str,
    /// A subagent's role and parent brief ([`subagent_section`]): fixed for its life, so it
    /// joins the static part.
    pub role: Option<&'a str>,
}

/// The system prompt for one request.
pub fn build(parts: &PromptParts<'_>) -> Vec<SystemBlock> {
    let mut first = static_prompt();
    if !parts.skills.trim().is_empty() {
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
    fn the_static_part_is_one_text_for_every_mode_and_the_mode_travels_in_the_tail() {
        let text = static_prompt();
        assert!(text.contains("# Using tools") && text.contains("# Modes"));
        for mode in [Mode::Edit, Mode::Plan, Mode::Ask] {
            assert!(text.contains(&format!("**{mode}**")), "{mode} is described once, in the cached part");
        }
        for mode in [Mode::Plan, Mode::Ask] {
            for subagent in [false, true] {
                assert!(mode_line(mode, subagent).is_some_and(|l| l.contains(&format!("{mode} mode"))), "{mode}");
            }
        }
        assert_eq!(request_tail(None, Mode::Edit, false), None, "edit mode is the default the prompt names");
        assert_eq!(request_tail(None, Mode::Plan, false).as_deref(), mode_line(Mode::Plan, false));
        let tail = request_tail(Some("- [ ] 1: read"), Mode::Ask, false).unwrap();
        assert!(tail.starts_with("- [ ] 1: read") && tail.ends_with(mode_line(Mode::Ask, false).unwrap()), "{tail}");
        assert_eq!(request_tail(Some("- [ ] 1: read"), Mode::Edit, false).as_deref(), Some("- [ ] 1: read"));
    }

    #[test]
    fn a_subagent_in_plan_mode_reports_to_its_parent_rather_than_plans_for_the_user() {
        let line = mode_line(Mode::Plan, true).unwrap();
        assert!(line.contains("report what you find to the parent") && !line.contains("answer with a plan"), "{line}");
        assert_eq!(mode_line(Mode::Ask, true), mode_line(Mode::Ask, false));
        assert_eq!(mode_line(Mode::Edit, true), None);
    }

    #[test]
    fn layers_are_ordered_from_stable_to_volatile_with_two_boundaries() {
        let files =
            [InstructionFile { path: "AGENTS.md".into(), text: "use tabs".into(), clipped_from: None, user: false }];
        let environment = env().render();
        let parts = PromptParts {
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
    fn skills_are_listed_in_the_cached_static_block() {
        let environment = env().render();
        let parts = PromptParts {
            memories: None,
            instructions: &[],
            environment: &environment,
            recall: None,
            skills: "# Skills\n- pdf: Fill PDF forms",
            role: None,
        };
        let blocks = build(&parts);
        assert!(blocks[0].cache_breakpoint && blocks[0].text.ends_with("- pdf: Fill PDF forms"));
    }

    #[test]
    fn without_memories_there_is_one_boundary() {
        let environment = env().render();
        let parts = PromptParts {
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
