//! The system prompt: static layers (base prompt, mode rules), a cache boundary, then dynamic
//! layers (environment). The boundary is a position — the `cache_breakpoint` on the last
//! static block — never text sent to the model.
//!
//! Knows no provider's wire format: it returns provider-neutral `SystemBlock`s.

mod environment;

pub use environment::Environment;

use crate::conversation::Mode;
use crate::llm::SystemBlock;

const BASE: &str = include_str!("../../assets/prompts/system.md");
const MODE_EDIT: &str = include_str!("../../assets/prompts/mode_edit.md");
const MODE_PLAN: &str = include_str!("../../assets/prompts/mode_plan.md");
const MODE_ASK: &str = include_str!("../../assets/prompts/mode_ask.md");

fn mode_rules(mode: Mode) -> &'static str {
    match mode {
        Mode::Edit => MODE_EDIT,
        Mode::Plan => MODE_PLAN,
        Mode::Ask => MODE_ASK,
    }
}

/// The static part: identical bytes for the same mode, in every session and every turn.
pub fn static_prompt(mode: Mode) -> String {
    format!("{}\n\n{}", BASE.trim_end(), mode_rules(mode).trim_end())
}

/// The whole system prompt for one request.
pub fn build(mode: Mode, env: &Environment) -> Vec<SystemBlock> {
    vec![
        SystemBlock { text: static_prompt(mode), cache_breakpoint: true },
        SystemBlock { text: env.render(), cache_breakpoint: false },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_part_is_byte_stable_and_mode_specific() {
        assert_eq!(static_prompt(Mode::Plan), static_prompt(Mode::Plan));
        assert!(static_prompt(Mode::Plan).contains("# Mode: plan"));
        assert!(!static_prompt(Mode::Edit).contains("# Mode: plan"));
    }

    #[test]
    fn only_the_static_block_is_a_cache_breakpoint_and_volatile_facts_follow_it() {
        let env = Environment {
            root: "/p".into(),
            cwd: "/p".into(),
            platform: "linux".into(),
            date: "2026-11-22".into(),
            git_branch: Some("main".into()),
        };
        let blocks = build(Mode::Edit, &env);
        assert!(blocks[0].cache_breakpoint && !blocks[1].cache_breakpoint);
        assert!(!blocks[0].text.contains("2026-11-22"));
        assert!(blocks[1].text.contains("2026-11-22") && blocks[1].text.contains("main"));
    }
}
