//! Headless mode: one prompt (or slash command) through the same agent as the TUI, printed as
//! text, one JSON object, or a stream of JSON lines (docs/INTERFACE.md, "Headless output").

mod error;
mod printer;
mod signals;
mod work;

use std::process::ExitCode;

pub use error::HeadlessError;
pub use printer::OutputFormat;

use crate::agent::{AgentEvent, AgentHandle, TurnOutcome, TurnSummary, UserCommand, parse_shell, parse_slash_with};
use printer::Printer;
use signals::StopSignals;
use work::{Work, answer_of, slash_work};

/// Run `prompt` (or its slash command) on the agent behind `handle` to the end, printing as
/// `format` says.
pub async fn run(mut handle: AgentHandle, prompt: String, format: OutputFormat) -> Result<ExitCode, HeadlessError> {
    let mut session_id = handle.session.id.clone();
    let mut mode = handle.session.mode.to_string();
    let mut model = handle.session.model.clone();
    let work = match (parse_shell(&prompt), parse_slash_with(&prompt, &handle.custom_commands)) {
        (Some(Ok(shell)), _) => Work::Command(shell),
        (Some(Err(message)), _) | (None, Some(Err(message))) => return Err(HeadlessError::Usage(message)),
        (None, Some(Ok(command))) => slash_work(command, &session_id, &handle.custom_commands)?,
        (None, None) => Work::Command(UserCommand::Submit(prompt)),
    };
    let mut printer = Printer::new(format, handle.redactor.clone());
    let command = match work {
        Work::Answer(text) => {
            let summary = TurnSummary { outcome: TurnOutcome::Completed { text }, stats: Default::default() };
            printer.finish(&session_id, &mode, &model, &summary)?;
            handle.shutdown().await;
            return Ok(ExitCode::SUCCESS);
        }
        Work::Command(command) => command,
    };
    // A mode or model switch and the library answer at once; say so and stop.
    let immediate = matches!(
        command,
        UserCommand::SetMode(_)
            | UserCommand::SetModel(_)
            | UserCommand::ListModels
            | UserCommand::Library(_)
            | UserCommand::Mcp(_)
            | UserCommand::DescribeContext
            | UserCommand::Undo
            | UserCommand::WriteReport
            | UserCommand::Export { .. }
            | UserCommand::Background(_)
    );
    // Listening starts before the turn does and lasts the whole run, so no stop signal is
    // missed: one that lands while an event is being printed is held until the loop comes back.
    let mut stops = StopSignals::listen()?;
    let _ = handle.commands.send(command);
    let mut interrupted_once = false;
    // The turn's summary while its background work lands (answered by `Settled`).
    let mut unsettled: Option<TurnSummary> = None;
    loop {
        let event = tokio::select! {
            // Events first: what the worker said before it ended is printed before its end is.
            biased;
            event = handle.events.recv() => event,
            ended = handle.worker.ended() => {
                return Err(HeadlessError::Failed(format!(
                    "{ended}; the messages finished before it are stored (session {session_id}); the log in the data folder has details"
                )));
            }
            signal = stops.recv() => {
                if interrupted_once {
                    // Every completed message is already in the database; leave without waiting.
                    // The running command's group is killed as its task is dropped on the way out.
                    return Err(HeadlessError::Failed(format!(
                        "{signal} after an interrupt; stopped without waiting for the turn to wind down"
                    )));
                }
                interrupted_once = true;
                let _ = handle.commands.send(UserCommand::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            return Err(HeadlessError::Failed("the agent stopped unexpectedly; see the log in the data folder".into()));
        };
        if let AgentEvent::SessionReady { mode: m, model: name, .. } = &event {
            mode = m.to_string();
            model = name.clone();
        } else if let AgentEvent::SessionStored(info) = &event {
            session_id = info.id.clone();
        } else if let AgentEvent::ModeChanged(m) = &event {
            mode = m.to_string();
        } else if let AgentEvent::ModelChanged { model: m, .. } = &event {
            model = m.clone();
        }
        printer.event(&event)?;
        let summary = if let AgentEvent::TurnFinished(summary) = event {
            if immediate || interrupted_once {
                summary
            } else {
                // Background work (a compaction, memory extraction) may still be running: let it
                // land so the result counts every call of the run.
                let _ = handle.commands.send(UserCommand::Settle);
                unsettled = Some(summary);
                continue;
            }
        } else if let AgentEvent::Settled(later) = &event {
            let Some(mut summary) = unsettled.take() else { continue };
            summary.stats.absorb(later);
            summary
        } else if immediate {
            match answer_of(&event) {
                Some(Ok(text)) => TurnSummary { outcome: TurnOutcome::Completed { text }, stats: Default::default() },
                Some(Err(e)) => {
                    handle.shutdown().await;
                    return Err(e);
                }
                None => continue,
            }
        } else {
            continue;
        };
        printer.finish(&session_id, &mode, &model, &summary)?;
        handle.shutdown().await;
        return Ok(if summary.outcome.is_error() { ExitCode::from(1) } else { ExitCode::SUCCESS });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::config::ProviderKind;
    use crate::conversation::Mode;
    use crate::store::SessionInfo;

    fn session() -> SessionInfo {
        SessionInfo {
            id: "0123456789abcdef".into(),
            project: crate::store::ProjectId(1),
            title: String::new(),
            provider: ProviderKind::Anthropic,
            model: "claude-test".into(),
            mode: Mode::Edit,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[tokio::test]
    async fn a_worker_that_panics_fails_the_run_instead_of_hanging_it() {
        let (commands, mut commands_rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel::<AgentEvent>();
        // In a real agent the router holds a sender of events too, so they never close.
        let _router = events_tx.clone();
        let worker = tokio::spawn(async move {
            let _first = commands_rx.recv().await;
            let _events = events_tx;
            panic!("index out of bounds: the len is 0 but the index is 3");
        });
        let handle = AgentHandle::from_parts(commands, events, session(), worker);
        let run = run(handle, "hello".into(), OutputFormat::Json);
        let outcome = tokio::time::timeout(Duration::from_secs(10), run).await.expect("the run hung after the panic");
        let Err(HeadlessError::Failed(message)) = outcome else { panic!("expected a failed run, got {outcome:?}") };
        assert!(message.contains("internal error") && message.contains("the len is 0 but the index is 3"), "{message}");
        assert!(message.contains("0123456789abcdef"), "{message}");
    }
}
