//! A subagent's role with its parent brief: part of its system prompt, fixed for its life.

use super::agent_types::AgentType;

const SUBAGENT: &str = include_str!("../../assets/prompts/subagent.md");

/// A subagent's section of the system prompt: how a subagent works, its type's prompt, and
/// the parent brief (what the parent is doing and the job it handed over).
pub fn subagent_section(agent: &AgentType, brief: &str, report_limit: usize) -> String {
    let mode_line = if agent.may_edit {
        "You may change files only while the session is in edit mode, and every change is approved as the parent's would be; in plan mode you only read."
    } else {
        "You only read: file changes and commands that are not read-only are refused."
    };
    SUBAGENT
        .replace("{report_limit}", &report_limit.to_string())
        .replace("{mode_line}", mode_line)
        .replace("{agent_type}", &agent.name)
        .replace("{type_prompt}", agent.prompt.trim())
        .replace("{brief}", brief.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::AgentTypes;

    #[test]
    fn the_role_names_the_type_and_carries_the_brief() {
        let types = AgentTypes::builtin();
        let text = subagent_section(types.get("explore").unwrap(), "The parent is fixing the parser.", 9_000);
        assert!(text.contains("## Your type: explore") && text.contains("fixing the parser"));
        assert!(text.contains("9000 characters") && text.contains("You only read"));
        assert!(!text.contains('{'), "every placeholder is filled: {text}");
    }
}
