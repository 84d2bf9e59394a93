use super::*;
use crate::agent::{AgentEvent, TurnOutcome, TurnStats, TurnSummary};
use crate::conversation::Message;
use crate::tui::app::fixture::{self, ANSWER};

fn text(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string()).collect()
}

/// Every row of every cell at `width`, as the transcript draws them.
fn all_rows(app: &App, width: u16) -> Vec<String> {
    let rows: Vec<Line<'static>> =
        (0..app.transcript.len()).flat_map(|i| app.transcript.entry_rows(i, width, &app.theme)).collect();
    text(&rows)
}

fn finished() -> AgentEvent {
    AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Completed { text: String::new() },
        stats: TurnStats::default(),
    })
}

/// A turn whose answer streams a few bytes at a time, the scrollback taking what settled
/// after each piece; what it took, in order, and the app.
fn streamed(answer: &str, step: usize, width: impl Fn(usize) -> u16) -> (Vec<String>, App) {
    let mut app = fixture::app();
    let mut taken = Vec::new();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "explain".into() });
    taken.extend(app.take_settled(width(0), false));
    let mut at = 0;
    while at < answer.len() {
        let mut end = (at + step).min(answer.len());
        while !answer.is_char_boundary(end) {
            end += 1;
        }
        app.on_agent_event(AgentEvent::TextDelta(answer[at..end].to_string()));
        at = end;
        taken.extend(app.take_settled(width(at), false));
    }
    app.on_agent_event(AgentEvent::AssistantMessage(Message::assistant(answer)));
    app.on_agent_event(finished());
    taken.extend(app.take_settled(width(answer.len()), false));
    (text(&taken), app)
}

#[test]
fn a_streamed_answer_leaves_block_by_block_each_row_once_and_in_order() {
    let (taken, app) = streamed(ANSWER, 7, |_| 60);
    assert_eq!(taken, all_rows(&app, 60), "the scrollback holds the transcript exactly");
    assert_eq!(app.transcript.committed().cells, app.transcript.len());
    // While it streams, closed blocks leave; the paragraph still being written stays live.
    let mut app = fixture::app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "explain".into() });
    app.on_agent_event(AgentEvent::TextDelta("## Title\n\nFirst **bold** part.\n\nSecond still being".into()));
    let early = text(&app.take_settled(60, false));
    assert_eq!(early, ["› explain", "", "● Title", "", "  First bold part."]);
    assert_eq!(text(&app.live_rows(60)), ["", "  Second still being"]);
    assert!(app.take_settled(60, false).is_empty(), "nothing is handed out twice");
}

#[test]
fn an_open_code_block_leaves_line_by_line_and_a_table_only_whole() {
    let mut app = fixture::app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "code".into() });
    app.on_agent_event(AgentEvent::TextDelta("Here:\n\n```rust\nfn a() {}\nfn b() {}\nfn c".into()));
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("fn b() {}")), "{rows:?}");
    assert!(!rows.iter().any(|r| r.contains("fn c")), "{rows:?}");
    app.on_agent_event(AgentEvent::TextDelta("() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".into()));
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("fn c() {}")), "{rows:?}");
    assert!(!rows.iter().any(|r| r.contains("│ a")), "a table still open stays live: {rows:?}");
    app.on_agent_event(AgentEvent::TextDelta("| 333333 | 4 |\n\nAfter.".into()));
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("│ 333333 │ 4 │")), "{rows:?}");
    assert!(rows.iter().any(|r| r.contains("│ a      │ b │")), "the table is laid out whole: {rows:?}");
}

#[test]
fn a_width_change_mid_stream_neither_repeats_nor_drops_a_word() {
    // Half the answer at 80 columns, the rest at 44: the rows differ, the words do not.
    let (taken, app) = streamed(ANSWER, 5, |at| if at < ANSWER.len() / 2 { 80 } else { 44 });
    // The characters, without the spacing and the quote bars that wrapping adds.
    let chars = |rows: &[String]| -> String {
        rows.iter().flat_map(|r| r.chars()).filter(|c| !c.is_whitespace() && *c != '▌').collect()
    };
    assert_eq!(chars(&taken), chars(&all_rows(&app, 80)));
    assert_eq!(chars(&taken), chars(&all_rows(&app, 44)));
}

#[test]
fn a_prompt_waits_for_what_it_attaches_and_a_running_call_holds_back_what_follows() {
    let mut app = fixture::app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "read @notes.txt".into() });
    assert!(app.take_settled(60, false).is_empty(), "its attachments are not known yet");
    app.on_agent_event(AgentEvent::Attached(vec![crate::agent::Attachment {
        path: "notes.txt".into(),
        detail: "2 lines".into(),
        attached: true,
    }]));
    let rows = text(&app.take_settled(60, false));
    assert_eq!(rows, ["› read @notes.txt", "  ↳ attached notes.txt · 2 lines"]);
    let mut call = Message::assistant("");
    call.content.push(crate::conversation::Block::ToolCall(crate::conversation::ToolCall::new(
        "c1",
        "bash",
        r#"{"command":"make"}"#,
    )));
    app.on_agent_event(AgentEvent::AssistantMessage(call));
    app.notice(crate::tui::NoticeKind::Info, "a notice after the call");
    assert!(app.take_settled(60, false).is_empty(), "the call runs: nothing after it leaves either");
    assert!(text(&app.live_rows(60)).iter().any(|r| r.contains("a notice after the call")));
    app.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Interrupted { partial: String::new() },
        stats: TurnStats::default(),
    }));
    let rows = text(&app.take_settled(60, false));
    assert!(rows[1].starts_with("⊘ bash"), "{rows:?}");
    assert!(rows.iter().any(|r| r.contains("a notice after the call")), "{rows:?}");
    assert!(app.live_rows(60).is_empty());
}

#[test]
fn a_session_reloaded_after_a_rewind_is_not_written_again() {
    let mut app = fixture::app();
    app.on_agent_event(fixture::new_session_ready("s1"));
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "first".into() });
    app.on_agent_event(AgentEvent::AssistantMessage(Message::assistant("one")));
    app.on_agent_event(finished());
    assert!(!app.take_settled(60, false).is_empty());
    // The same session again, shorter: the scrollback already shows it.
    app.on_agent_event(fixture::new_session_ready("s1"));
    assert!(app.take_settled(60, false).is_empty());
    // Another session's history is written.
    let mut other = fixture::new_session_ready("s2");
    if let AgentEvent::SessionReady { history, resumed, .. } = &mut other {
        history.push(std::sync::Arc::new(Message::user("old prompt")));
        *resumed = true;
    }
    app.on_agent_event(other);
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("old prompt")), "{rows:?}");
}

#[test]
fn an_answer_already_in_the_scrollback_is_marked_interrupted_by_a_notice() {
    let mut app = fixture::app();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "go".into() });
    app.on_agent_event(AgentEvent::TextDelta("Partial answer.".into()));
    app.on_agent_event(AgentEvent::AssistantMessage(Message::assistant("Partial answer.")));
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("Partial answer.")));
    app.on_agent_event(AgentEvent::TurnFinished(TurnSummary {
        outcome: TurnOutcome::Interrupted { partial: "Partial answer.".into() },
        stats: TurnStats::default(),
    }));
    let rows = text(&app.take_settled(60, false));
    assert!(rows.iter().any(|r| r.contains("interrupted")), "the mark is said below it: {rows:?}");
}
