//! A tool call's one path, from the model's call to its finished record. Each step is a file:
//!
//! 1. `resolve` — which tool: a built-in one, an MCP server's (or what to say when its server
//!    is not ready), or the one a `tool_call` names;
//! 2. `decide` — the mode, the arguments and their preview, PreToolUse hooks (`hooks`), the
//!    permission rules and, when they ask, the user; what decided is a `ruling`;
//! 3. `capture` — a checkpoint before a write (the paths it names) or a command such as `bash`
//!    (the whole tree), recorded after it;
//! 4. `execute` — in the sandbox the decision chose;
//! 5. `rerun` — outside the sandbox, when it stopped a command and the user says so;
//! 6. `cut` — to the limits of one result and of the reply, the whole output saved;
//! 7. PostToolUse hooks (`hooks`), then one [`FinishedCall`], which the agent that made the
//!    call keeps and tells ([`Host`]).
//!
//! Consecutive read-only calls run concurrently; a write or a command runs alone, in order, so
//! two edits of one file never race. Every call gets exactly one record, in call order. The
//! user's own commands (`!cmd`, a custom command's `` !`cmd` ``) take the same steps from
//! `decide` on (`typed`).
//!
//! [`Calls`] borrows only what the path needs; it knows nothing of the session's history, the
//! model or the turn.

mod capture;
mod cut;
mod decide;
mod execute;
mod hooks;
mod rerun;
mod resolve;
mod ruling;
mod typed;

pub(super) use hooks::tool_alias;
pub(super) use ruling::Ruling;

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::checkpoints::Capture;
use super::extensions::Extensions;
use super::link::Link;
use super::saved_outputs::SavedOutputs;
use super::toolbox::Toolbox;
use super::workplace::Workplace;
use crate::context::TruncationLimits;
use crate::conversation::{FinishedCall, Image, ToolCall};
use crate::tools::ToolContext;
use crate::tools::tool_search::called_name;

/// The agent whose calls these are: it keeps and tells each finished call, and makes the
/// contexts only it can make.
pub(super) trait Host {
    /// A call is over: store it with its result message (an image the tool returned travels in
    /// that message) and tell the front ends. In call order, as each group of calls finishes.
    fn finished(&mut self, call: FinishedCall, image: Option<Image>);
    /// `count` results were cut to the limits this time.
    fn cut(&mut self, count: u64);
    /// The context of a memory call the user approved: its access carries who approved it.
    fn approved_memory(&self, by: &str, ctx: &ToolContext) -> ToolContext;
    /// The context of a `task` call: a launcher for its subagent, with `tools` as they stand
    /// now. `None` for any other call.
    fn delegate(&self, call: &ToolCall, tools: &Toolbox, ctx: &ToolContext) -> Option<ToolContext>;
}

/// How far the results of one reply may go: each one, and all of them together.
#[derive(Clone, Copy, Debug)]
pub(super) struct CutLimits {
    pub each: TruncationLimits,
    /// Bytes, for all results of one assistant message.
    pub reply: usize,
}

/// What the path of a call borrows.
pub(super) struct Calls<'a> {
    /// The tools, the rules in force, the sandbox and the approval gate; a rule the user
    /// chooses to remember is added here.
    tools: &'a mut Toolbox,
    /// The hooks, the MCP servers (what to say of one not ready) and the skills (whose files
    /// a call reads freely).
    ext: &'a Extensions,
    /// The project root and its trust (a rule saved for the project is trusted at once).
    place: &'a Workplace,
    /// Events out, and the mode as the user switches it, even mid-turn.
    link: &'a Link,
    /// Checkpoints around what writes or runs; `None` for what the user runs by hand.
    capture: Option<Capture>,
    /// Where the whole of a cut output goes.
    saved: SavedOutputs<'a>,
    /// Calls the rules, a hook or the user refused.
    denied: u32,
}

impl<'a> Calls<'a> {
    pub(super) fn new(
        tools: &'a mut Toolbox,
        ext: &'a Extensions,
        place: &'a Workplace,
        link: &'a Link,
        saved: SavedOutputs<'a>,
    ) -> Calls<'a> {
        Calls { tools, ext, place, link, capture: None, saved, denied: 0 }
    }

    /// Checkpointed by `capture` around every call that writes or runs something.
    pub(super) fn checkpointed(self, capture: Capture) -> Calls<'a> {
        Calls { capture: Some(capture), ..self }
    }

    /// The calls of one assistant message, to one finished record each, handed to `host` in
    /// call order. Returns how many the rules, a hook or the user refused.
    pub(super) async fn run<H: Host>(
        &mut self,
        calls: &[ToolCall],
        ctx: &ToolContext,
        cancel: &CancellationToken,
        limits: CutLimits,
        host: &mut H,
    ) -> u32 {
        let registry = self.tools.registry();
        let concurrent =
            |call: &ToolCall| registry.access_of(&called_name(call)).is_none_or(|access| access.is_read_only());
        let mut sent_so_far = 0usize;
        let mut i = 0;
        while i < calls.len() {
            let end =
                if concurrent(&calls[i]) { i + calls[i..].iter().take_while(|c| concurrent(c)).count() } else { i + 1 };
            let mut decided = Vec::new();
            for call in &calls[i..end] {
                let cleared = match self.resolve(call, &registry, cancel) {
                    Ok(resolved) => self.decide(resolved, ctx, cancel, host).await,
                    Err(finished) => Err(finished),
                };
                decided.push(cleared);
            }
            let capture = self.capture.as_ref();
            let ran = join_all(decided.into_iter().map(|d| execute::execute(d, ctx, capture))).await;
            let mut done = Vec::with_capacity(ran.len());
            for mut ran in ran {
                if let Some(rerun) = ran.rerun.take() {
                    self.rerun(&mut ran, rerun, ctx, cancel).await;
                }
                done.push(ran);
            }
            let records: Vec<&FinishedCall> = done.iter().map(|r| &r.record).collect();
            let sent = self.cut(&records, limits, &mut sent_so_far, calls.len(), host);
            for (ran, content) in done.into_iter().zip(sent) {
                let mut record = ran.record;
                record.content =
                    if record.not_run { content } else { self.post_tool_hooks(&record, content, cancel).await };
                host.finished(record, ran.image);
            }
            i = end;
        }
        self.denied
    }
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
