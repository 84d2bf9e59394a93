use std::sync::Arc;

use super::*;
use crate::context::SentView;
use crate::conversation::{Message, ToolSpec};
use crate::prompt::InstructionFile;

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: format!("the {name} tool"),
        input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

fn sources(mode: Mode, tools: &[&str]) -> HeadSources<'static> {
    HeadSources {
        mode,
        instructions: InstructionScan {
            files: vec![InstructionFile {
                path: "AGENTS.md".into(),
                text: "Run make lint.".into(),
                clipped_from: None,
                user: false,
            }],
            skipped: Vec::new(),
        },
        memories: Some("# Memories\n- tabs, never spaces\n"),
        environment: Cow::Borrowed("# Environment\n- Project root: /p\n"),
        skills: "# Skills\n\n- lint: Run the linters",
        role: None,
        task_list: Some("- [~] 1: read src/lib.rs"),
        tools: ToolsOffered { generation: 7, specs: tools.iter().map(|n| spec(n)).collect() },
        sending: Sending { model: "m".into(), max_tokens: 1_000, cache: None, reasoning: None, images: false },
    }
}

#[test]
fn a_head_is_weighed_by_the_tokenizer_only_when_it_counted_both_texts() {
    let mut exact = ExactCounts::default();
    let mut head = RequestHead::assemble(sources(Mode::Plan, &["file_read", "grep"]), &exact, 4.0);
    let request = head.request_with(Vec::new());
    let system_chars: usize =
        request.system.iter().map(|b| b.text.len()).sum::<usize>() + request.tail.as_ref().unwrap().len();
    let tool_chars: usize =
        request.tools.iter().map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len()).sum();
    let estimated = Overhead {
        system: estimate_text_tokens(system_chars, 4.0),
        tools: estimate_text_tokens(tool_chars, 4.0),
        counted: None,
    };
    assert_eq!(*head.overhead(), estimated, "the tail is weighed with the system prompt");

    exact.set_framing(3);
    let [system, tools] = head.template_texts().clone();
    assert!(
        system.ends_with(prompt::mode_line(Mode::Plan, false).unwrap()),
        "the tail is counted with the system prompt"
    );
    exact.insert(&system, 100);
    head.measure(&exact, 4.0);
    assert_eq!(*head.overhead(), estimated, "the tools are not counted yet: both stay estimated");
    exact.insert(&tools, 50);
    head.measure(&exact, 4.0);
    assert_eq!(*head.overhead(), Overhead { system: 103, tools: 50, counted: Some((100, 50)) });
    assert_eq!(head.overhead().total(), 153);
}

#[test]
fn the_skills_are_listed_only_to_an_agent_offered_the_skill_tool() {
    let exact = ExactCounts::default();
    let text =
        |head: &RequestHead| head.request_with(Vec::new()).system.iter().map(|b| b.text.clone()).collect::<String>();
    let without = RequestHead::assemble(sources(Mode::Edit, &["file_read"]), &exact, 4.0);
    assert!(!text(&without).contains("lint: Run the linters"));
    let with = RequestHead::assemble(sources(Mode::Edit, &["file_read", tool_names::SKILL]), &exact, 4.0);
    assert!(text(&with).contains("lint: Run the linters"));
}

#[test]
fn a_completed_head_carries_the_views_messages_and_figures_and_nothing_else_changes() {
    let exact = ExactCounts::default();
    let head = RequestHead::assemble(sources(Mode::Ask, &["file_read"]), &exact, 4.0);
    let (overhead, generation) = (*head.overhead(), head.tools_generation());
    let before = head.request_with(Vec::new());
    let messages = vec![Arc::new(Message::user("hello"))];
    let view = SentView {
        messages: messages.clone(),
        carried_tokens: 0,
        visible_tokens: 2,
        raw_tokens: overhead.total() + 2,
        estimate: 40,
    };
    let prepared = head.complete(view);
    assert_eq!(prepared.request.messages, messages);
    let emptied = ChatRequest { messages: Vec::new(), ..prepared.request.clone() };
    assert_eq!(format!("{emptied:?}"), format!("{before:?}"), "the head is sent as it was assembled");
    assert_eq!(
        (prepared.mode, prepared.overhead, prepared.raw_tokens, prepared.estimate),
        (Mode::Ask, overhead, overhead.total() + 2, 40)
    );
    assert_eq!(
        prepared.request.tool_choice,
        ToolChoice::Auto,
        "ask mode keeps the cached prefix: its calls are refused"
    );
    assert_eq!(generation, 7);
}
