//! Slash commands: one table that parsing, completion and `/help` all read, so they cannot
//! drift apart. Also `!cmd` / `!!cmd`, the user's own shell commands.

use super::events::CommandInfo;
use super::events::UserCommand;
use super::library::DiffTarget;
use super::mcp_desk::McpRequest;
use crate::conversation::Mode;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlashCommand {
    Compact,
    Memories,
    Forget(String),
    Sessions,
    Resume(Option<String>),
    New,
    Mode(Mode),
    /// A model by name, or the picker.
    Model(Option<String>),
    Context,
    /// `/report`: the session report, as HTML.
    Report,
    /// `/ps`: the background commands, with their state and last lines.
    Ps,
    /// `/stop N`: end background command N.
    Stop(u32),
    /// `/init`: the model writes (or improves) the project's AGENTS.md.
    Init,
    /// `/export [md|html] [FILE]`: the conversation as a readable file.
    Export {
        format: crate::report::ExportFormat,
        path: Option<String>,
    },
    Rewind,
    Undo,
    Diff(DiffTarget),
    Usage,
    Help,
    Quit,
    /// `/mcp`, `/mcp on|off|retry NAME`, `/mcp import`.
    Mcp(McpRequest),
    /// A custom command or skill: `/NAME ARGS`.
    Custom {
        name: String,
        args: String,
    },
}

/// Name, argument hint, and what it does.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/compact", "", "summarise older messages now to free context"),
    ("/memories", "", "list, view, pin and delete this project's memories"),
    ("/forget", "ID", "delete a memory"),
    ("/sessions", "", "list this project's sessions"),
    ("/resume", "[ID]", "switch to another session (the picker when no id)"),
    ("/new", "", "start a fresh session"),
    ("/mode", "edit|plan|ask", "switch mode (Shift+Tab cycles)"),
    ("/context", "", "what the model sees, token by token"),
    ("/report", "", "this session's report, as HTML"),
    ("/rewind", "", "take back code and/or conversation to before a turn"),
    ("/undo", "", "take back the file changes of the last turn that made some"),
    ("/diff", "[N|last]", "what this session (or turn N, or the last turn) changed"),
    ("/model", "[NAME]", "switch model (the picker, with windows and prices, when no name)"),
    ("/usage", "", "cost and tokens per day, project and session"),
    ("/mcp", "[on|off|retry|import]", "MCP servers: state, tools, tokens; /mcp on|off|retry NAME, /mcp import"),
    ("/ps", "", "the background commands: state and last lines of output"),
    ("/stop", "N", "end background command N (its whole process group)"),
    ("/init", "", "write the project's AGENTS.md (or improve the one there), through your approval"),
    ("/export", "[md|html] [FILE]", "this conversation as a readable file (HTML by default; secrets redacted)"),
    ("/help", "", "keys and commands"),
    ("/quit", "", "leave cairn"),
];

/// `None` when `input` is not a slash command (so it is a prompt); otherwise the command or a
/// message saying what is wrong with it. Knows only the built-in commands.
#[cfg(test)]
pub(crate) fn parse_slash(input: &str) -> Option<Result<SlashCommand, String>> {
    parse_slash_with(input, &[])
}

/// [`parse_slash`], also knowing the custom commands and skills in `custom`.
pub fn parse_slash_with(input: &str, custom: &[CommandInfo]) -> Option<Result<SlashCommand, String>> {
    let input = input.trim();
    let rest = input.strip_prefix('/')?;
    // "/ something" or "//" is text, not a command.
    if rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '/') {
        return None;
    }
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    // A path (`/tmp/shot.png what is this?`, as a terminal pastes a dragged file) is text:
    // no command's name has a slash.
    if name.contains('/') {
        return None;
    }
    let needs = |what: &str| Err(format!("/{name} needs {what}"));
    Some(match name {
        "compact" => Ok(SlashCommand::Compact),
        "memories" => Ok(SlashCommand::Memories),
        "forget" if arg.is_empty() => needs("a memory id (see /memories)"),
        "forget" => Ok(SlashCommand::Forget(arg.to_string())),
        "sessions" => Ok(SlashCommand::Sessions),
        "resume" => Ok(SlashCommand::Resume((!arg.is_empty()).then(|| arg.to_string()))),
        "new" => Ok(SlashCommand::New),
        "mode" => match Mode::parse(arg) {
            Some(mode) => Ok(SlashCommand::Mode(mode)),
            None => needs("one of edit, plan, ask"),
        },
        "model" => Ok(SlashCommand::Model((!arg.is_empty()).then(|| arg.to_string()))),
        "usage" => Ok(SlashCommand::Usage),
        "context" => Ok(SlashCommand::Context),
        "report" => Ok(SlashCommand::Report),
        "ps" => Ok(SlashCommand::Ps),
        "stop" => match arg.trim_start_matches('#').parse::<u32>() {
            Ok(n) if n > 0 => Ok(SlashCommand::Stop(n)),
            Ok(_) | Err(_) => needs("the number of a background command (/ps lists them)"),
        },
        "init" if arg.is_empty() => Ok(SlashCommand::Init),
        "init" => Err("/init takes no arguments: it looks at the project itself".to_string()),
        "export" => parse_export(arg),
        "rewind" => Ok(SlashCommand::Rewind),
        "undo" => Ok(SlashCommand::Undo),
        "diff" => match arg {
            "" => Ok(SlashCommand::Diff(DiffTarget::Session)),
            "last" => Ok(SlashCommand::Diff(DiffTarget::LastTurn)),
            n => match n.parse::<u32>() {
                Ok(n) if n > 0 => Ok(SlashCommand::Diff(DiffTarget::Turn(n))),
                Ok(_) | Err(_) => needs("nothing, a turn number (as /rewind lists them) or `last`"),
            },
        },
        "help" => Ok(SlashCommand::Help),
        "quit" | "exit" => Ok(SlashCommand::Quit),
        "mcp" => parse_mcp(arg),
        other if custom.iter().any(|c| c.name.strip_prefix('/') == Some(other)) => {
            Ok(SlashCommand::Custom { name: other.to_string(), args: arg.to_string() })
        }
        other => Err(format!("unknown command /{other}; /help lists the commands")),
    })
}

fn parse_export(arg: &str) -> Result<SlashCommand, String> {
    use crate::report::ExportFormat;
    let (first, rest) = match arg.split_once(char::is_whitespace) {
        Some((f, r)) => (f, r.trim()),
        None => (arg, ""),
    };
    let named = match first {
        "md" | "markdown" => Some(ExportFormat::Markdown),
        "html" => Some(ExportFormat::Html),
        _ => None,
    };
    let path = match named {
        Some(_) => rest,
        None => arg,
    };
    let by_name = if path.ends_with(".md") || path.ends_with(".markdown") {
        Some(ExportFormat::Markdown)
    } else if path.ends_with(".html") || path.ends_with(".htm") {
        Some(ExportFormat::Html)
    } else {
        None
    };
    if let (Some(asked), Some(named_by_file)) = (named, by_name)
        && asked != named_by_file
    {
        return Err(format!("/export {first} {path}: the file's name says another format; give one or the other"));
    }
    let format = named.or(by_name).unwrap_or(ExportFormat::Html);
    Ok(SlashCommand::Export { format, path: (!path.is_empty()).then(|| path.to_string()) })
}

fn parse_mcp(arg: &str) -> Result<SlashCommand, String> {
    let (verb, name) = match arg.split_once(char::is_whitespace) {
        Some((v, n)) => (v, n.trim()),
        None => (arg, ""),
    };
    let named = |make: fn(String) -> McpRequest| {
        if name.is_empty() {
            Err(format!("/mcp {verb} needs a server name (/mcp lists them)"))
        } else {
            Ok(SlashCommand::Mcp(make(name.to_string())))
        }
    };
    match verb {
        "" | "list" => Ok(SlashCommand::Mcp(McpRequest::Show)),
        "on" | "enable" => named(McpRequest::Enable),
        "off" | "disable" => named(McpRequest::Disable),
        "retry" => named(McpRequest::Retry),
        "import" => Ok(SlashCommand::Mcp(McpRequest::Import)),
        other => Err(format!("/mcp takes on, off, retry NAME or import, not `{other}`")),
    }
}

/// The shell prefixes, with what they do, for `/help` and the README.
pub const SHELL_PREFIXES: &[(&str, &str)] = &[
    (
        "!CMD",
        "run CMD in the project (bash's permission rules and sandbox apply; typing it is your approval); the output is shown, not sent to the model",
    ),
    ("!!CMD", "the same, and the command with its output goes into the conversation for the model"),
];

/// `None` when `input` is not a shell command; otherwise the command to run it, or a message
/// saying what is missing.
pub fn parse_shell(input: &str) -> Option<Result<UserCommand, String>> {
    let typed = input.trim();
    let rest = typed.strip_prefix('!')?;
    let (command, into_context) = match rest.strip_prefix('!') {
        Some(command) => (command.trim(), true),
        None => (rest.trim(), false),
    };
    if command.is_empty() {
        return Some(Err("! needs a command, e.g. !git status (or !!git status to show it to the model too)".into()));
    }
    Some(Ok(UserCommand::Shell { typed: typed.to_string(), command: command.to_string(), into_context }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_say_whether_the_output_enters_the_context() {
        let shell = |typed: &str, command: &str, into_context| {
            Some(Ok(UserCommand::Shell { typed: typed.into(), command: command.into(), into_context }))
        };
        assert_eq!(parse_shell(" !git status "), shell("!git status", "git status", false));
        assert_eq!(parse_shell("!! cargo test -q"), shell("!! cargo test -q", "cargo test -q", true));
        assert!(parse_shell("!").unwrap().unwrap_err().contains("needs a command"));
        assert!(parse_shell("!!  ").unwrap().is_err());
        assert_eq!(parse_shell("fix it!"), None);
    }

    #[test]
    fn parses_commands_arguments_and_mistakes() {
        assert_eq!(parse_slash("/compact"), Some(Ok(SlashCommand::Compact)));
        assert_eq!(parse_slash(" /mode  PLAN "), Some(Ok(SlashCommand::Mode(Mode::Plan))));
        assert_eq!(parse_slash("/resume"), Some(Ok(SlashCommand::Resume(None))));
        assert_eq!(parse_slash("/resume ab12"), Some(Ok(SlashCommand::Resume(Some("ab12".into())))));
        assert_eq!(parse_slash("/model"), Some(Ok(SlashCommand::Model(None))), "the picker");
        assert_eq!(parse_slash("/model gpt-5"), Some(Ok(SlashCommand::Model(Some("gpt-5".into())))));
        assert!(parse_slash("/mode fast").unwrap().unwrap_err().contains("edit, plan, ask"));
        assert!(parse_slash("/frobnicate").unwrap().unwrap_err().contains("/help"));
        assert_eq!(parse_slash("fix /src/main.rs"), None);
        assert_eq!(parse_slash("/ not a command"), None);
        assert_eq!(parse_slash("//comment"), None);
        assert_eq!(parse_slash("/diff"), Some(Ok(SlashCommand::Diff(DiffTarget::Session))));
        assert_eq!(parse_slash("/diff 3"), Some(Ok(SlashCommand::Diff(DiffTarget::Turn(3)))));
        assert_eq!(parse_slash("/diff last"), Some(Ok(SlashCommand::Diff(DiffTarget::LastTurn))));
        assert!(parse_slash("/diff 0").unwrap().unwrap_err().contains("a turn number"));
        assert_eq!(parse_slash("/tmp/Screen\\ Shot.png what is this?"), None, "a pasted path");
        assert_eq!(parse_slash("/home/me/notes.md"), None);
    }

    #[test]
    fn custom_commands_parse_only_when_known_and_mcp_takes_its_verbs() {
        let fix = CommandInfo { name: "/fix".into(), argument_hint: String::new(), description: String::new() };
        assert_eq!(
            parse_slash_with("/fix 42 \"a b\"", std::slice::from_ref(&fix)),
            Some(Ok(SlashCommand::Custom { name: "fix".into(), args: "42 \"a b\"".into() }))
        );
        assert!(parse_slash("/fix 42").unwrap().unwrap_err().contains("unknown command /fix"));
        assert_eq!(parse_slash("/mcp"), Some(Ok(SlashCommand::Mcp(McpRequest::Show))));
        assert_eq!(parse_slash("/mcp off git"), Some(Ok(SlashCommand::Mcp(McpRequest::Disable("git".into())))));
        assert!(parse_slash("/mcp on").unwrap().unwrap_err().contains("needs a server name"));
        assert_eq!(parse_slash("/mcp import"), Some(Ok(SlashCommand::Mcp(McpRequest::Import))));
    }

    #[test]
    fn export_stop_and_init_take_what_they_say() {
        use crate::report::ExportFormat::{Html, Markdown};
        let export = |line: &str| parse_slash(line).unwrap();
        assert_eq!(export("/export"), Ok(SlashCommand::Export { format: Html, path: None }));
        assert_eq!(export("/export md"), Ok(SlashCommand::Export { format: Markdown, path: None }));
        assert_eq!(
            export("/export notes/chat.md"),
            Ok(SlashCommand::Export { format: Markdown, path: Some("notes/chat.md".into()) })
        );
        assert_eq!(export("/export html out"), Ok(SlashCommand::Export { format: Html, path: Some("out".into()) }));
        assert!(export("/export html chat.md").unwrap_err().contains("another format"));
        assert_eq!(export("/stop #2"), Ok(SlashCommand::Stop(2)));
        assert!(export("/stop").unwrap_err().contains("/ps lists them"));
        assert!(export("/stop 0").is_err() && export("/stop x").is_err());
        assert_eq!(export("/ps"), Ok(SlashCommand::Ps));
        assert!(export("/init now").unwrap_err().contains("no arguments"));
    }

    #[test]
    fn every_command_in_the_table_parses() {
        for (name, arg, _) in COMMANDS {
            let arg = match *arg {
                "ID" | "[ID]" => "abcd",
                "edit|plan|ask" => "plan",
                "[NAME]" => "m",
                "[on|off|retry|import]" => "off m",
                "[N|last]" => "2",
                "N" => "1",
                "[md|html] [FILE]" => "md notes.md",
                _ => "",
            };
            let line = format!("{name} {arg}");
            assert!(matches!(parse_slash(&line), Some(Ok(_))), "{line}");
        }
    }
}
