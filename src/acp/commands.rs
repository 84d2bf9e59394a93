//! What a prompt asks of the agent: cairn's slash commands as ACP offers them (`/compact`,
//! `/context`, `/mode`, `/help` and the custom commands and skills), the user's `!cmd`, or a
//! prompt; and the session modes the client switches between.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, SessionMode, SessionModeId, SessionModeState, UnstructuredCommandInput,
};

use crate::agent::{CommandInfo, ContextBreakdown, SlashCommand, UserCommand, parse_shell, parse_slash_with};
use crate::conversation::{Mode, format_tokens, percent_of};

/// The built-in commands a client lists: name (no slash), argument hint, what it does. The
/// rest of cairn's commands pick from lists or views the terminal interface draws.
const BUILT_IN: &[(&str, &str, &str)] = &[
    ("compact", "", "summarise older messages now to free context"),
    ("init", "", "write the project's AGENTS.md (or improve the one there), through your approval"),
    ("context", "", "what the model sees, part by part, and what the session cost"),
    ("mode", "edit|plan|ask", "switch mode: edit (asks before changes), plan (read-only), ask (no tools)"),
    ("help", "", "the commands cairn takes here"),
];

/// Every command the client offers: the built-in ones and the project's and user's own.
pub(super) fn available(custom: &[CommandInfo]) -> Vec<AvailableCommand> {
    let built_in = BUILT_IN.iter().map(|(name, hint, what)| command(name, hint, what));
    let own = custom.iter().map(|c| command(c.name.trim_start_matches('/'), &c.argument_hint, &c.description));
    built_in.chain(own).collect()
}

fn command(name: &str, hint: &str, what: &str) -> AvailableCommand {
    let input = (!hint.is_empty()).then(|| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint)));
    AvailableCommand::new(name, what).input(input)
}

/// What a prompt's text asks.
#[derive(Debug, PartialEq)]
pub(super) enum Ask {
    /// Run on the agent; a turn answers it (`TurnFinished`).
    Turn(UserCommand),
    /// Answered by the event the agent sends back at once (`/context`, `/mode`).
    Answer(UserCommand),
    /// Answered without the agent: help, or what is wrong with the command.
    Said(String),
}

pub(super) fn parse(text: &str, custom: &[CommandInfo]) -> Ask {
    if let Some(shell) = parse_shell(text) {
        return match shell {
            Ok(command) => Ask::Turn(command),
            Err(message) => Ask::Said(message),
        };
    }
    let Some(slash) = parse_slash_with(text, custom) else { return Ask::Turn(UserCommand::Submit(text.to_string())) };
    match slash {
        Err(message) => Ask::Said(message),
        Ok(SlashCommand::Compact) => Ask::Turn(UserCommand::Compact),
        Ok(SlashCommand::Init) => Ask::Turn(UserCommand::Init),
        Ok(SlashCommand::Context) => Ask::Answer(UserCommand::DescribeContext),
        Ok(SlashCommand::Mode(mode)) => Ask::Answer(UserCommand::SetMode(mode)),
        Ok(SlashCommand::Custom { name, args }) => Ask::Turn(UserCommand::RunCommand { name, args }),
        Ok(SlashCommand::Help) => Ask::Said(help(custom)),
        Ok(_) => Ask::Said(format!(
            "{} works in cairn's terminal interface (`cairn` in the project); here, cairn takes /compact, /init, /context, /mode, /help and the custom commands (/help lists them)",
            text.split_whitespace().next().unwrap_or("that command")
        )),
    }
}

fn help(custom: &[CommandInfo]) -> String {
    let mut out = String::from("cairn's commands here:\n\n");
    for (name, hint, what) in BUILT_IN {
        out.push_str(&format!("- `/{name}{}{hint}` — {what}\n", if hint.is_empty() { "" } else { " " }));
    }
    for c in custom {
        let hint = if c.argument_hint.is_empty() { String::new() } else { format!(" {}", c.argument_hint) };
        out.push_str(&format!("- `{}{hint}` — {}\n", c.name, c.description));
    }
    out.push_str("- `!command` — run a shell command yourself (its output stays out of the context; `!!` adds it)\n");
    out
}

/// The modes, as the client offers them, `current` selected.
pub(super) fn modes(current: Mode) -> SessionModeState {
    let modes = [
        (Mode::Edit, "Edit", "All tools; file changes and commands ask first"),
        (Mode::Plan, "Plan", "Read-only: cairn looks and plans, changes nothing"),
        (Mode::Ask, "Ask", "No tools: questions and answers"),
    ];
    let available =
        modes.into_iter().map(|(mode, name, what)| SessionMode::new(mode.as_str(), name).description(what)).collect();
    SessionModeState::new(SessionModeId::new(current.as_str()), available)
}

/// `/context` as text: the parts of what the model sees, the budget's thresholds, the cache and
/// the cost — the figures of the terminal's `/context` view.
pub(super) fn context_text(b: &ContextBreakdown) -> String {
    let window = b.budget.window;
    let mut out = format!(
        "**Context**: {} of {} tokens ({}%)\n\n| part | tokens |\n| --- | ---: |\n",
        format_tokens(b.total),
        format_tokens(window),
        percent_of(b.total, window)
    );
    for part in &b.parts {
        out.push_str(&format!("| {} | {} |\n", part.name, format_tokens(part.tokens)));
    }
    out.push_str(&format!(
        "\nCompaction at {}, trimming at {}; {} compaction{} so far.\n",
        format_tokens(b.budget.auto_compact),
        format_tokens(b.budget.blocking),
        b.counters.compactions,
        if b.counters.compactions == 1 { "" } else { "s" }
    ));
    if let Some(rate) = b.cache.session_hit_rate {
        out.push_str(&format!("Prompt cache: {:.0}% of prompt tokens read from cache.\n", rate * 100.0));
    }
    if let Some(usd) = b.cost.session_usd {
        out.push_str(&format!("Session cost: {}.\n", crate::config::format_usd(usd)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom() -> Vec<CommandInfo> {
        vec![CommandInfo { name: "/fix".into(), argument_hint: "ISSUE".into(), description: "fix an issue".into() }]
    }

    #[test]
    fn prompts_commands_and_shell_lines_are_told_apart() {
        let custom = custom();
        assert_eq!(parse("fix the test", &custom), Ask::Turn(UserCommand::Submit("fix the test".into())));
        assert_eq!(parse("/compact", &custom), Ask::Turn(UserCommand::Compact));
        assert_eq!(parse("/context", &custom), Ask::Answer(UserCommand::DescribeContext));
        assert_eq!(parse("/mode plan", &custom), Ask::Answer(UserCommand::SetMode(Mode::Plan)));
        assert_eq!(
            parse("/fix 12", &custom),
            Ask::Turn(UserCommand::RunCommand { name: "fix".into(), args: "12".into() })
        );
        assert!(matches!(parse("!ls", &custom), Ask::Turn(UserCommand::Shell { .. })));
        let Ask::Said(text) = parse("/rewind", &custom) else { panic!() };
        assert!(text.contains("terminal interface"), "{text}");
        let Ask::Said(text) = parse("/nope", &custom) else { panic!() };
        assert!(text.contains("unknown command /nope"), "{text}");
        let Ask::Said(help) = parse("/help", &custom) else { panic!() };
        assert!(help.contains("/compact") && help.contains("`/fix ISSUE` — fix an issue"), "{help}");
    }

    #[test]
    fn the_client_lists_the_built_in_and_custom_commands() {
        let names: Vec<String> = available(&custom()).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["compact", "init", "context", "mode", "help", "fix"]);
        let modes = modes(Mode::Plan);
        assert_eq!(modes.current_mode_id, SessionModeId::new("plan"));
        assert_eq!(modes.available_modes.len(), 3);
    }
}
