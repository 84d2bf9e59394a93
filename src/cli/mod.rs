//! The command line and the wiring behind it: parse arguments, load config, find the project,
//! open the store, resolve the provider, and hand over to headless mode, the TUI, or a
//! subcommand. No conversation logic lives here.

mod args;
mod editor;
mod error;
mod file_index;
mod interactive;
mod replay;
mod startup;
mod subcommands;

pub use args::{Cli, Command, ContextCommand};
pub use error::CliError;
pub use startup::Startup;

use std::process::ExitCode;

/// Run cairn with parsed arguments; the exit code follows docs/INTERFACE.md (0 ok, 1 failed, 2 bad
/// usage or input).
pub async fn run(cli: Cli) -> ExitCode {
    match dispatch(cli).await {
        Ok(code) => code,
        Err(CliError::OutputClosed) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cairn: {e}");
            ExitCode::from(e.code())
        }
    }
}

async fn dispatch(cli: Cli) -> Result<ExitCode, CliError> {
    let startup = Startup::load(&cli.common)?;
    match &cli.command {
        Some(Command::Sessions { json }) => subcommands::sessions(&startup, *json),
        Some(Command::Export { id }) => subcommands::export(&startup, id),
        Some(Command::Usage { json, days }) => subcommands::usage(&startup, *json, *days),
        Some(Command::Memories { json }) => subcommands::memories(&startup, *json),
        Some(Command::Forget { id }) => subcommands::forget(&startup, id),
        Some(Command::Doctor) => subcommands::doctor(&startup).await,
        Some(Command::Context { command: ContextCommand::Replay { file, window, json, dump, offline } }) => {
            replay::run(
                &startup,
                replay::Args { file, window: *window, json: *json, dump: dump.as_deref(), offline: *offline },
            )
            .await
        }
        None => match &cli.print {
            Some(prompt) => {
                let prompt = read_prompt(prompt)?;
                startup.headless(&cli, prompt).await
            }
            None => {
                if let Some(prompt) = &cli.prompt {
                    check_not_a_mistyped_command(prompt)?;
                }
                interactive::run(&startup, &cli).await
            }
        },
    }
}

/// `cairn sesions` is a typo, not a prompt: a lone word a letter or two from a subcommand is
/// refused with the command it probably meant.
fn check_not_a_mistyped_command(prompt: &str) -> Result<(), CliError> {
    use clap::CommandFactory;
    let word = prompt.trim();
    if word.contains(char::is_whitespace) || word.is_empty() {
        return Ok(());
    }
    let command = Cli::command();
    let meant = command.get_subcommands().map(|c| c.get_name().to_string()).find(|name| {
        let d = edit_distance(&word.to_lowercase(), name);
        d > 0 && d <= 2 && name.len() > 3
    });
    match meant {
        Some(name) => Err(CliError::Usage(format!(
            "`{word}` looks like the command `cairn {name}`; to send it as a prompt, write a few more words"
        ))),
        None => Ok(()),
    }
}

/// Levenshtein distance, for the handful of short words above.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lone_word_near_a_command_is_taken_for_a_typo() {
        assert!(super::check_not_a_mistyped_command("sesions").is_err());
        assert!(super::check_not_a_mistyped_command("docter").is_err());
        assert!(super::check_not_a_mistyped_command("fix the sessions test").is_ok());
        assert!(super::check_not_a_mistyped_command("refactor").is_ok());
        assert_eq!(super::edit_distance("kitten", "sitting"), 3);
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
