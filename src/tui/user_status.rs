//! The user's own status line (`[tui] status_command`), as the interface sees it: the figures
//! it offers the command (as JSON, in Claude Code's statusline field names where they mean the
//! same, so its scripts work), and the command's first line, drawn under the composer. The
//! command runs elsewhere (`hooks::status`, wired by `cli`); nothing here waits for it. A
//! failure is told once, until the command answers again.

use serde::Serialize;
use serde_json::json;
use tokio::sync::{mpsc, watch};

use crate::agent::ContextStatus;
use crate::conversation::Mode;

/// The interface's side of the command.
pub struct UserStatus {
    offers: watch::Sender<Option<serde_json::Value>>,
    answers: mpsc::UnboundedReceiver<Result<String, String>>,
    /// The last line the command printed (kept through a failure).
    line: Option<String>,
    /// A failure was told and no answer has come since.
    failing: bool,
}

/// What the interface knows and offers: the session, the model, the mode, the context and
/// what it cost, whether a turn runs, the background commands.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusFigures<'a> {
    pub session_id: Option<&'a str>,
    pub model: &'a str,
    pub mode: Mode,
    pub context: Option<ContextStatus>,
    pub window: u64,
    pub busy: bool,
    pub background: usize,
}

#[derive(Serialize)]
struct ContextWindow {
    context_window_size: u64,
    used_tokens: u64,
    used_percentage: f64,
    remaining_percentage: f64,
    level: &'static str,
}

impl StatusFigures<'_> {
    /// The JSON the command reads on stdin (docs/status-line.md); `cli` adds `cwd`,
    /// `workspace`, `version` and `git`.
    pub fn to_json(&self) -> serde_json::Value {
        let context = self.context.map(|c| {
            let used = if c.window == 0 { 0.0 } else { c.tokens as f64 * 100.0 / c.window as f64 };
            let used = (used * 10.0).round() / 10.0;
            ContextWindow {
                context_window_size: c.window,
                used_tokens: c.tokens,
                used_percentage: used,
                remaining_percentage: ((100.0 - used) * 10.0).round() / 10.0,
                level: c.level.as_str(),
            }
        });
        json!({
            "hook_event_name": "Status",
            "session_id": self.session_id,
            "model": {"id": self.model, "display_name": self.model},
            "mode": self.mode.as_str(),
            "cost": {"total_cost_usd": self.context.and_then(|c| c.cost_usd)},
            "context_window": context.map_or_else(
                || json!({"context_window_size": self.window, "used_tokens": null, "used_percentage": null, "remaining_percentage": null, "level": null}),
                |c| json!(c),
            ),
            "busy": self.busy,
            "background_commands": self.background,
        })
    }
}

impl UserStatus {
    /// The interface's end, and the command's: where it reads the figures and sends its lines.
    #[allow(clippy::type_complexity)]
    pub fn new()
    -> (UserStatus, watch::Receiver<Option<serde_json::Value>>, mpsc::UnboundedSender<Result<String, String>>) {
        let (offers, offered) = watch::channel(None);
        let (answer, answers) = mpsc::unbounded_channel();
        (UserStatus { offers, answers, line: None, failing: false }, offered, answer)
    }

    /// Offer the figures; the command runs only when they changed.
    pub fn offer(&self, figures: &StatusFigures<'_>) {
        let value = figures.to_json();
        self.offers.send_if_modified(|held| {
            if held.as_ref() == Some(&value) {
                false
            } else {
                *held = Some(value);
                true
            }
        });
    }

    /// Take what the command answered; a failure to tell the user, once until it answers
    /// again. Whether the line changed comes with it.
    pub fn take_answers(&mut self) -> (bool, Option<String>) {
        let mut changed = false;
        let mut tell = None;
        while let Ok(answer) = self.answers.try_recv() {
            match answer {
                Ok(line) => {
                    self.failing = false;
                    changed |= self.line.as_deref() != Some(line.as_str());
                    self.line = Some(line);
                }
                Err(why) if !self.failing => {
                    self.failing = true;
                    tell = Some(why);
                }
                Err(_) => {}
            }
        }
        (changed, tell)
    }

    /// The line to draw, when the command has printed one.
    pub fn line(&self) -> Option<&str> {
        self.line.as_deref().filter(|l| !l.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(tokens: u64) -> StatusFigures<'static> {
        StatusFigures {
            session_id: Some("abc123"),
            model: "claude-sonnet-4-5",
            mode: Mode::Plan,
            context: Some(ContextStatus {
                tokens,
                window: 200_000,
                level: crate::context::BudgetLevel::Ok,
                compacting: false,
                cache_hit_rate: Some(0.9),
                cost_usd: Some(0.25),
            }),
            window: 200_000,
            busy: false,
            background: 1,
        }
    }

    #[test]
    fn the_json_carries_claude_codes_names_and_cairns_own() {
        let v = figures(96_000).to_json();
        assert_eq!(v["session_id"], "abc123");
        assert_eq!(v["model"]["display_name"], "claude-sonnet-4-5");
        assert_eq!(v["cost"]["total_cost_usd"], 0.25);
        assert_eq!(v["context_window"]["context_window_size"], 200_000);
        assert_eq!(v["context_window"]["used_percentage"], 48.0);
        assert_eq!(v["context_window"]["remaining_percentage"], 52.0);
        assert_eq!((v["mode"].as_str(), v["background_commands"].as_u64()), (Some("plan"), Some(1)));
    }

    #[test]
    fn unchanged_figures_are_not_offered_again_and_a_failure_is_told_once() {
        let (mut status, mut offered, answers) = UserStatus::new();
        status.offer(&figures(1_000));
        assert!(offered.has_changed().unwrap());
        offered.borrow_and_update();
        status.offer(&figures(1_000));
        assert!(!offered.has_changed().unwrap(), "the same figures do not run the command again");
        status.offer(&figures(2_000));
        assert!(offered.has_changed().unwrap());

        answers.send(Ok("line one".into())).unwrap();
        assert_eq!(status.take_answers(), (true, None));
        answers.send(Err("it exited with 1".into())).unwrap();
        answers.send(Err("it exited with 1".into())).unwrap();
        assert_eq!(status.take_answers(), (false, Some("it exited with 1".into())));
        answers.send(Err("it exited with 1".into())).unwrap();
        assert_eq!(status.take_answers(), (false, None), "told once");
        assert_eq!(status.line(), Some("line one"), "the last line stays");
        answers.send(Ok("back".into())).unwrap();
        answers.send(Err("again".into())).unwrap();
        assert_eq!(status.take_answers(), (true, Some("again".into())), "after an answer, a new failure is told");
    }
}
