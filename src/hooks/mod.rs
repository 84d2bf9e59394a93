//! Hooks: the user's shell commands run at events — `PreToolUse` (may allow, deny with a
//! reason, or rewrite the arguments), `PostToolUse`, `UserPromptSubmit` (may add context or
//! block), `Stop`, `PreCompact`, `SessionStart` and `Notification`. Each gets the event as
//! JSON on stdin (Claude Code's field names, so its hooks work) and answers by exit code or a
//! JSON object (`answer`); a hook past its timeout has its process group killed (`run`).
//!
//! Runs hooks and reads their answers; what an answer does to the turn is the agent's call.
//! The user's status command runs the same way (`status`).

mod answer;
mod run;
pub mod status;

pub use answer::{HookAnswer, Verdict};

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::{HookConfig, HooksConfig};

/// The events hooks run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    PreCompact,
    SessionStart,
    Notification,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Notification => "Notification",
        }
    }

    /// Whether a hook's `matcher` is about tools (the others ignore it).
    pub fn has_tool(self) -> bool {
        match self {
            HookEvent::PreToolUse | HookEvent::PostToolUse => true,
            HookEvent::UserPromptSubmit
            | HookEvent::Stop
            | HookEvent::PreCompact
            | HookEvent::SessionStart
            | HookEvent::Notification => false,
        }
    }
}

/// One hook that ran, and what it said.
#[derive(Clone, Debug, PartialEq)]
pub struct HookOutcome {
    pub command: String,
    pub answer: HookAnswer,
    pub duration: Duration,
}

/// The hooks of a session.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    config: HooksConfig,
    root: PathBuf,
}

impl Hooks {
    pub fn new(config: HooksConfig, root: PathBuf) -> Hooks {
        Hooks { config, root }
    }

    pub fn is_empty(&self) -> bool {
        self.config.is_empty()
    }

    fn of(&self, event: HookEvent) -> &[HookConfig] {
        match event {
            HookEvent::PreToolUse => &self.config.pre_tool_use,
            HookEvent::PostToolUse => &self.config.post_tool_use,
            HookEvent::UserPromptSubmit => &self.config.user_prompt_submit,
            HookEvent::Stop => &self.config.stop,
            HookEvent::PreCompact => &self.config.pre_compact,
            HookEvent::SessionStart => &self.config.session_start,
            HookEvent::Notification => &self.config.notification,
        }
    }

    /// The hooks of `event` whose matcher `matches` accepts (for tool events; every hook of
    /// the other events).
    pub fn matching(&self, event: HookEvent, matches: &dyn Fn(&str) -> bool) -> Vec<HookConfig> {
        self.of(event).iter().filter(|h| !event.has_tool() || matches(&h.matcher)).cloned().collect()
    }

    /// Run `hook` with `input`; the input gets `hook_event_name` and `cwd` added.
    pub async fn run_one(
        &self,
        event: HookEvent,
        hook: &HookConfig,
        mut input: serde_json::Value,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        if let Some(map) = input.as_object_mut() {
            map.insert("hook_event_name".into(), event.name().into());
            map.insert("cwd".into(), self.root.display().to_string().into());
        }
        let timeout = Duration::from_millis(hook.timeout_ms);
        match run::run(&hook.command, &self.root, &input, timeout, cancel).await {
            Ok(run) => HookOutcome {
                command: hook.command.clone(),
                answer: answer::interpret(&run, hook.timeout_ms),
                duration: run.duration,
            },
            Err(e) => HookOutcome {
                command: hook.command.clone(),
                answer: HookAnswer { failure: Some(e), ..Default::default() },
                duration: Duration::ZERO,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(command: &str, timeout_ms: u64) -> HookConfig {
        HookConfig { matcher: "*".into(), command: command.into(), timeout_ms }
    }

    #[tokio::test]
    async fn a_hook_reads_the_event_and_answers() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = Hooks::new(HooksConfig::default(), dir.path().to_path_buf());
        let cancel = CancellationToken::new();
        let out = hooks
            .run_one(
                HookEvent::PreToolUse,
                &hook("grep -q '\"tool_name\":\"bash\"' && echo 'no bash today' >&2 && exit 2", 5_000),
                serde_json::json!({"tool_name": "bash", "tool_input": {"command": "rm -rf x"}}),
                &cancel,
            )
            .await;
        assert_eq!(out.answer.verdict, Some(Verdict::Deny));
        assert_eq!(out.answer.reason.as_deref(), Some("no bash today"));
    }

    #[tokio::test]
    async fn a_hanging_hook_and_its_children_are_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let hooks = Hooks::new(HooksConfig::default(), dir.path().to_path_buf());
        let command = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let started = std::time::Instant::now();
        let out = hooks
            .run_one(HookEvent::Stop, &hook(&command, 300), serde_json::json!({}), &CancellationToken::new())
            .await;
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(out.answer.failure.unwrap().contains("killed after 300 ms"));
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        assert!(!marker.exists(), "the hook's background child outlived the timeout");
    }
}
