//! Step 4, execute: a cleared call runs — in the sandbox the decision chose (plan mode's
//! read-only one), else in the tool's own — checkpointed around (`capture`). A tool's failure
//! is its result, for the model; a command the sandbox stopped comes back with what a run
//! outside it needs (`rerun`).

use std::time::Instant;

use super::capture::{around, what_changes};
use super::decide::Cleared;
use super::resolve::Step;
use crate::agent::checkpoints::Capture;
use crate::conversation::{FinishedCall, Image};
use crate::tools::{Access, Prepared, Tool, ToolContext, ToolOutput};

/// What a command the sandbox stopped needs to run again outside it (`rerun`).
pub(super) struct Rerun<'r> {
    pub tool: &'r dyn Tool,
    pub args: serde_json::Value,
    pub prepared: Prepared,
    pub ctx: Option<ToolContext>,
    /// Checkpoints the run outside the sandbox as the first run was.
    pub capture: Option<Capture>,
    /// Why the sandbox stopped it, in words.
    pub why: String,
}

/// A call that ran (or ended before it could), on its way to being cut.
pub(super) struct Ran<'r> {
    pub record: FinishedCall,
    /// An image the tool returned: it travels in the result message, after the text.
    pub image: Option<Image>,
    /// The sandbox stopped the command: what a run outside it needs.
    pub rerun: Option<Rerun<'r>>,
}

impl Ran<'_> {
    /// The tool's output, into the record (and the image beside it); why the sandbox stopped
    /// it, if it did.
    pub(super) fn took(&mut self, output: ToolOutput) -> Option<String> {
        let ToolOutput { content, is_error, exit_code, diff, sandbox_denial, image } = output;
        self.record.output = content;
        self.record.is_error = is_error;
        self.record.exit_code = exit_code;
        self.record.diff = diff;
        self.image = image;
        sandbox_denial
    }
}

/// A tool's error is its result.
pub(super) fn output_of(result: Result<ToolOutput, crate::tools::ToolError>) -> ToolOutput {
    result.unwrap_or_else(|e| ToolOutput { content: e.0, is_error: true, ..Default::default() })
}

/// Run a cleared call, checkpointed around by `capture`; a call that ended at an earlier step
/// passes through.
pub(super) async fn execute<'r>(decided: Step<Cleared<'r>>, ctx: &ToolContext, capture: Option<&Capture>) -> Ran<'r> {
    let cleared = match decided {
        Ok(cleared) => cleared,
        Err(finished) => return Ran { record: *finished, image: None, rerun: None },
    };
    let Cleared { call, tool, args, prepared, sandbox, ctx: own, ruling } = cleared;
    let summary = prepared.summary.clone();
    let changes = what_changes(tool, &prepared);
    // Only a command can be stopped by the sandbox; a write's preview is not copied.
    let again = (tool.access() == Access::Execute).then(|| prepared.clone());
    let run_ctx = own.as_ref().unwrap_or(ctx);
    let (result, duration) = around(capture, changes, &call.name, &call.id, async {
        let started = Instant::now();
        let result = match &sandbox {
            Some(sandbox) => tool.execute_in_sandbox(&args, prepared, run_ctx, sandbox).await,
            None => tool.execute(&args, prepared, run_ctx).await,
        };
        (result, started.elapsed())
    })
    .await;
    let record = FinishedCall {
        call_id: call.id,
        tool: call.name,
        arguments: call.arguments,
        summary,
        duration,
        ..Default::default()
    };
    let mut ran = Ran { record, image: None, rerun: None };
    ruling.into_record(&mut ran.record);
    let denial = ran.took(output_of(result));
    ran.rerun = again.zip(denial).map(|(prepared, why)| Rerun {
        tool,
        args,
        prepared,
        ctx: own,
        capture: capture.cloned(),
        why,
    });
    ran
}
