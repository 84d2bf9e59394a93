//! The hook steps of a turn, each a small function the turn calls at its point:
//! `UserPromptSubmit` before a prompt is stored (context added, or the prompt blocked), `Stop`
//! when the model would end its turn (a reason to go on), `SessionStart`, `PreCompact` (may
//! block a compaction) and `Notification` (cairn needs the user). A tool call's own hooks,
//! `PreToolUse` and `PostToolUse`, are steps of its path (`calls/hooks`). Every hook that says
//! something is shown as a notice, in the TUI and headless alike.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::agent::hook_runs::{hook_input, notify, run_all, show};
use crate::hooks::{HookEvent, Verdict};

impl Worker {
    fn hook_input(&self, extra: Value) -> Value {
        hook_input(self.session.id(), extra)
    }

    /// UserPromptSubmit: the prompt with what the hooks add, or why it was blocked.
    pub(super) async fn prompt_hooks(&mut self, prompt: String, cancel: &CancellationToken) -> Result<String, String> {
        let mut prompt = prompt;
        if let Some(context) = self.ext.take_session_context() {
            prompt.push_str(&format!("\n\n[Context from a SessionStart hook]\n{context}"));
        }
        if self.ext.hooks.is_empty() {
            return Ok(prompt);
        }
        let input = self.hook_input(json!({"prompt": prompt}));
        let events = self.link.emitter();
        let outcomes = run_all(&self.ext.hooks, HookEvent::UserPromptSubmit, input, &|_| true, cancel).await;
        for outcome in &outcomes {
            if outcome.answer.verdict == Some(Verdict::Deny) {
                let reason = outcome.answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                show(&events, HookEvent::UserPromptSubmit, outcome, Some(format!("blocked the prompt: {reason}")));
                return Err(format!("the prompt was blocked by a UserPromptSubmit hook: {reason}"));
            }
            let said = outcome.answer.additional_context.as_ref().map(|context| {
                prompt.push_str(&format!("\n\n[Context from a UserPromptSubmit hook]\n{context}"));
                format!("added {} characters of context", context.len())
            });
            show(&events, HookEvent::UserPromptSubmit, outcome, said);
        }
        Ok(prompt)
    }

    /// Stop: a hook's reason to go on (fed to the model), or `None` to end the turn.
    pub(super) async fn stop_hooks(&mut self, already_continued: bool, cancel: &CancellationToken) -> Option<String> {
        if self.ext.hooks.is_empty() {
            return None;
        }
        let input = self.hook_input(json!({"stop_hook_active": already_continued}));
        let events = self.link.emitter();
        let outcomes = run_all(&self.ext.hooks, HookEvent::Stop, input, &|_| true, cancel).await;
        for outcome in &outcomes {
            if outcome.answer.verdict == Some(Verdict::Deny) {
                let reason = outcome.answer.reason.clone().unwrap_or_else(|| "a Stop hook asked to go on".into());
                show(&events, HookEvent::Stop, outcome, Some(format!("asked the model to go on: {reason}")));
                return Some(reason);
            }
            show(&events, HookEvent::Stop, outcome, None);
        }
        None
    }

    /// SessionStart: what the hooks print is shown and kept for the session's first prompt.
    pub(super) async fn session_start_hooks(&mut self, source: &str) {
        if self.ext.hooks.is_empty() {
            return;
        }
        let input = self.hook_input(json!({"source": source}));
        let events = self.link.emitter();
        let cancel = CancellationToken::new();
        let outcomes = run_all(&self.ext.hooks, HookEvent::SessionStart, input, &|_| true, &cancel).await;
        for outcome in &outcomes {
            let said = outcome.answer.additional_context.as_ref().map(|context| {
                self.ext.add_session_context(context);
                format!("added {} characters of context for the first prompt", context.len())
            });
            show(&events, HookEvent::SessionStart, outcome, said);
        }
    }

    /// Notification: cairn needs the user (an approval, a finished turn), in the background.
    pub(super) fn notify_hooks(&self, message: String) {
        notify(&self.ext.hooks, self.session.id(), &self.link.emitter(), message);
    }

    /// PreCompact, run where the compaction runs (in the background): `Err` blocks it.
    pub(super) fn pre_compact_check(
        &self,
        trigger: &'static str,
    ) -> impl std::future::Future<Output = Result<(), String>> + Send + 'static {
        let hooks = self.ext.hooks.clone();
        let events = self.link.emitter();
        let input = self.hook_input(json!({"trigger": trigger, "custom_instructions": ""}));
        async move {
            if hooks.is_empty() {
                return Ok(());
            }
            let cancel = CancellationToken::new();
            for outcome in run_all(&hooks, HookEvent::PreCompact, input, &|_| true, &cancel).await {
                if outcome.answer.verdict == Some(Verdict::Deny) {
                    let reason = outcome.answer.reason.clone().unwrap_or_else(|| "no reason given".into());
                    show(&events, HookEvent::PreCompact, &outcome, Some(format!("blocked the compaction: {reason}")));
                    return Err(format!("a PreCompact hook blocked it: {reason}"));
                }
                show(&events, HookEvent::PreCompact, &outcome, None);
            }
            Ok(())
        }
    }
}
