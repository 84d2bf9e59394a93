//! What every hook step shares: the input a hook gets (the event's fields and the session's
//! id), the hooks of one event run in order until one refuses, and what a hook said shown as a
//! notice, in the TUI and headless alike. What an answer does is decided at the step: the
//! turn's in `worker/hooks`, a tool call's in `calls/hooks`.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::events::NoticeLevel;
use super::link::Emitter;
use crate::hooks::{HookEvent, HookOutcome, Hooks, Verdict};

/// The event's fields, with the session's id.
pub(super) fn hook_input(session: &str, extra: Value) -> Value {
    let mut input = json!({"session_id": session});
    if let (Some(map), Value::Object(extra)) = (input.as_object_mut(), extra) {
        map.extend(extra);
    }
    input
}

/// The lines a hook's outcome shows in the transcript, if it said anything.
pub(super) fn show(events: &Emitter, event: HookEvent, outcome: &HookOutcome, what: Option<String>) {
    let who = format!("{} hook `{}`", event.name(), crate::conversation::clip(&outcome.command, 60));
    if let Some(failure) = &outcome.answer.failure {
        events.notice(NoticeLevel::Warning, format!("{who} {failure}"));
    }
    if let Some(message) = &outcome.answer.message {
        events.notice(NoticeLevel::Info, format!("{who}: {message}"));
    }
    if let Some(what) = what {
        events.notice(NoticeLevel::Info, format!("{who}: {what}"));
    }
}

/// The hooks of `event` that match, run in order until one refuses.
pub(super) async fn run_all(
    hooks: &Hooks,
    event: HookEvent,
    input: Value,
    matches: &(dyn Fn(&str) -> bool + Sync),
    cancel: &CancellationToken,
) -> Vec<HookOutcome> {
    let mut outcomes = Vec::new();
    for hook in hooks.matching(event, matches) {
        let outcome = hooks.run_one(event, &hook, input.clone(), cancel).await;
        let denied = outcome.answer.verdict == Some(Verdict::Deny);
        outcomes.push(outcome);
        if denied {
            break;
        }
    }
    outcomes
}

/// Notification: cairn needs the user (an approval, a finished turn). Runs in the background:
/// a slow notifier never holds the agent.
pub(super) fn notify(hooks: &Hooks, session: &str, events: &Emitter, message: String) {
    if hooks.is_empty() {
        return;
    }
    let hooks = hooks.clone();
    let events = events.clone();
    let input = hook_input(session, json!({"message": message}));
    tokio::spawn(async move {
        let cancel = CancellationToken::new();
        for outcome in run_all(&hooks, HookEvent::Notification, input, &|_| true, &cancel).await {
            show(&events, HookEvent::Notification, &outcome, None);
        }
    });
}
