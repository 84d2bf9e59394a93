//! `/init` (the model writes the project's AGENTS.md, with a survey of the project), and custom
//! slash commands and user-invocable skills run as `/NAME ARGS`: the file's text with
//! the arguments in, each `` !`command` `` replaced by its output (run as `bash` would be, with
//! the user's approval unless the command's `allowed-tools` allow it), each `@path` of the
//! project appended, then sent as the prompt — with the command's `model` for that turn.

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::saved_outputs;
use crate::agent::calls::{Calls, tool_alias};
use crate::agent::events::{NoticeLevel, TurnOutcome, TurnSummary};
use crate::prompt::commands::{self, CustomCommand, file_mentions, shell_spans};
use crate::prompt::skills;
use crate::tools::permissions::{Effect, Policy, Rules};
use crate::tools::resolve_path;

/// A file included with `@path` is cut here: the prompt is for instructions, and the model
/// can read the rest.
const MAX_INCLUDE_BYTES: usize = 100_000;

/// Claude Code's tool names in `allowed-tools`, as cairn's permission rules.
fn allowed_rule(text: &str) -> String {
    let (tool, rest) = match text.find('(') {
        Some(i) => (&text[..i], &text[i..]),
        None => (text, ""),
    };
    format!("{}{rest}", tool_alias(tool.trim()))
}

/// What to run for `/NAME`: a command file, or a skill's instructions.
enum Runnable {
    Command(CustomCommand),
    Skill(String),
}

impl Worker {
    fn find_runnable(&self, name: &str, args: &str) -> Option<Result<Runnable, String>> {
        if let Some(command) = self.ext.commands.iter().find(|c| c.name == name) {
            return Some(Ok(Runnable::Command(command.clone())));
        }
        let skill = self.ext.skills.iter().find(|s| s.user_invocable && s.name == name)?;
        Some(skills::load(skill, args).map(Runnable::Skill))
    }

    /// `/init`: the instructions and a survey of the project (read off the turn's thread), sent
    /// as the prompt; the transcript shows `/init`.
    pub(super) async fn run_init(&mut self, cancel: CancellationToken) -> TurnSummary {
        let root = self.place.root().to_path_buf();
        let surveyed = root.clone();
        let survey = tokio::task::spawn_blocking(move || crate::prompt::survey(&surveyed)).await.unwrap_or_default();
        let prompt = crate::prompt::init_prompt(&root, &survey);
        self.run_turn_shown(prompt, Some("/init"), cancel).await
    }

    /// `/NAME ARGS`: expand the command and run it as a prompt.
    pub(super) async fn run_custom_command(
        &mut self,
        name: &str,
        args: &str,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let failed = |error: String| TurnSummary { outcome: TurnOutcome::Failed { error }, stats: Default::default() };
        let command = match self.find_runnable(name, args) {
            None => return failed(format!("unknown command /{name}; /help lists the commands")),
            Some(Err(e)) => return failed(format!("/{name}: {e}")),
            Some(Ok(Runnable::Skill(text))) => return self.run_turn(text, cancel).await,
            Some(Ok(Runnable::Command(command))) => command,
        };
        let mut text = commands::substitute(&command, args);
        text = self.run_shell_spans(&command, text, &cancel).await;
        text = self.include_files(text);
        let previous = self.model.name().to_string();
        let switched = match command.model.as_deref().filter(|m| *m != previous) {
            Some(model) => {
                self.switch_model(model);
                true
            }
            None => false,
        };
        let summary = self.run_turn(text, cancel).await;
        if switched {
            self.switch_model(&previous);
        }
        summary
    }

    /// Each `` !`command` `` replaced by what it printed, or by why it did not run.
    async fn run_shell_spans(&mut self, command: &CustomCommand, text: String, cancel: &CancellationToken) -> String {
        let spans = shell_spans(&text);
        if spans.is_empty() {
            return text;
        }
        let mut rules = Rules::new();
        for rule in &command.allowed_tools {
            if let Err(e) = rules.add_flag(Effect::Allow, &allowed_rule(rule)) {
                self.link
                    .notice(NoticeLevel::Warning, format!("/{}: allowed-tools `{rule}` ignored: {e}", command.name));
            }
        }
        let allowed = Policy::new(rules, self.place.root());
        let mut out = String::new();
        let mut last = 0;
        for (i, (range, shell)) in spans.into_iter().enumerate() {
            out.push_str(&text[last..range.start]);
            let ctx = self.tool_context(cancel);
            let saved = saved_outputs(&self.place, &self.session);
            let mut calls = Calls::new(&mut self.tools, &self.ext, &self.place, &self.link, saved);
            out.push_str(&calls.run_span((&command.name, i), &shell, &allowed, &ctx, cancel).await);
            last = range.end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// The project files the text mentions as `@path`, appended to it.
    fn include_files(&mut self, text: String) -> String {
        let mut included = String::new();
        for mention in file_mentions(&text) {
            let path = resolve_path(self.place.root(), &mention);
            if !path.inside_project {
                self.link
                    .notice(NoticeLevel::Warning, format!("@{mention} is outside the project and was not included"));
                continue;
            }
            let Ok(bytes) = std::fs::read(&path.absolute) else { continue };
            let mut content = String::from_utf8_lossy(&bytes).into_owned();
            if content.len() > MAX_INCLUDE_BYTES {
                let cut = crate::conversation::floor_char_boundary(&content, MAX_INCLUDE_BYTES);
                content.truncate(cut);
                content.push_str("\n[… cut; read the file for the rest]");
            }
            included.push_str(&format!("\n\n<file path=\"{}\">\n{}\n</file>", path.display, content.trim_end()));
        }
        format!("{text}{included}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tools_name_claude_code_tools_as_cairn_rules() {
        assert_eq!(allowed_rule("Bash(git add:*)"), "bash(git add:*)");
    }
}
