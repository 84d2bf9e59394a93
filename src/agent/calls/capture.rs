//! Step 3, capture: a call that changes something is checkpointed around its execution,
//! whatever its outcome, and capture never changes the result. Before a write (`file_write`,
//! `file_edit`) the checkpoint looks at the paths it names; before a command (`bash`, an MCP
//! server's tool that is not read-only, a run outside the sandbox) at the whole tree, since a
//! command may change anything. A read or a fetch changes nothing here.

use std::future::Future;

use crate::agent::checkpoints::Capture;
use crate::checkpoint::CallKind;
use crate::tools::{Access, Prepared, Tool};

/// What a checkpoint before `tool`'s call looks at; nothing for a call that only reads.
pub(super) fn what_changes(tool: &dyn Tool, prepared: &Prepared) -> Option<CallKind> {
    match tool.access() {
        Access::Write => Some(CallKind::Write(prepared.paths.iter().map(|p| p.absolute.clone()).collect())),
        Access::Execute => Some(CallKind::Exec),
        // A fetch changes nothing here.
        Access::Read | Access::Memory | Access::Network => None,
    }
}

/// `run`, between the checkpoint before it (of what `kind` says may change) and the record of
/// what the call `call_id` of `tool` changed after it.
pub(super) async fn around<F: Future>(
    capture: Option<&Capture>,
    kind: Option<CallKind>,
    tool: &str,
    call_id: &str,
    run: F,
) -> F::Output {
    let guard = match (capture, kind) {
        (Some(capture), Some(kind)) => capture.before(kind).await,
        (Some(_) | None, _) => None,
    };
    let out = run.await;
    if let (Some(capture), Some(guard)) = (capture, guard) {
        capture.after(guard, tool, call_id).await;
    }
    out
}
