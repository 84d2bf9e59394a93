use super::*;
use crate::config::ProviderKind;
use crate::conversation::{FinishedCall, Message, Mode, Thinking, ThinkingSource, ToolCall, ToolResult};
use crate::store::NewSession;

const KEY: &str = "sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH";

/// A stored session: a prompt with a key in it, thinking, an answer with raw HTML, an image
/// link and a `javascript:` link, an edit with its diff, a command with its whole output.
fn session() -> (Store, SessionInfo) {
    let store = Store::open_in_memory().unwrap();
    let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
    let new = NewSession { provider: ProviderKind::Anthropic, model: "claude-sonnet-4-5", mode: Mode::Edit };
    let session = store.create_session(project, new).unwrap();
    store.append_message(&session.id, &Message::user(format!("fix the test; my key is {KEY}"))).unwrap();
    let mut reply = Message::assistant(
        "Done. <script>alert(1)</script> ![chart](https://example.com/c.png) [run](javascript:alert(2)) and `x` ```",
    );
    reply.content.insert(
        0,
        Block::Thinking(Thinking {
            source: ThinkingSource::Anthropic,
            model: "claude-sonnet-4-5".into(),
            text: "The test divides by the length.".into(),
            signature: "sig".into(),
            redacted: false,
            id: None,
            summary: Vec::new(),
        }),
    );
    let edit = ToolCall::new("c1", "file_edit", r#"{"path": "src/mean.rs", "old_string": "a", "new_string": "b"}"#);
    let bash = ToolCall::new("c2", "bash", r#"{"command": "cargo test"}"#);
    reply.content.push(Block::ToolCall(edit.clone()));
    reply.content.push(Block::ToolCall(bash.clone()));
    store.append_message(&session.id, &reply).unwrap();
    let diff = "--- a/src/mean.rs\n+++ b/src/mean.rs\n@@ -1 +1 @@\n-    total / len\n+    total / len.max(1)\n";
    let edited = FinishedCall {
        call_id: "c1".into(),
        tool: "file_edit".into(),
        arguments: edit.arguments.clone(),
        output: "edited src/mean.rs".into(),
        content: "edited src/mean.rs".into(),
        diff: Some(diff.into()),
        decided_by: Some("user".into()),
        ..FinishedCall::default()
    };
    store.append_tool_message(&session.id, &Message::tool(edited.result()), &edited).unwrap();
    let whole = format!("running 3 tests\n{}test result: ok", "line\n".repeat(50));
    let ran = FinishedCall {
        call_id: "c2".into(),
        tool: "bash".into(),
        arguments: bash.arguments.clone(),
        output: whole,
        content: "running 3 tests\n[… cut …]".into(),
        exit_code: Some(0),
        ..FinishedCall::default()
    };
    let result = ToolResult { exit_code: Some(0), ..ran.result() };
    store.append_tool_message(&session.id, &Message::tool(result), &ran).unwrap();
    store.append_message(&session.id, &Message::assistant("All 3 tests pass.")).unwrap();
    let info = store.resolve_session(project, &session.id).unwrap();
    (store, info)
}

#[test]
fn the_html_folds_calls_and_thinking_colours_the_diff_and_runs_and_fetches_nothing() {
    let (store, info) = session();
    let t = gather_transcript(&store, &info, "/tmp/p", &Redactor::default()).unwrap();
    let html = render_html(&t);
    assert!(!html.contains(KEY), "the key is redacted");
    assert!(html.contains("fix the test; my key is"), "the prompt is there");
    assert!(html.contains("<details class=\"thinking\"><summary>Thinking</summary>"), "thinking is folded");
    assert!(html.contains("The test divides by the length."));
    assert_eq!(html.matches("<details class=\"call").count(), 2, "each call is folded");
    assert!(html.contains("<span class=\"del\">-    total / len</span>"), "removed lines are coloured");
    assert!(html.contains("<span class=\"add\">+    total / len.max(1)</span>"), "added lines are coloured");
    assert!(html.contains("test result: ok"), "the whole output, not the cut the model got");
    assert!(!html.contains("<script"), "raw HTML of the model's is text: {html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<img") && !html.contains("src="), "nothing is fetched");
    assert!(html.contains("[image https://example.com/c.png: chart]"), "an image is named instead");
    assert!(!html.contains("javascript:"), "no link runs code");
    assert!(!html.contains("<link") && !html.contains("@import"), "no style is fetched either");
    assert!(html.contains("exit 0"));
    assert!(!html.contains("old_string"), "an edit shows its diff, not its arguments again");
    assert!(html.contains("&quot;command&quot;: &quot;cargo test&quot;"), "a command shows its arguments");
}

#[test]
fn the_markdown_folds_calls_in_fences_their_text_cannot_close() {
    let (store, info) = session();
    let t = gather_transcript(&store, &info, "/tmp/p", &Redactor::default()).unwrap();
    let md = render_markdown(&t);
    assert!(!md.contains(KEY));
    assert!(md.contains("## You") && md.contains("## cairn"));
    assert!(md.contains("<details><summary>Thinking</summary>"));
    assert!(md.contains("<details><summary>file_edit — src/mean.rs</summary>"), "{md}");
    assert!(md.contains("<details><summary>bash — cargo test (exit 0)</summary>"), "{md}");
    assert!(md.contains("```diff\n--- a/src/mean.rs"), "{md}");
    assert!(md.contains("All 3 tests pass."));
}

#[test]
fn a_fence_outlasts_the_backticks_inside() {
    assert_eq!(fence_for("plain"), "```");
    assert_eq!(fence_for("a ``` b"), "````");
    assert_eq!(fence_for("`````"), "``````");
}

#[test]
fn a_long_output_is_cut_with_a_pointer_to_the_whole() {
    let long = "x".repeat(OUTPUT_SHOWN_CHARS + 10);
    let shown = shown(&long, "abcd");
    assert!(shown.ends_with("[… 10 more characters: `cairn export abcd` (JSONL) has the whole output]"), "{shown}");
}

#[test]
fn an_init_prompt_shows_the_command_with_what_was_sent_folded() {
    let t = Transcript {
        entries: vec![Entry::User {
            text: "/init\n\nWrite the project's AGENTS.md.\n<project_survey>…</project_survey>".into(),
            attachments: Vec::new(),
            images: Vec::new(),
            at: "2026-01-01T00:00:00Z".into(),
            rewound: false,
        }],
        ..Transcript::default()
    };
    let md = render_markdown(&t);
    assert!(md.contains("/init\n\n<details><summary>What cairn sent the model for it</summary>"), "{md}");
    let html = render_html(&t);
    assert!(
        html.contains("<div class=\"prompt\">/init</div><details class=\"attached\"><summary>What cairn sent"),
        "{html}"
    );
}
