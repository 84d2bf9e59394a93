//! `!cmd` and `!!cmd`: the user runs a shell command in the project. It goes through the same
//! permission rules and sandbox as the model's `bash` (the call path's `typed` step: deny rules
//! refuse it, the sandbox confines it, plan mode allows only read-only commands), except that
//! the user typing it is the approval an ask would have needed. Its output is shown; `!!` also
//! puts the command and its output into the conversation, as a message from the user, for the
//! model's next turn.

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::dispatch::saved_outputs;
use crate::agent::calls::Calls;
use crate::agent::events::{AgentEvent, NoticeLevel, TurnOutcome, TurnStats, TurnSummary};
use crate::conversation::Message;

impl Worker {
    pub(super) async fn run_shell(
        &mut self,
        typed: String,
        command: String,
        into_context: bool,
        cancel: CancellationToken,
    ) -> TurnSummary {
        let mut stats = TurnStats::default();
        self.link.emit(AgentEvent::TurnStarted { prompt: typed });
        let ctx = self.tool_context(&cancel);
        let saved = saved_outputs(&self.place, &self.session);
        let ran = Calls::new(&mut self.tools, &self.ext, &self.place, &self.link, saved)
            .run_typed(&command, &ctx, &cancel)
            .await;
        let record = match ran {
            Ok(record) => record,
            Err(error) => return TurnSummary { outcome: TurnOutcome::Failed { error }, stats },
        };
        if record.not_run {
            stats.denied_tool_calls += 1;
            let why = record.approval.clone().unwrap_or_else(|| "refused".into());
            self.link.emit(AgentEvent::ToolFinished(record));
            return TurnSummary {
                outcome: TurnOutcome::Failed { error: format!("`{command}` was not run: {why}") },
                stats,
            };
        }
        let output = record.output.clone();
        if into_context {
            let limits = self.cut_limits().each;
            let saved = saved_outputs(&self.place, &self.session);
            let (sent, _) = saved.cut(&record.call_id, &record.tool, &record.arguments, &output, &limits);
            self.session
                .persist(Message::user(format!("I ran a shell command in the project:\n$ {command}\n{sent}")), None);
            self.link
                .notice(NoticeLevel::Info, "added to the conversation: the model sees this command and its output");
        }
        self.link.emit(AgentEvent::ToolFinished(record));
        let outcome = if cancel.is_cancelled() {
            TurnOutcome::Interrupted { partial: output }
        } else {
            TurnOutcome::Completed { text: output }
        };
        TurnSummary { outcome, stats }
    }
}
