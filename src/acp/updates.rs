//! The live session as ACP updates: each [`AgentEvent`] the client shows becomes the
//! `session/update` it stands for — answer and thinking chunks (keys held back and redacted as
//! they stream), tool calls from the moment the model starts one to their end, the task list
//! as a plan, the mode, the context figures and the commands. A command that runs in one of the
//! client's terminals shows that terminal in its call, to the end.

use std::collections::HashSet;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, ContentChunk, Cost, CurrentModeUpdate, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionModeId, SessionUpdate, Terminal, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, UsageUpdate,
};

use super::calls;
use super::terminals::Opened;
use crate::agent::{AgentEvent, ApprovalKind, ApprovalRequest, CompactionEvent, NoticeLevel, SubagentEvent};
use crate::config::Redactor;
use crate::conversation::{Message, TaskList, TaskStatus, format_tokens};

/// Turns a live session's events into updates; holds what a stream's chunks may still make
/// into a key, and which tool calls the client has been told of.
pub(super) struct Live {
    root: PathBuf,
    redactor: Redactor,
    held_text: String,
    held_thinking: String,
    announced: HashSet<String>,
    /// Calls whose command ran in a client's terminal: their content stays that terminal.
    in_terminal: HashSet<String>,
}

impl Live {
    pub(super) fn new(root: PathBuf, redactor: Redactor) -> Live {
        Live {
            root,
            redactor,
            held_text: String::new(),
            held_thinking: String::new(),
            announced: HashSet::new(),
            in_terminal: HashSet::new(),
        }
    }

    /// A call's command runs in the client's terminal `opened.terminal_id`: the call shows it
    /// (replacing what it showed; a second run, outside the sandbox, shows its own).
    pub(super) fn terminal(&mut self, opened: &Opened) -> SessionUpdate {
        self.in_terminal.insert(opened.call_id.clone());
        let content = vec![ToolCallContent::Terminal(Terminal::new(opened.terminal_id.clone()))];
        let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress).content(content);
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(opened.call_id.clone(), fields))
    }

    pub(super) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    pub(super) fn updates(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        if !matches!(event, AgentEvent::TextDelta(_) | AgentEvent::ThinkingDelta(_)) {
            out.extend(self.flush());
        }
        match event {
            AgentEvent::TextDelta(chunk) => {
                let text = self.redactor.release(&mut self.held_text, chunk);
                out.extend(chunk_of(text, SessionUpdate::AgentMessageChunk));
            }
            AgentEvent::ThinkingDelta(chunk) => {
                let text = self.redactor.release(&mut self.held_thinking, chunk);
                out.extend(chunk_of(text, SessionUpdate::AgentThoughtChunk));
            }
            AgentEvent::ToolCallStreaming { call_id, tool } => out.extend(self.announce(call_id, tool, tool)),
            AgentEvent::AssistantMessage(message) => out.extend(self.calls_of(message)),
            AgentEvent::ToolStarted { call_id, tool, summary, arguments } => {
                out.extend(self.announce(call_id, tool, &calls::title(tool, summary)));
                let fields = ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .title(calls::title(tool, summary))
                    .locations(calls::locations(arguments, &self.root, None))
                    .raw_input(calls::raw_input(&self.redactor.redact(arguments)));
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.clone(), fields)));
            }
            AgentEvent::ToolFinished(done) => {
                out.extend(self.announce(&done.call_id, &done.tool, &calls::title(&done.tool, &done.summary)));
                let content = self.redactor.redact(&done.content);
                let diff = done.diff.as_deref().map(|d| self.redactor.redact(d).into_owned());
                let mut fields = calls::finished(&content, done.is_error, diff.as_deref(), &self.root);
                fields = fields.title(calls::title(&done.tool, &done.summary));
                if self.in_terminal.remove(&done.call_id) {
                    // The terminal shows what ran (the result is the raw output): an update
                    // that names content replaces it, and the client may have freed it by now.
                    fields.content = None;
                }
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(done.call_id.clone(), fields)));
            }
            AgentEvent::TaskList(list) => out.push(SessionUpdate::Plan(plan(list))),
            AgentEvent::ModeChanged(mode) => {
                out.push(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str()))));
            }
            AgentEvent::Context(status) => {
                let cost = status.cost_usd.map(|usd| Cost::new(usd, "USD"));
                out.push(SessionUpdate::UsageUpdate(UsageUpdate::new(status.tokens, status.window).cost(cost)));
            }
            AgentEvent::Commands(custom) => out.push(SessionUpdate::AvailableCommandsUpdate(
                AvailableCommandsUpdate::new(super::commands::available(custom)),
            )),
            AgentEvent::Notice { level, text } => out.extend(self.notice(*level, text)),
            AgentEvent::Retrying { attempt, max_attempts, reason, .. } => out.extend(self.notice(
                NoticeLevel::Warning,
                &format!("{reason}; retrying (attempt {attempt}/{max_attempts}), so the answer may start again"),
            )),
            AgentEvent::Compaction(CompactionEvent::Finished { tokens_before, tokens_after, .. }) => {
                out.extend(self.notice(
                    NoticeLevel::Info,
                    &format!(
                        "compacted the conversation: {} → {} tokens",
                        format_tokens(*tokens_before),
                        format_tokens(*tokens_after)
                    ),
                ));
            }
            AgentEvent::Compaction(CompactionEvent::Failed { error, .. }) => {
                out.extend(self.notice(NoticeLevel::Warning, &format!("compaction failed: {error}")));
            }
            AgentEvent::Subagent { call_id, event: SubagentEvent::Started { agent_type, description, .. } } => {
                let fields = ToolCallUpdateFields::new().title(format!("task ({agent_type}): {description}"));
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.clone(), fields)));
            }
            // The rest is the session's own business (answered elsewhere, or nothing to show).
            _ => {}
        }
        out
    }

    /// What was held back of the streams: shown now that they ended.
    pub(super) fn flush(&mut self) -> Vec<SessionUpdate> {
        let text = std::mem::take(&mut self.held_text);
        let thinking = std::mem::take(&mut self.held_thinking);
        chunk_of(thinking, SessionUpdate::AgentThoughtChunk)
            .into_iter()
            .chain(chunk_of(text, SessionUpdate::AgentMessageChunk))
            .collect()
    }

    /// The client is told of the call `call_id` once, as pending, before anything else about it.
    pub(super) fn announce(&mut self, call_id: &str, tool: &str, title: &str) -> Option<SessionUpdate> {
        self.announced.insert(call_id.to_string()).then(|| {
            SessionUpdate::ToolCall(
                ToolCall::new(call_id.to_string(), title).kind(calls::kind(tool)).status(ToolCallStatus::Pending),
            )
        })
    }

    /// A finished message's calls: announced if they were not, with their arguments.
    fn calls_of(&mut self, message: &Message) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        for call in message.tool_calls() {
            out.extend(self.announce(&call.id, &call.name, &call.name));
            let arguments = self.redactor.redact(&call.arguments);
            let fields = ToolCallUpdateFields::new()
                .raw_input(calls::raw_input(&arguments))
                .locations(calls::locations(&arguments, &self.root, None));
            out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call.id.clone(), fields)));
        }
        out
    }

    /// The call a permission request is about, as the client shows it while it asks: its
    /// title, the change as diffs, else what it runs and why it asks.
    pub(super) fn asking(&mut self, request: &ApprovalRequest) -> (Vec<SessionUpdate>, ToolCallUpdate) {
        let title = match &request.agent {
            Some(agent) => format!("{agent}: {}", calls::title(&request.tool, &request.summary)),
            None => calls::title(&request.tool, &request.summary),
        };
        let announced = self.announce(&request.call_id, &request.tool, &title).into_iter().collect();
        let arguments = self.redactor.redact(&request.arguments);
        let diffs = request.diff.as_deref().map(|d| super::diff::diffs(&self.redactor.redact(d), &self.root));
        let why = match &request.kind {
            ApprovalKind::Call => {
                format!("cairn asks before this call: {} (asked by {})", request.reason, request.asked_by)
            }
            ApprovalKind::OutsideSandbox { why } => {
                format!("The sandbox stopped this command ({why}). Run it again outside the sandbox?")
            }
        };
        let mut content: Vec<ToolCallContent> = vec![ToolCallContent::from(ContentBlock::from(why))];
        match diffs {
            Some(diffs) if !diffs.is_empty() => content.extend(diffs.into_iter().map(ToolCallContent::from)),
            _ if request.tool == crate::conversation::tool_names::BASH || request.arguments.contains('\n') => {
                content.push(ToolCallContent::from(ContentBlock::from(calls::fenced(&request.summary))));
            }
            _ => {}
        }
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .kind(calls::kind(&request.tool))
            .content(content)
            .raw_input(calls::raw_input(&arguments))
            .locations(calls::locations(&arguments, &self.root, request.diff.as_deref()));
        (announced, ToolCallUpdate::new(request.call_id.clone(), fields))
    }

    /// A notice the user should see: a line of its own in the answer, set apart. Notes for the
    /// log only (info) go to the log.
    fn notice(&self, level: NoticeLevel, text: &str) -> Option<SessionUpdate> {
        let text = self.redactor.redact(text);
        match level {
            NoticeLevel::Info if !text.starts_with("compacted") => {
                tracing::info!(notice = %text, "acp");
                None
            }
            NoticeLevel::Info | NoticeLevel::Warning | NoticeLevel::Error => {
                chunk_of(format!("\n\n> cairn: {text}\n\n"), SessionUpdate::AgentMessageChunk)
            }
        }
    }
}

/// A chunk of text as an update, unless there is none.
fn chunk_of(text: String, kind: fn(ContentChunk) -> SessionUpdate) -> Option<SessionUpdate> {
    (!text.is_empty()).then(|| kind(ContentChunk::new(ContentBlock::from(text))))
}

/// The task list as ACP plan entries; an item under another is indented under it.
pub(super) fn plan(list: &TaskList) -> Plan {
    fn depth<'a>(list: &'a TaskList, mut item: &'a crate::conversation::TaskItem) -> usize {
        let mut depth = 0;
        // A checked list has no circles; the bound keeps a bad one from looping.
        while let Some(parent) = item.parent.as_ref().and_then(|p| list.items.iter().find(|i| &i.id == p)) {
            depth += 1;
            item = parent;
            if depth > list.items.len() {
                break;
            }
        }
        depth
    }
    let entries = list
        .items
        .iter()
        .map(|item| {
            let status = match item.status {
                TaskStatus::Pending => PlanEntryStatus::Pending,
                TaskStatus::InProgress => PlanEntryStatus::InProgress,
                TaskStatus::Done => PlanEntryStatus::Completed,
            };
            let content = format!("{}{}", "  ".repeat(depth(list, item)), item.text);
            PlanEntry::new(content, PlanEntryPriority::Medium, status)
        })
        .collect();
    Plan::new(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::TaskItem;

    fn texts(updates: &[SessionUpdate]) -> String {
        updates
            .iter()
            .map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => match &c.content {
                    ContentBlock::Text(t) => t.text.clone(),
                    other => panic!("{other:?}"),
                },
                other => panic!("not an answer chunk: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_key_cut_across_chunks_is_held_back_and_never_shown() {
        let key = "sk-ant-api03-SECRETSECRETSECRET-0123456789";
        let mut redactor = Redactor::default();
        redactor.add("ANTHROPIC_API_KEY", key);
        let mut live = Live::new("/p".into(), redactor);
        let (head, tail) = key.split_at(10);
        let first = live.updates(&AgentEvent::TextDelta(format!("the key is {head}")));
        assert_eq!(texts(&first), "the key is ", "the start of the key waits");
        let second = live.updates(&AgentEvent::TextDelta(format!("{tail}, keep it")));
        let rest = live.flush();
        let shown = texts(&first) + &texts(&second) + &texts(&rest);
        assert_eq!(shown, "the key is [REDACTED ANTHROPIC_API_KEY], keep it");
    }

    #[test]
    fn a_call_is_announced_once_then_runs_and_finishes() {
        let mut live = Live::new("/p".into(), Redactor::default());
        let streaming = AgentEvent::ToolCallStreaming { call_id: "c1".into(), tool: "bash".into() };
        assert!(
            matches!(&live.updates(&streaming)[..], [SessionUpdate::ToolCall(c)] if c.status == ToolCallStatus::Pending)
        );
        let started = AgentEvent::ToolStarted {
            call_id: "c1".into(),
            tool: "bash".into(),
            summary: "$ ls".into(),
            arguments: r#"{"command": "ls"}"#.into(),
        };
        let [SessionUpdate::ToolCallUpdate(update)] = &live.updates(&started)[..] else { panic!("announced twice") };
        assert_eq!(update.fields.status, Some(ToolCallStatus::InProgress));
        assert_eq!(update.fields.title.as_deref(), Some("$ ls"));
    }

    #[test]
    fn a_command_in_the_clients_terminal_keeps_showing_it_once_finished() {
        let mut live = Live::new("/p".into(), Redactor::default());
        let opened = Opened { call_id: "c1".into(), terminal_id: "t1".into() };
        let SessionUpdate::ToolCallUpdate(update) = live.terminal(&opened) else { panic!() };
        assert_eq!(update.fields.content, Some(vec![ToolCallContent::Terminal(Terminal::new("t1"))]));
        let record = |id: &str| crate::conversation::FinishedCall {
            call_id: id.into(),
            tool: "bash".into(),
            summary: "$ make".into(),
            content: "built\n[exit code 0]".into(),
            ..Default::default()
        };
        let finished = |live: &mut Live, id: &str| match &live.updates(&AgentEvent::ToolFinished(record(id)))[..] {
            [.., SessionUpdate::ToolCallUpdate(u)] => u.fields.clone(),
            other => panic!("{other:?}"),
        };
        let done = finished(&mut live, "c1");
        assert_eq!(done.status, Some(ToolCallStatus::Completed));
        assert_eq!(done.content, None, "the terminal stays the call's content");
        assert!(done.raw_output.is_some_and(|r| r["content"] == "built\n[exit code 0]"));
        assert!(finished(&mut live, "c2").content.is_some(), "a call run by cairn shows its output");
    }

    #[test]
    fn the_task_list_is_a_plan_with_sub_items_indented() {
        let item = |id: &str, text: &str, status, parent: Option<&str>| TaskItem {
            id: id.into(),
            text: text.into(),
            status,
            parent: parent.map(String::from),
        };
        let list = TaskList {
            items: vec![
                item("1", "fix the parser", TaskStatus::InProgress, None),
                item("2", "add a test", TaskStatus::Done, Some("1")),
                item("3", "release", TaskStatus::Pending, None),
            ],
        };
        let entries: Vec<(String, PlanEntryStatus)> =
            plan(&list).entries.into_iter().map(|e| (e.content, e.status)).collect();
        assert_eq!(
            entries,
            [
                ("fix the parser".to_string(), PlanEntryStatus::InProgress),
                ("  add a test".to_string(), PlanEntryStatus::Completed),
                ("release".to_string(), PlanEntryStatus::Pending),
            ]
        );
    }
}
