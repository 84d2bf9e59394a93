//! The command line and the wiring behind it: parse arguments, load config, find the project,
//! open the store, resolve the provider, and hand over to headless mode, the TUI, or a
//! subcommand. No conversation logic lives here.

mod acp;
mod args;
mod editor;
mod error;
mod file_index;
mod interactive;
mod local;
mod mcp_serve;
mod mistyped;
mod replay;
mod report;
mod rewind;
mod runnable;
mod startup;
mod subcommands;

pub use args::{Cli, Command, ContextCommand};
pub use error::CliError;
pub use startup::Startup;

use std::process::ExitCode;

/// What must run before any thread exists, when the arguments ask for it: cairn's launcher in
/// an editor's terminal, which confines itself (a user namespace takes a single-threaded
/// process) and becomes the command. `None`: start the runtime and [`run`].
pub fn run_before_runtime(cli: &Cli) -> Option<ExitCode> {
    match &cli.command {
        Some(Command::Sandboxed { .. }) => {
            let why = crate::tools::launcher::exec_granted();
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "cairn: {why}");
            // What a shell answers for a command it found but could not run.
            Some(ExitCode::from(126))
        }
        _ => None,
    }
}

/// Run cairn with parsed arguments; the exit code follows docs/INTERFACE.md (0 ok, 1 failed, 2 bad
/// usage or input).
pub async fn run(cli: Cli) -> ExitCode {
    match dispatch(cli).await {
        Ok(code) => code,
        Err(CliError::OutputClosed) => ExitCode::SUCCESS,
        Err(e) => {
            // A terminal that hung up (SIGHUP) makes this write fail; the exit code still says it.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "cairn: {e}");
            ExitCode::from(e.code())
        }
    }
}

async fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    let startup = Startup::load(&cli.common)?;
    match &cli.command {
        Some(Command::Sessions { json }) => subcommands::sessions(&startup, *json),
        Some(Command::Export { id, format, out }) => subcommands::export(&startup, id, *format, out.as_deref()),
        Some(Command::Report { session, since, open, out }) => {
            report::run(&startup, session.as_deref(), since.as_deref(), *open, out.as_deref())
        }
        Some(Command::Usage { json, days }) => subcommands::usage(&startup, *json, *days),
        Some(Command::Memories { json }) => subcommands::memories(&startup, *json),
        Some(Command::Forget { id }) => subcommands::forget(&startup, id),
        Some(Command::Rewind { id, to, code, conversation, both: _, force, json }) => {
            let scope = match (code, conversation) {
                (true, _) => crate::agent::RewindScope::Code,
                (false, true) => crate::agent::RewindScope::Conversation,
                (false, false) => crate::agent::RewindScope::Both,
            };
            match to {
                Some(turn) => rewind::rewind(&startup, id, *turn, scope, *force, *json),
                None => rewind::list(&startup, id, *json),
            }
        }
        Some(Command::Diff { id, turn }) => rewind::diff(&startup, id, *turn),
        Some(Command::Doctor) => subcommands::doctor(&startup).await,
        Some(Command::Acp { trust }) => acp::run(&startup, *trust).await,
        Some(Command::McpServe { trust }) => mcp_serve::run(&startup, *trust).await,
        // Handled before the runtime starts (`run_before_runtime`).
        Some(Command::Sandboxed { .. }) => Ok(run_before_runtime(&cli).unwrap_or(ExitCode::FAILURE)),
        Some(Command::Context {
            command: ContextCommand::Replay { file, window, json, dump, offline, summaries, tool_tokens, report },
        }) => {
            let summaries = if *offline { Some(args::ReplaySummaries::Extractive) } else { *summaries };
            let args = replay::Args {
                file,
                window: *window,
                json: *json,
                dump: dump.as_deref(),
                summaries,
                tool_tokens: *tool_tokens,
                report: report.as_deref(),
            };
            replay::run(&startup, args).await
        }
        None => match &cli.print {
            Some(prompt) => {
                let prompt = read_prompt(prompt)?;
                startup.headless(&cli, prompt).await
            }
            None => {
                if let Some(prompt) = &cli.prompt {
                    mistyped::check(prompt)?;
                }
                interactive::run(&startup, &cli).await
            }
        },
    }
}

/// `-p -` reads the prompt from stdin.
fn read_prompt(arg: &str) -> Result<String, CliError> {
    let prompt = if arg == "-" {
        let mut buf = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
            .map_err(|e| CliError::Usage(format!("cannot read the prompt from stdin: {e}")))?;
        buf
    } else {
        arg.to_string()
    };
    if prompt.trim().is_empty() {
        return Err(CliError::Usage("the prompt is empty; give it after -p, or pipe it in with -p -".into()));
    }
    Ok(prompt)
}

/// A stored time as the listings show it (`cairn sessions`, `cairn rewind`): local, to the
/// minute; a time that does not parse is shown as stored.
fn local_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}
