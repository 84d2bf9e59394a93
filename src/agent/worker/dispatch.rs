//! The worker's side of a reply's tool calls: it lends the call path (`agent/calls`) the parts
//! it needs, and as the path's [`Host`] keeps each finished call in the session (the result
//! message and the record in one transaction) and tells the front ends. What happens to a
//! call, step by step, is the path's business.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Worker;
use super::memory::memory_access;
use super::subagent::Delegator;
use crate::agent::calls::{Calls, CutLimits, Host};
use crate::agent::events::{AgentEvent, TurnStats};
use crate::agent::link::Link;
use crate::agent::saved_outputs::SavedOutputs;
use crate::agent::session_state::SessionState;
use crate::agent::toolbox::Toolbox;
use crate::agent::workplace::Workplace;
use crate::context::TruncationLimits;
use crate::conversation::{Block, FinishedCall, Image, Message, ToolCall};
use crate::tools::ToolContext;

/// What the worker keeps while its parts are lent to the path.
struct Keeper<'w> {
    session: &'w mut SessionState,
    place: &'w Workplace,
    link: &'w Link,
    delegator: Delegator<'w>,
}

impl Host for Keeper<'_> {
    fn finished(&mut self, call: FinishedCall, image: Option<Image>) {
        let mut message = Message::tool(call.result());
        // An image a tool returned (file_read of a PNG) travels after its result.
        if let Some(image) = image {
            message.content.push(Block::Image(image));
        }
        self.session.persist(message, Some(&call));
        self.link.emit(AgentEvent::ToolFinished(call));
    }

    fn cut(&mut self, count: u64) {
        self.session.pipeline_mut().note_truncations(count);
    }

    fn approved_memory(&self, by: &str, ctx: &ToolContext) -> ToolContext {
        let mut memory = memory_access(self.place, self.session);
        memory.approved_by = Some(by.to_string());
        ToolContext { memory: Some(Arc::new(memory)), ..ctx.clone() }
    }

    fn delegate(&self, call: &ToolCall, tools: &Toolbox, ctx: &ToolContext) -> Option<ToolContext> {
        self.delegator.context(call, tools, self.session, ctx)
    }
}

/// Where the session's cut outputs are saved.
pub(super) fn saved_outputs<'w>(place: &'w Workplace, session: &SessionState) -> SavedOutputs<'w> {
    SavedOutputs::new(place.truncations_dir(), place.root(), session.id(), session.redactor())
}

impl Worker {
    /// The calls of one assistant message, each to its one finished record.
    pub(super) async fn dispatch(&mut self, calls: &[ToolCall], cancel: &CancellationToken, stats: &mut TurnStats) {
        let ctx = self.tool_context(cancel);
        let limits = self.cut_limits();
        let saved = saved_outputs(&self.place, &self.session);
        let mut path = Calls::new(&mut self.tools, &self.ext, &self.place, &self.link, saved)
            .checkpointed(self.checkpoints.capture());
        let delegator = Delegator {
            place: &self.place,
            model: &self.model,
            models: &self.models,
            spend: &self.spend,
            ext: &self.ext,
            link: &self.link,
            task_list: &self.task_list,
            delegation: &self.delegation,
            background: &self.background,
            checkpoints: &self.checkpoints,
        };
        let mut keeper = Keeper { session: &mut self.session, place: &self.place, link: &self.link, delegator };
        stats.denied_tool_calls += path.run(calls, &ctx, cancel, limits, &mut keeper).await;
    }

    /// What every tool call of a turn may use.
    pub(super) fn tool_context(&self, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            root: self.place.root().to_path_buf(),
            config: self.place.config().tools.clone(),
            files: self.tools.files().clone(),
            cancel: cancel.clone(),
            memory: Some(Arc::new(memory_access(&self.place, &self.session))),
            // Set per call, for `task` calls only (see `Delegator::context`).
            subagents: None,
            task_list: Some(Arc::new(self.task_list.clone())),
            editor: self.tools.editor(),
            denied: self.tools.policy().read_denials(),
            background: self.jobs.as_ref().map(|jobs| crate::tools::background::BackgroundPlace {
                jobs: jobs.clone(),
                dir: self.place.data_dir().join("background").join(self.session.id()),
                session: self.session.id().to_string(),
                turn: self.checkpoints.turn(),
                redactor: self.session.redactor().clone(),
            }),
        }
    }

    /// How far a result, and all results of one reply, may go in the window as it is now.
    pub(super) fn cut_limits(&self) -> CutLimits {
        let config = &self.place.config().context;
        let budget = self.budget();
        CutLimits { each: TruncationLimits::new(config, &budget), reply: TruncationLimits::turn_cap(config, &budget) }
    }
}
