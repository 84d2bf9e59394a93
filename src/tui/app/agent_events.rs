//! How each [`AgentEvent`] changes what the interface shows. Rendering only: the agent has
//! already decided everything these events report.

use super::history::{compacted_text, trigger_text, turn_summary_text};
use super::{Activity, App, OpenSession, PlanReady};
use crate::agent::{AgentEvent, CompactionEvent, NoticeLevel, TurnOutcome, TurnSummary, UserCommand};
use crate::conversation::tool_names::TASK;
use crate::conversation::{FinishedCall, Mode, format_tokens};
use crate::tui::cells::{Cell, NoticeKind, SubagentStatus, ToolCell, ToolStatus, UserCell};
use crate::tui::overlays::{ApprovalDialog, ContextView, Overlay, ViewOutcome};

/// Typing this recently when a dialog opens means the keys in flight were meant for the prompt.
const TYPING_RECENTLY: std::time::Duration = std::time::Duration::from_secs(1);
/// How long such a dialog ignores its answer keys.
const TYPING_GUARD: std::time::Duration = std::time::Duration::from_millis(600);

/// Loading a long session frees megabytes of event copies at once; hand them back to the
/// system so an idle cairn stays small (glibc keeps freed heap otherwise).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl App {
    pub fn on_agent_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::SessionReady { session, resumed, history, tool_display, mode, model, window, recap } => {
                // What was said before the first session (a theme or keys.toml refused, a
                // settings file's warning) stays, below the session's history.
                // The same session again (a rewind reloaded it): in inline mode the scrollback
                // already shows all of it, and more.
                let reload = self.session.open.as_ref().is_some_and(|s| s.id == session.id);
                let said_before = if self.session.open.is_none() {
                    self.transcript.take()
                } else {
                    self.transcript.clear();
                    Vec::new()
                };
                self.turn.streaming = None;
                self.approvals.clear();
                self.turn.retry = None;
                self.search = None;
                self.plan.ready = None;
                self.session.mode = mode;
                self.session.model = model;
                self.session.window = window;
                self.load_history(&history, &tool_display, &recap);
                if resumed {
                    let title = if session.title.is_empty() { "untitled".to_string() } else { session.title.clone() };
                    self.notice(
                        NoticeKind::Info,
                        format!("resumed session {} · {title} · {} messages", session.id, history.len()),
                    );
                }
                for cell in said_before {
                    self.transcript.push(cell);
                }
                if reload {
                    self.transcript.commit_all();
                }
                self.session.open = Some(OpenSession { id: session.id, stored: resumed });
                self.session.trim_after_context = true;
            }
            AgentEvent::SessionStored(session) => {
                self.session.open = Some(OpenSession { id: session.id, stored: true });
            }
            AgentEvent::Attached(items) => {
                self.turn.attaching = false;
                if let Some(i) = self.transcript.rposition(|c| matches!(c, Cell::User(_))) {
                    self.transcript.update(i, |c| {
                        if let Cell::User(u) = c {
                            u.attachments = items;
                        }
                    });
                }
            }
            AgentEvent::Queued { prompt } => {
                if !self.agent.pending.contains(&prompt) {
                    self.agent.pending.push(prompt);
                }
            }
            AgentEvent::TurnStarted { prompt } => {
                if let Some(i) = self.agent.pending.iter().position(|p| *p == prompt) {
                    self.agent.pending.remove(i);
                }
                self.end_stream();
                self.plan.ready = None;
                self.turn.retry = None;
                // What the status line said of the last turn is not news of this one.
                self.flash = None;
                self.transcript.push(Cell::User(UserCell::new(prompt)));
                self.turn.attempt_from = self.transcript.len();
                self.transcript.follow();
                self.turn.busy = true;
                self.turn.started = Some(self.now);
                self.turn.activity = Activity::Thinking;
                self.turn.attaching = true;
            }
            AgentEvent::TextDelta(text) => {
                self.turn.attaching = false;
                self.end_thinking();
                self.on_delta(&text)
            }
            AgentEvent::ThinkingDelta(text) => {
                self.turn.attaching = false;
                self.on_thinking(&text)
            }
            AgentEvent::ToolCallStreaming { call_id, tool } => {
                self.turn.attaching = false;
                self.end_thinking();
                self.end_stream();
                self.turn.activity = Activity::PreparingTool(tool.clone());
                if tool == TASK {
                    self.subagent_cell(&call_id);
                } else {
                    self.transcript.push(Cell::Tool(ToolCell::new(call_id, tool)));
                }
            }
            AgentEvent::Retrying { attempt, max_attempts, delay, reason } => {
                self.turn.attaching = false;
                self.discard_attempt();
                self.turn.activity = Activity::Retrying { attempt, max_attempts, until: self.now + delay };
                let text = format!(
                    "{reason} — retrying in {} (attempt {attempt} of {max_attempts})",
                    crate::tui::cells::format_duration(delay)
                );
                self.show_retry(text, attempt, max_attempts, reason);
            }
            AgentEvent::AssistantMessage(message) => {
                self.turn.attaching = false;
                self.settle_retry(None);
                self.on_assistant_message(&message)
            }
            AgentEvent::ToolStarted { call_id, tool, .. } if tool == TASK => {
                self.turn.activity = Activity::Tool(tool);
                self.update_subagent(&call_id, |s| s.status = SubagentStatus::Running);
            }
            AgentEvent::ToolStarted { call_id, tool, summary, .. } => {
                self.turn.activity = Activity::Tool(tool.clone());
                let i = self.tool_cell(&call_id, &tool);
                self.transcript.update(i, |c| {
                    if let Cell::Tool(t) = c {
                        t.summary = summary;
                        t.status = ToolStatus::Running;
                    }
                });
            }
            AgentEvent::ApprovalRequested(request) => {
                self.turn.activity = Activity::Approval(request.tool.clone());
                // The transcript above the dialog ends with its latest line: what asked.
                self.transcript.follow();
                if self.terminal.notify.approvals {
                    self.notify_user(&format!("{} waits for your approval", request.tool));
                }
                // A subagent's call shows in its cell; the main agent's in its own.
                match request.task.clone().or_else(|| (request.tool == TASK).then(|| request.call_id.clone())) {
                    Some(task) => self.update_subagent(&task, |s| s.status = SubagentStatus::AwaitingApproval),
                    None => {
                        let i = self.tool_cell(&request.call_id, &request.tool);
                        let summary = request.summary.clone();
                        self.transcript.update(i, |c| {
                            if let Cell::Tool(t) = c {
                                t.summary = summary;
                                t.status = ToolStatus::AwaitingApproval;
                            }
                        });
                    }
                }
                let mut dialog = ApprovalDialog::new(request);
                if self.last_typed.is_some_and(|t| self.now.duration_since(t) < TYPING_RECENTLY) {
                    dialog.guard_until = Some(self.now + TYPING_GUARD);
                }
                self.approvals.push_back(dialog);
            }
            AgentEvent::ToolFinished(finished) => self.on_tool_finished(finished),
            AgentEvent::Usage { .. } => {}
            AgentEvent::ContextStage(report) => self.notice(NoticeKind::Info, report.detail),
            AgentEvent::Context(status) => {
                // The agent follows a loaded session with its figures, after freeing what it
                // needed to compute them: the moment to give freed memory back.
                if std::mem::take(&mut self.session.trim_after_context) {
                    release_freed_memory();
                }
                self.session.window = status.window;
                if !status.compacting && matches!(self.turn.activity, Activity::Compacting { .. }) && !self.turn.busy {
                    self.turn.activity = Activity::Idle;
                }
                self.session.context = Some(status);
            }
            AgentEvent::Compaction(event) => self.on_compaction(event),
            AgentEvent::ContextBreakdown(breakdown) => {
                if let Some(Overlay::Context(view)) = &mut self.overlay {
                    view.breakdown = Some(breakdown);
                } else {
                    self.overlay = Some(Overlay::Context(ContextView::new(Some(breakdown))));
                }
            }
            AgentEvent::ReportWritten(written) => {
                self.answered(super::submit::WRITING_REPORT);
                match written {
                    Ok(path) => self.notice(NoticeKind::Info, format!("session report written: {path}")),
                    Err(e) => self.notice(NoticeKind::Error, format!("could not write the session report: {e}")),
                }
            }
            AgentEvent::BackgroundRunning(n) => self.session.background = n,
            AgentEvent::Background(answer) => self.on_background(answer),
            AgentEvent::Exported(written) => match written {
                Ok(path) => self.notice(NoticeKind::Info, format!("conversation exported: {path}")),
                Err(e) => self.notice(NoticeKind::Error, format!("could not export the conversation: {e}")),
            },
            AgentEvent::ModeChanged(mode) => self.session.mode = mode,
            AgentEvent::ModelRefused { name, known } => self.notice(
                NoticeKind::Error,
                format!(
                    "there is no model {name:?}; /model alone opens the picker, or choose one of: {}",
                    known.join(", ")
                ),
            ),
            AgentEvent::Models(list) => {
                if let Some(Overlay::Models(view)) = &mut self.overlay {
                    view.fill(list);
                }
            }
            AgentEvent::ModelChanged { model, window } => {
                self.notice(NoticeKind::Info, format!("model is now {model} ({} token window)", format_tokens(window)));
                self.session.model = model;
                self.session.window = window;
            }
            AgentEvent::Notice { level, text } => {
                let kind = match level {
                    NoticeLevel::Info => NoticeKind::Info,
                    NoticeLevel::Warning => NoticeKind::Warning,
                    NoticeLevel::Error => NoticeKind::Error,
                };
                self.notice(kind, text);
            }
            AgentEvent::TurnFinished(summary) => self.on_turn_finished(summary),
            AgentEvent::Library(answer) => self.on_library(answer),
            AgentEvent::Commands(list) => {
                self.agent.custom_commands = list.clone();
                self.composer.set_custom_commands(list);
                // `/fi` typed before the list arrived is suggested now.
                self.composer.refresh_completion(&self.files);
            }
            AgentEvent::Mcp(panel) => match &mut self.overlay {
                Some(Overlay::Mcp(view)) => view.panel = Some(panel),
                _ => {
                    if let Some(message) = panel.message.as_ref().filter(|_| !panel.follow_up) {
                        self.notice(NoticeKind::Info, message.clone());
                    }
                }
            },
            AgentEvent::RewindPlanned(result) => {
                let Some(Overlay::Rewind(view)) = &mut self.overlay else { return };
                match result {
                    Ok(preview) => {
                        if let Some(ViewOutcome::Rewind { user_seq, scope, overwrite }) = view.planned(preview) {
                            self.send(UserCommand::Rewind { user_seq, scope, overwrite });
                        }
                    }
                    Err(e) => view.error = Some(e.to_string()),
                }
            }
            AgentEvent::Rewound(result) => self.on_rewound(result),
            AgentEvent::Subagent { call_id, event } => self.on_subagent(&call_id, event),
            AgentEvent::TaskList(list) => self.on_task_list(list),
            // Only headless asks the agent to settle.
            AgentEvent::Settled(_) => {}
        }
    }

    fn on_tool_finished(&mut self, f: FinishedCall) {
        if f.tool == TASK {
            self.approvals.retain(|a| a.request.call_id != f.call_id && a.request.task.as_ref() != Some(&f.call_id));
            self.update_subagent(&f.call_id, |s| {
                s.status = if f.not_run {
                    SubagentStatus::NotRun
                } else {
                    SubagentStatus::Done { is_error: f.is_error, duration: f.duration }
                };
                // The report as the model got it (a refusal, when it never ran).
                s.set_report(&f.content);
            });
            self.turn.attempt_from = self.transcript.len();
            if self.turn.busy {
                self.turn.activity = Activity::Thinking;
            }
            return;
        }
        let i = self.tool_cell(&f.call_id, &f.tool);
        let status = if f.not_run {
            ToolStatus::NotRun
        } else {
            ToolStatus::Done { is_error: f.is_error, exit_code: f.exit_code, duration: f.duration }
        };
        self.transcript.update(i, |c| {
            if let Cell::Tool(t) = c {
                // A call refused before its tool could describe it carries only the tool's
                // name; the summary guessed from its arguments says more.
                if !f.summary.is_empty() && f.summary != f.tool {
                    t.summary = f.summary;
                }
                t.status = status;
                t.set_output(&f.content);
                t.diff = f.diff.filter(|d| !d.trim().is_empty());
                t.approval = f.approval;
                // The user ran it to see what it prints.
                if f.by_user {
                    t.expanded = true;
                }
            }
        });
        self.approvals.retain(|a| a.request.call_id != f.call_id);
        self.turn.attempt_from = self.transcript.len();
        if self.turn.busy {
            self.turn.activity = Activity::Thinking;
        }
    }

    /// One retry notice per request, updated in place with the latest attempt.
    fn show_retry(&mut self, text: String, attempt: u32, max_attempts: u32, reason: String) {
        let live = self
            .turn
            .retry
            .as_ref()
            .map(|r| r.0)
            .filter(|&i| matches!(self.transcript.get(i), Some(Cell::Notice(n)) if n.kind == NoticeKind::Retry));
        match live {
            Some(i) => self.transcript.update(i, |c| {
                if let Cell::Notice(n) = c {
                    n.text = text;
                }
            }),
            None => self.notice(NoticeKind::Retry, text),
        }
        let index = live.unwrap_or(self.transcript.len() - 1);
        self.turn.retry = Some((index, attempt, max_attempts, reason));
    }

    /// The request that was being retried ended — answered, or the turn ended without an
    /// answer (`outcome`): its notice says how.
    fn settle_retry(&mut self, outcome: Option<&TurnOutcome>) {
        let Some((i, attempt, max_attempts, reason)) = self.turn.retry.take() else { return };
        let text = match outcome {
            None | Some(TurnOutcome::Completed { .. }) => format!("{reason} — answered on attempt {attempt}"),
            Some(TurnOutcome::Interrupted { .. } | TurnOutcome::MaxTurns { .. }) => {
                format!("{reason} — stopped during attempt {attempt} of {max_attempts}")
            }
            Some(TurnOutcome::Failed { .. }) => format!("{reason} — gave up after {attempt} attempts"),
        };
        self.transcript.update(i, |c| {
            if let Cell::Notice(n) = c
                && n.kind == NoticeKind::Retry
            {
                n.text = text;
            }
        });
    }

    fn on_compaction(&mut self, event: CompactionEvent) {
        let trigger = trigger_text;
        match event {
            CompactionEvent::Started { trigger: t, tokens_before } => {
                // The notice below says it better than "compaction requested".
                self.flash = None;
                self.turn.compacting = Some(None);
                self.turn.activity = Activity::Compacting { chunk: None };
                self.notice(
                    NoticeKind::Compaction,
                    format!(
                        "compacting {} tokens ({}) — you can keep working",
                        format_tokens(tokens_before),
                        trigger(t)
                    ),
                );
            }
            CompactionEvent::Progress { chunk, chunks } => {
                self.turn.compacting = Some(Some((chunk, chunks)));
                self.turn.activity = Activity::Compacting { chunk: Some((chunk, chunks)) };
            }
            CompactionEvent::Finished { trigger: t, tokens_before, tokens_after, summary_tokens } => {
                self.turn.compacting = None;
                self.end_compaction_activity();
                self.notice(NoticeKind::Compaction, compacted_text(t, tokens_before, tokens_after, summary_tokens));
            }
            CompactionEvent::Failed { trigger: t, error } => {
                self.turn.compacting = None;
                self.end_compaction_activity();
                self.notice(NoticeKind::Error, format!("compaction failed ({}): {error}", trigger(t)));
            }
        }
    }

    fn end_compaction_activity(&mut self) {
        if matches!(self.turn.activity, Activity::Compacting { .. }) {
            self.turn.activity = if self.turn.busy { Activity::Thinking } else { Activity::Idle };
        }
    }

    fn on_turn_finished(&mut self, summary: TurnSummary) {
        let streamed = self.turn.streaming;
        self.turn.attaching = false;
        self.end_stream();
        self.settle_retry(Some(&summary.outcome));
        let elapsed = self.turn.started.take().map(|t| self.now.duration_since(t));
        self.turn.busy = false;
        self.turn.activity = Activity::Idle;
        self.approvals.clear();
        // Calls that never got an answer (the turn ended first) are not left spinning.
        self.close_open_calls();
        match summary.outcome {
            TurnOutcome::Completed { text } => {
                if self.session.mode == Mode::Plan && !text.trim().is_empty() {
                    self.plan.ready = Some(PlanReady { plan: text, edited: false });
                }
            }
            TurnOutcome::Interrupted { partial } => {
                let marked = streamed.or_else(|| {
                    (!partial.trim().is_empty())
                        .then(|| self.transcript.rposition(|c| matches!(c, Cell::Assistant(_))))
                        .flatten()
                });
                // An answer already in the scrollback whole (inline mode) cannot take the mark.
                let whole_in_scrollback = |i: usize| i < self.transcript.committed().cells;
                match marked {
                    Some(i)
                        if matches!(self.transcript.get(i), Some(Cell::Assistant(_))) && !whole_in_scrollback(i) =>
                    {
                        self.transcript.update(i, |c| {
                            if let Cell::Assistant(a) = c {
                                a.interrupted = true;
                            }
                        })
                    }
                    Some(_) | None => self.notice(NoticeKind::Warning, "interrupted"),
                }
            }
            TurnOutcome::MaxTurns { limit } => {
                self.notice(NoticeKind::Warning, format!("stopped after {limit} model requests"));
            }
            TurnOutcome::Failed { error } => self.notice(NoticeKind::Error, error),
        }
        let stats = summary.stats;
        if stats.all_requests > 0 {
            self.notice(NoticeKind::TurnEnd, turn_summary_text(elapsed, &stats));
        }
        if elapsed.is_some_and(|e| e.as_secs() >= self.terminal.notify.after_secs) {
            self.notify_user("the turn is done");
        }
    }

    /// Every call still open is shown as not run.
    pub(super) fn close_open_calls(&mut self) {
        let open: Vec<usize> = (0..self.transcript.len())
            .filter(|&i| match self.transcript.get(i) {
                Some(Cell::Tool(t)) => !t.is_finished(),
                Some(Cell::Subagent(s)) => !s.is_finished(),
                Some(Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) | Cell::Thinking(_) | Cell::Changes(_))
                | None => false,
            })
            .collect();
        for i in open {
            self.transcript.update(i, |c| match c {
                Cell::Tool(t) => t.status = ToolStatus::NotRun,
                Cell::Subagent(s) => s.status = SubagentStatus::NotRun,
                Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) | Cell::Thinking(_) | Cell::Changes(_) => {}
            });
        }
    }

    pub(super) fn find_tool(&self, call_id: &str) -> Option<usize> {
        self.transcript.rposition(|c| matches!(c, Cell::Tool(t) if t.call_id == call_id))
    }

    /// The cell of `call_id`, created if the call was never announced.
    pub(super) fn tool_cell(&mut self, call_id: &str, tool: &str) -> usize {
        match self.find_tool(call_id) {
            Some(i) => i,
            None => {
                self.end_stream();
                let mut cell = ToolCell::new(call_id, tool);
                cell.expanded = self.expand_all;
                self.transcript.push(Cell::Tool(cell));
                self.transcript.len() - 1
            }
        }
    }
}

#[cfg(test)]
#[path = "agent_events_tests.rs"]
pub(super) mod tests;
