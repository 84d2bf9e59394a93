//! What the prompt asks the agent to do (a slash command turned into a command, or help
//! answered at once), and the events that answer the commands that run no turn.

use serde::Serialize;

use super::error::HeadlessError;
use crate::agent::{
    AgentEvent, BackgroundAnswer, BackgroundRequest, LibraryAnswer, LibraryRequest, SlashCommand, UserCommand,
};

/// What the prompt asks the agent to do.
pub(super) enum Work {
    Command(UserCommand),
    /// Answered without the agent (help); printed as the result.
    Answer(String),
}

/// The event that answers a command at once, for commands that run no turn.
pub(super) fn answer_of(event: &AgentEvent) -> Option<Result<String, HeadlessError>> {
    Some(match event {
        AgentEvent::ModeChanged(m) => Ok(format!("mode is now {m}")),
        AgentEvent::ModelChanged { model, window } => Ok(format!("model is now {model} ({window} tokens)")),
        AgentEvent::ModelRefused { name, known } => {
            Err(HeadlessError::Usage(format!("there is no model {name:?}; choose one of: {}", known.join(", "))))
        }
        AgentEvent::Models(list) => pretty(list),
        AgentEvent::Library(LibraryAnswer::Usage(report)) => {
            report.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::ToolOutput { output, .. }) => output.clone().map_err(HeadlessError::from),
        AgentEvent::Library(LibraryAnswer::Sessions(list)) => {
            list.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::Memories(list)) => {
            list.clone().map_err(HeadlessError::from).and_then(pretty)
        }
        AgentEvent::Library(LibraryAnswer::MemoryChanged(done)) => done.clone().map_err(HeadlessError::from),
        // Servers still starting: wait for the panel that says how they ended up.
        AgentEvent::Mcp(panel) if panel.pending => return None,
        AgentEvent::Mcp(panel) => pretty(panel),
        AgentEvent::ContextBreakdown(breakdown) => pretty(breakdown),
        AgentEvent::Background(BackgroundAnswer::List(jobs)) => pretty(jobs),
        AgentEvent::Background(BackgroundAnswer::Stopped(stopped)) => {
            stopped.clone().map_err(HeadlessError::Usage).and_then(pretty)
        }
        AgentEvent::Background(BackgroundAnswer::Rewound(_)) | AgentEvent::BackgroundRunning(_) => return None,
        AgentEvent::ReportWritten(written) | AgentEvent::Exported(written) => {
            written.clone().map_err(HeadlessError::Failed)
        }
        AgentEvent::Library(LibraryAnswer::Turns(list)) => list.clone().map_err(HeadlessError::from).and_then(pretty),
        AgentEvent::Library(LibraryAnswer::Diff(diff)) => match diff {
            Ok(d) if d.diff.is_empty() => Ok(format!("{}: no file changes", d.title)),
            Ok(d) => Ok(d.diff.trim_end().to_string()),
            Err(e) => Err(e.clone().into()),
        },
        // A rewind that left files as they were says so and fails: nothing is lost quietly.
        AgentEvent::Rewound(outcome) => match outcome {
            Ok(o) if o.complete() => Ok(o.lines().join("\n")),
            Ok(o) => Err(HeadlessError::Failed(o.lines().join("\n"))),
            Err(e) => Err(e.clone().into()),
        },
        AgentEvent::SessionReady { .. }
        | AgentEvent::SessionStored(_)
        | AgentEvent::Attached(_)
        | AgentEvent::Queued { .. }
        | AgentEvent::TurnStarted { .. }
        | AgentEvent::TextDelta(_)
        | AgentEvent::ThinkingDelta(_)
        | AgentEvent::ToolCallStreaming { .. }
        | AgentEvent::Retrying { .. }
        | AgentEvent::AssistantMessage(_)
        | AgentEvent::ToolStarted { .. }
        | AgentEvent::ApprovalRequested(_)
        | AgentEvent::ToolFinished(_)
        | AgentEvent::Usage { .. }
        | AgentEvent::Context(_)
        | AgentEvent::ContextStage(_)
        | AgentEvent::Compaction(_)
        | AgentEvent::Notice { .. }
        | AgentEvent::Commands(_)
        | AgentEvent::RewindPlanned(_)
        | AgentEvent::TurnFinished(_)
        | AgentEvent::Settled(_)
        | AgentEvent::Subagent { .. }
        | AgentEvent::TaskList(_) => return None,
    })
}

/// A listing as `cairn sessions --json` and `cairn memories --json` print it.
fn pretty(list: impl Serialize) -> Result<String, HeadlessError> {
    serde_json::to_string_pretty(&list).map_err(|e| HeadlessError::Failed(e.to_string()))
}

pub(super) fn slash_work(
    command: SlashCommand,
    session: &str,
    custom: &[crate::agent::CommandInfo],
) -> Result<Work, HeadlessError> {
    Ok(match command {
        SlashCommand::Compact => Work::Command(UserCommand::Compact),
        SlashCommand::Mode(m) => Work::Command(UserCommand::SetMode(m)),
        SlashCommand::Model(Some(name)) => Work::Command(UserCommand::SetModel(name)),
        SlashCommand::Model(None) => Work::Command(UserCommand::ListModels),
        SlashCommand::Usage => Work::Command(UserCommand::Library(LibraryRequest::Usage { days: 30 })),
        SlashCommand::Sessions => Work::Command(UserCommand::Library(LibraryRequest::Sessions)),
        SlashCommand::Memories => Work::Command(UserCommand::Library(LibraryRequest::Memories)),
        SlashCommand::Forget(id) => Work::Command(UserCommand::Library(LibraryRequest::Forget(id))),
        SlashCommand::Undo => Work::Command(UserCommand::Undo),
        SlashCommand::Diff(target) => {
            Work::Command(UserCommand::Library(LibraryRequest::Diff { session: session.to_string(), target }))
        }
        SlashCommand::Rewind => {
            return Err(HeadlessError::Usage(format!(
                "/rewind picks a turn in the interactive interface; headless, run `cairn rewind {session} --to TURN` (`cairn rewind {session}` lists the turns)"
            )));
        }
        SlashCommand::Help => Work::Answer(
            crate::agent::COMMANDS
                .iter()
                .map(|(n, a, h)| format!("{n} {a}  {h}"))
                .chain(custom.iter().map(|c| format!("{} {}  {}", c.name, c.argument_hint, c.description)))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        SlashCommand::Mcp(request) => Work::Command(UserCommand::Mcp(request)),
        SlashCommand::Custom { name, args } => Work::Command(UserCommand::RunCommand { name, args }),
        SlashCommand::Context => Work::Command(UserCommand::DescribeContext),
        SlashCommand::Report => Work::Command(UserCommand::WriteReport),
        SlashCommand::Export { format, path } => Work::Command(UserCommand::Export { format, path }),
        SlashCommand::Init => Work::Command(UserCommand::Init),
        SlashCommand::Ps => Work::Command(UserCommand::Background(BackgroundRequest::List)),
        SlashCommand::Stop(id) => Work::Command(UserCommand::Background(BackgroundRequest::Stop(id))),
        SlashCommand::Resume(_) | SlashCommand::New | SlashCommand::Quit => {
            return Err(HeadlessError::Usage(
                "that command works in the interactive interface; headless runs take /compact, /init, /context, /report, /export, /ps, /stop, /mode, /model, /usage, /sessions, /memories, /forget, /undo, /diff, /mcp, /help and the custom commands".into(),
            ));
        }
    })
}
