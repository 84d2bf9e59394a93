//! What a subagent's events do to the transcript: one cell per `task` call, live and resumed.

use std::time::Duration;

use super::super::agent_events::tests::{app, texts};
use crate::agent::{AgentEvent, ApprovalRequest};
use crate::conversation::FinishedCall;
use crate::conversation::{Block, Message, Mode, ToolCall};

#[test]
fn a_subagent_is_one_cell_its_approval_is_labelled_and_its_report_ends_it() {
    use crate::agent::{SubagentEvent, SubagentOutcome};
    let mut app = app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "find it".into() });
    app.on_agent_event(AgentEvent::ToolCallStreaming { call_id: "t1".into(), tool: "task".into() });
    let args = r#"{"description": "find callers", "prompt": "Find every caller of parse.", "agent_type": "general"}"#;
    app.on_agent_event(AgentEvent::AssistantMessage(Message {
        role: crate::conversation::Role::Assistant,
        content: vec![crate::conversation::Block::ToolCall(ToolCall::new("t1", "task", args))],
    }));
    app.on_agent_event(AgentEvent::ToolStarted {
        call_id: "t1".into(),
        tool: "task".into(),
        summary: "general: find callers".into(),
        arguments: args.into(),
    });
    let started = SubagentEvent::Started {
        agent_type: "general".into(),
        description: "find callers".into(),
        session_id: "abc".into(),
        model: "m".into(),
        mode: Mode::Edit,
    };
    app.on_agent_event(AgentEvent::Subagent { call_id: "t1".into(), event: started });
    let sub = |event| AgentEvent::Subagent { call_id: "t1".into(), event };
    app.on_agent_event(sub(SubagentEvent::ToolStarted {
        call_id: "c1".into(),
        tool: "grep".into(),
        summary: "parse".into(),
    }));
    // Its file_write asks: the dialog is the parent's, labelled with the subagent; no tool cell
    // of the child's call appears in the parent's transcript.
    app.on_agent_event(AgentEvent::ApprovalRequested(ApprovalRequest {
        id: 7,
        call_id: "c2".into(),
        tool: "file_write".into(),
        summary: "a.txt".into(),
        arguments: r#"{"path":"a.txt","content":"x"}"#.into(),
        reason: "creates a.txt".into(),
        diff: None,
        asked_by: "mode: edit".into(),
        exact: Vec::new(),
        prefix: Vec::new(),
        kind: crate::agent::ApprovalKind::Call,
        agent: Some("subagent general · find callers".into()),
        task: Some("t1".into()),
    }));
    assert_eq!(app.approval().unwrap().request.agent.as_deref(), Some("subagent general · find callers"));
    assert_eq!(texts(&app), ["user: find it", "subagent: general find callers AwaitingApproval "]);
    app.on_agent_event(sub(SubagentEvent::ToolFinished {
        call_id: "c2".into(),
        tool: "file_write".into(),
        summary: "a.txt".into(),
        is_error: true,
        not_run: true,
    }));
    assert!(app.approval().is_none(), "a finished call's dialog closes");
    app.on_agent_event(sub(SubagentEvent::Finished {
        outcome: SubagentOutcome::Reported,
        report: "two callers".into(),
        usage: Default::default(),
        requests: 2,
    }));
    app.on_agent_event(AgentEvent::ToolFinished(FinishedCall {
        call_id: "t1".into(),
        tool: "task".into(),
        summary: "general: find callers".into(),
        content: "two callers".into(),
        is_error: false,
        exit_code: None,
        diff: None,
        duration: Duration::from_secs(2),
        not_run: false,
        decided_by: None,
        approval: None,
        by_user: false,
        ..Default::default()
    }));
    assert_eq!(
        texts(&app),
        ["user: find it", "subagent: general find callers Done { is_error: false, duration: 2s } two callers"]
    );
}

#[test]
fn a_resumed_session_shows_its_subagents_as_their_cells_with_reports() {
    let mut app = app();
    let mut assistant = Message::assistant("Delegating.");
    let args = r#"{"description": "find callers", "prompt": "Find every caller of parse.", "agent_type": "explore"}"#;
    assistant.content.push(Block::ToolCall(ToolCall::new("t1", "task", args)));
    assistant.content.push(Block::ToolCall(ToolCall::new("t2", "task", args.replace("find callers", "find tests"))));
    let history = vec![
        Message::user("where is parse called?"),
        assistant,
        Message::tool(crate::conversation::ToolResult::ok("t1", "task", "parse is called in src/a.rs:3.")),
    ];
    let session = crate::store::SessionInfo {
        id: "abc123".into(),
        project: crate::store::ProjectId(1),
        title: "where is parse called?".into(),
        provider: crate::config::ProviderKind::Anthropic,
        model: "m".into(),
        mode: Mode::Edit,
        created_at: String::new(),
        updated_at: String::new(),
    };
    app.on_agent_event(AgentEvent::SessionReady {
        session,
        resumed: true,
        history: history.into_iter().map(std::sync::Arc::new).collect(),
        tool_display: [(
            "t1".to_string(),
            crate::store::ToolDisplay {
                diff: None,
                duration_ms: 4_000,
                not_run: false,
                decided_by: None,
                summary: None,
            },
        )]
        .into(),
        mode: Mode::Edit,
        model: "m".into(),
        window: 200_000,
        recap: Default::default(),
    });
    let t = texts(&app);
    assert_eq!(t[1], "assistant: Delegating.");
    assert_eq!(
        t[2],
        "subagent: explore find callers Done { is_error: false, duration: 4s } parse is called in src/a.rs:3."
    );
    // Its result never came (a crash mid-turn): not run, as a tool call would be.
    assert_eq!(t[3], "subagent: explore find tests NotRun ");
}
