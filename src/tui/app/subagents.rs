//! What a subagent's progress and the task list change on screen: the `task` call's cell (its
//! type, job, current call, tokens, transcript and report) and the task list panel.

use super::App;
use crate::agent::{SubagentEvent, SubagentOutcome};
use crate::conversation::TaskList;
use crate::tui::cells::{Cell, EntryState, SubagentCell, SubagentEntry, SubagentStatus};

impl App {
    /// The cell of `task` call `call_id`, created if the call was never announced.
    pub(super) fn subagent_cell(&mut self, call_id: &str) -> usize {
        if let Some(i) = self.transcript.rposition(|c| matches!(c, Cell::Subagent(s) if s.call_id == call_id)) {
            return i;
        }
        self.end_stream();
        let mut cell = SubagentCell::new(call_id);
        cell.expanded = self.expand_all;
        self.transcript.push(Cell::Subagent(cell));
        self.transcript.len() - 1
    }

    pub(super) fn update_subagent(&mut self, call_id: &str, f: impl FnOnce(&mut SubagentCell)) {
        let i = self.subagent_cell(call_id);
        self.transcript.update(i, |c| {
            if let Cell::Subagent(s) = c {
                f(s);
            }
        });
    }

    pub(super) fn on_subagent(&mut self, call_id: &str, event: SubagentEvent) {
        // A dialog of a call that has finished (an interrupt) is no longer a question.
        if let SubagentEvent::ToolFinished { call_id: done, .. } = &event {
            self.approvals.retain(|a| a.request.call_id != *done);
        }
        self.update_subagent(call_id, |s| {
            if matches!(s.status, SubagentStatus::Preparing | SubagentStatus::AwaitingApproval) {
                s.status = SubagentStatus::Running;
            }
            match event {
                SubagentEvent::Started { agent_type, description, session_id, model, .. } => {
                    s.agent_type = agent_type;
                    s.description = description;
                    s.session_id = Some(session_id);
                    s.model = Some(model);
                    s.started = Some(std::time::Instant::now());
                }
                SubagentEvent::ToolStarted { call_id, tool, summary } => {
                    s.push(SubagentEntry::Tool { call_id, tool, summary, state: EntryState::Running })
                }
                SubagentEvent::ToolFinished { call_id, tool, summary, is_error, not_run } => {
                    let state = match (not_run, is_error) {
                        (true, _) => EntryState::NotRun,
                        (false, true) => EntryState::Failed,
                        (false, false) => EntryState::Ok,
                    };
                    let known = s
                        .entries
                        .iter()
                        .any(|e| matches!(e, SubagentEntry::Tool { call_id: id, .. } if *id == call_id));
                    if known {
                        s.finish_call(&call_id, state);
                    } else {
                        // Refused before it started: it only finishes.
                        s.push(SubagentEntry::Tool { call_id, tool, summary, state });
                    }
                }
                SubagentEvent::Text { text } => s.push(SubagentEntry::Text(text)),
                SubagentEvent::Usage { usage } => {
                    s.tokens += usage.prompt_tokens() + usage.output_tokens;
                    s.requests += 1;
                }
                SubagentEvent::Finished { outcome, report, usage, requests } => {
                    // The totals, whatever progress events were seen (a resumed view has none).
                    s.tokens = usage.prompt_tokens() + usage.output_tokens;
                    s.requests = requests;
                    s.set_report(&report);
                    if outcome != SubagentOutcome::Reported && s.report.is_empty() {
                        s.set_report("no report");
                    }
                    // Done now, though its `task` call's result waits for the message's other calls.
                    let duration = s.started.map(|t| t.elapsed()).unwrap_or_default();
                    s.status = SubagentStatus::Done { is_error: outcome != SubagentOutcome::Reported, duration };
                }
            }
        });
    }

    /// The agent's task list changed.
    pub(super) fn on_task_list(&mut self, list: TaskList) {
        self.session.task_list = list;
    }

    /// The task list as the panel shows it.
    pub(crate) fn task_list(&self) -> &TaskList {
        &self.session.task_list
    }

    /// Whether the task list panel is on screen: there is a list and the user has not hidden it.
    pub(crate) fn task_list_panel_shown(&self) -> bool {
        self.task_list_panel && !self.session.task_list.is_empty()
    }
}

#[cfg(test)]
#[path = "subagents_tests.rs"]
mod tests;
