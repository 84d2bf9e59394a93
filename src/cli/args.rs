//! The command line, exactly as docs/INTERFACE.md gives it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{ProviderKind, SandboxMode};
use crate::conversation::Mode;

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A terminal coding assistant that keeps long sessions on track",
    long_about = "A terminal coding assistant that keeps long sessions on track.\n\nWith no arguments, opens the full-screen interface for the project in the current directory; `cairn \"fix the test\"` opens it with that prompt sent. With -p, runs one prompt headless and prints the result.",
    after_help = "Environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL, CAIRN_HOME, NO_COLOR.\n`cairn doctor` shows what cairn resolved."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Open the interface with PROMPT sent as the first message
    #[arg(value_name = "PROMPT", conflicts_with = "print")]
    pub prompt: Option<String>,

    /// Run PROMPT headless and print the result ("-" reads it from stdin; "/compact" etc. run a command)
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub print: Option<String>,

    /// Resume the session of this project you were last in
    #[arg(short = 'c', long, visible_alias = "continue", conflicts_with = "session")]
    pub resume: bool,

    /// Resume session ID (a unique prefix is enough)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Approve every tool call without asking
    #[arg(long)]
    pub yes: bool,

    /// The interface in the terminal's own screen: the conversation goes into its scrollback (scroll, search and copy it there), a live prompt stays at the bottom
    #[arg(long, conflicts_with_all = ["full_screen", "print"])]
    pub inline: bool,

    /// The full-screen interface (the default), whatever `[tui] mode` says
    #[arg(long, conflicts_with = "print")]
    pub full_screen: bool,

    /// Trust this folder: its hooks, MCP servers, commands, skills, instruction files and allow rules are used (recorded in config.toml)
    #[arg(long)]
    pub trust: bool,

    /// Headless output format
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, value_name = "FORMAT")]
    pub output_format: OutputFormat,

    /// Most model requests for one headless prompt
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,
}

/// Flags shared by every way of running.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Mode: edit (default), plan (read-only) or ask (no tools)
    #[arg(long, value_enum, global = true)]
    pub mode: Option<Mode>,

    /// Provider: anthropic, openai (any OpenAI-compatible endpoint) or openai-responses
    #[arg(long, value_enum, global = true)]
    pub provider: Option<ProviderKind>,

    /// Thinking / reasoning effort: off, low, medium, high, or a budget in tokens
    #[arg(long, global = true, value_name = "LEVEL", value_parser = crate::config::ThinkingSetting::parse)]
    pub thinking: Option<crate::config::ThinkingSetting>,

    /// Model name
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Endpoint of the provider
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,

    /// Run a GGUF model on a llama-server cairn starts (a .gguf file, a folder of them, or a name in [local] model's folder)
    #[arg(long, global = true, value_name = "MODEL")]
    pub local: Option<String>,

    /// Context window in tokens (overrides the model's known window)
    #[arg(long, global = true, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(4096..))]
    pub context_window: Option<u64>,

    /// Project directory (default: the current one)
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Allow tool calls matching RULE for this run, e.g. 'bash(cargo test *)' (repeatable)
    #[arg(long = "allow", global = true, value_name = "RULE")]
    pub allow: Vec<String>,

    /// Refuse tool calls matching RULE for this run, e.g. 'bash(git push *)' (repeatable; deny beats allow)
    #[arg(long = "deny", global = true, value_name = "RULE")]
    pub deny: Vec<String>,

    /// The OS sandbox for bash: read-only, workspace-write (default) or full-access
    #[arg(long, global = true, value_name = "MODE", value_parser = parse_sandbox)]
    pub sandbox: Option<SandboxMode>,
}

fn parse_sandbox(text: &str) -> Result<SandboxMode, String> {
    SandboxMode::parse(text)
        .ok_or_else(|| format!("{text:?} is not a sandbox mode; use read-only, workspace-write or full-access"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

impl From<OutputFormat> for crate::headless::OutputFormat {
    fn from(format: OutputFormat) -> Self {
        match format {
            OutputFormat::Text => crate::headless::OutputFormat::Text,
            OutputFormat::Json => crate::headless::OutputFormat::Json,
            OutputFormat::StreamJson => crate::headless::OutputFormat::StreamJson,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List this project's sessions, newest first
    Sessions {
        #[arg(long)]
        json: bool,
    },
    /// List this project's memories (and global ones)
    Memories {
        #[arg(long)]
        json: bool,
    },
    /// Delete a memory of this project
    Forget {
        /// The memory's id, as `cairn memories` shows it
        id: String,
    },
    /// Cost and tokens per day, project and session (every project)
    Usage {
        #[arg(long)]
        json: bool,
        /// Days back from today
        #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        days: u32,
    },
    /// Write a session's report as one HTML file (context, cache, cost, outputs, topics, memories), or with --since the spend per day and project; prints its path
    Report {
        /// Session id (a unique prefix is enough); default: the project's latest session
        #[arg(conflicts_with = "since")]
        session: Option<String>,
        /// Spend per day and per project (every project) from this day on: YYYY-MM-DD
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Open the report with the system's viewer once written
        #[arg(long)]
        open: bool,
        /// Where to write it (default: reports/ in the data folder)
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print a session as JSONL (one message a line), or as a readable Markdown or HTML file
    Export {
        /// Session id (a unique prefix is enough)
        id: String,
        /// jsonl (every message, for tools), md or html (the conversation to read or share: tool calls folded, secrets redacted)
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Jsonl)]
        format: ExportFormatArg,
        /// Write to this file instead of standard output (its path is printed)
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Restore a session's code and/or conversation to before one of its turns (no --to: list the turns)
    Rewind {
        /// Session id (a unique prefix is enough)
        id: String,
        /// The turn to go back to before, numbered from 1 as the list shows them
        #[arg(long, value_name = "TURN", value_parser = clap::value_parser!(u32).range(1..))]
        to: Option<u32>,
        /// Restore the files only (the conversation stays)
        #[arg(long, group = "scope")]
        code: bool,
        /// Restore the conversation only (the files stay as they are)
        #[arg(long, group = "scope")]
        conversation: bool,
        /// Restore both (the default)
        #[arg(long, group = "scope")]
        both: bool,
        /// Overwrite files changed by someone else since cairn changed them (listed and skipped otherwise)
        #[arg(long, requires = "to")]
        force: bool,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show what a session (or one of its turns) changed, as a unified diff
    Diff {
        /// Session id (a unique prefix is enough)
        id: String,
        /// Only this turn, numbered from 1 as `cairn rewind ID` lists them
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        turn: Option<u32>,
    },
    /// Show resolved configuration, data paths, provider reachability and terminal capabilities
    Doctor,
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains IDEs, Neovim)
    Acp {
        /// Trust the folders sessions are opened in without asking (recorded in config.toml)
        #[arg(long)]
        trust: bool,
    },
    /// Serve cairn as an MCP server on stdin/stdout, for other agents: a prompt in a session, answered
    #[command(name = "mcp-serve")]
    McpServe {
        /// Trust this folder: its hooks, MCP servers, commands, skills, instruction files and allow rules are used (recorded in config.toml)
        #[arg(long)]
        trust: bool,
    },
    /// cairn's launcher for a command an editor's terminal runs for an ACP session: confines
    /// itself by the sandbox the session granted and becomes the command (never run by hand)
    #[command(hide = true, alias = "unsandboxed")]
    Sandboxed {
        /// The command's words, for the editor to show; the grant holds what runs
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        shown: Vec<String>,
    },
    /// Inspect the context pipeline
    Context {
        #[command(subcommand)]
        command: ContextCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Feed a recorded session (JSONL) through the context pipeline turn by turn and report what
    /// each stage did, what every request would have cost, and any invariant violation
    Replay {
        /// The recorded session, in the JSONL format of `cairn export`
        file: PathBuf,
        /// Context window in tokens (default: the configured model's)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(4096..))]
        window: Option<u64>,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
        /// Also write every request as it would be sent: DIR/0001.jsonl, …, DIR/0007-aux-1.jsonl
        #[arg(long, value_name = "DIR")]
        dump: Option<PathBuf>,
        /// Summarise with the built-in extractive summariser instead of the configured model
        #[arg(long, conflicts_with = "summaries")]
        offline: bool,
        /// Who writes the summaries: the configured model, the extractive summariser, or a
        /// scripted one that fills exactly the length asked for (for cost benchmarks)
        #[arg(long, value_enum, value_name = "WHO")]
        summaries: Option<ReplaySummaries>,
        /// Tokens the tool definitions take in every request (default 1500, the figure
        /// ../shared/bench/costsim.py prices with; a session's own tools may take more)
        #[arg(long, value_name = "N")]
        tool_tokens: Option<u64>,
        /// Also write the replay's session report (HTML, as `cairn report` writes a session's) to FILE
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
    },
}

/// What `cairn export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    Jsonl,
    Md,
    Html,
}

/// Who writes a replay's summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplaySummaries {
    Model,
    Extractive,
    Scripted,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_bare_prompt_opens_the_interface_with_it_and_subcommands_still_win() {
        let cli = Cli::try_parse_from(["cairn", "fix the test", "--mode", "plan"]).unwrap();
        assert_eq!(cli.prompt.as_deref(), Some("fix the test"));
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["cairn", "sessions", "--json"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Sessions { json: true })) && cli.prompt.is_none());
        let cli = Cli::try_parse_from(["cairn", "usage", "--json"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Usage { json: true, days: 30 })));
        assert!(Cli::try_parse_from(["cairn", "hi", "-p", "other"]).is_err());
    }

    #[test]
    fn headless_flags_parse() {
        let cli = Cli::try_parse_from([
            "cairn",
            "-p",
            "hi",
            "--session",
            "ab12",
            "--mode",
            "plan",
            "--output-format",
            "stream-json",
            "--yes",
            "--trust",
            "--max-turns",
            "3",
            "-C",
            "/tmp",
            "--context-window",
            "32000",
        ])
        .unwrap();
        assert_eq!(cli.print.as_deref(), Some("hi"));
        assert_eq!(cli.common.mode, Some(Mode::Plan));
        assert_eq!(cli.output_format, OutputFormat::StreamJson);
        assert_eq!(cli.max_turns, 3);
        assert!(cli.trust && cli.yes);
        assert!(Cli::try_parse_from(["cairn", "--resume", "--session", "x"]).is_err());
        let rules = Cli::try_parse_from([
            "cairn",
            "--allow",
            "bash(git log *)",
            "--deny",
            "bash(rm *)",
            "--allow",
            "file_edit(src/)",
            "--sandbox",
            "read-only",
        ])
        .unwrap();
        assert_eq!(rules.common.allow, ["bash(git log *)", "file_edit(src/)"]);
        assert_eq!(rules.common.deny, ["bash(rm *)"]);
        assert_eq!(rules.common.sandbox, Some(SandboxMode::ReadOnly));
        let err = Cli::try_parse_from(["cairn", "--sandbox", "readonly"]).unwrap_err().to_string();
        assert!(err.contains("read-only, workspace-write or full-access"), "{err}");
        assert!(Cli::try_parse_from(["cairn", "-c"]).unwrap().resume);
        assert!(Cli::try_parse_from(["cairn", "--continue"]).unwrap().resume);
        assert!(Cli::try_parse_from(["cairn", "--context-window", "100"]).is_err());
    }

    #[test]
    fn rewind_takes_one_scope_and_a_turn_from_one() {
        let cli = Cli::try_parse_from(["cairn", "rewind", "ab12", "--to", "3", "--code", "--json"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Rewind { to: Some(3), code: true, json: true, .. })));
        assert!(Cli::try_parse_from(["cairn", "rewind", "ab12", "--to", "3", "--code", "--both"]).is_err());
        assert!(Cli::try_parse_from(["cairn", "rewind", "ab12", "--to", "0"]).is_err());
        assert!(Cli::try_parse_from(["cairn", "rewind", "ab12", "--force"]).is_err(), "--force needs --to");
        assert!(matches!(
            Cli::try_parse_from(["cairn", "diff", "ab12", "--turn", "2"]).unwrap().command,
            Some(Command::Diff { turn: Some(2), .. })
        ));
    }
}
