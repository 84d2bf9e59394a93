//! Step 5, rerun: a command failed inside the sandbox, most likely because of it. With a user
//! at the screen (and outside plan mode, whose promise is that nothing changes), they are asked
//! whether to run it again outside, checkpointed as the first run was; headless runs never
//! lift the sandbox, `--yes` or not.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::capture::around;
use super::execute::{Ran, Rerun, output_of};
use super::{Calls, Ruling};
use crate::agent::approvals::{Approval, Question};
use crate::agent::events::ApprovalKind;
use crate::checkpoint::CallKind;
use crate::conversation::{Mode, ToolCall};
use crate::tools::permissions::Choices;
use crate::tools::{SandboxPolicy, ToolContext};

impl Calls<'_> {
    pub(super) async fn rerun(
        &self,
        ran: &mut Ran<'_>,
        rerun: Rerun<'_>,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) {
        let why = rerun.why.clone();
        let stopped = format!("stopped by the sandbox: {why}");
        if self.link.mode() == Mode::Plan {
            Ruling::new("sandbox", format!("{stopped} (plan mode)")).into_record(&mut ran.record);
            return;
        }
        if let Some((told, line)) = self.tools.gate().why_no_rerun() {
            ran.record.output.push_str(&format!(
                "\n[{told}. Finish without it, and tell the user what needs running outside the sandbox.]"
            ));
            Ruling::new("sandbox", format!("{stopped} ({line})")).into_record(&mut ran.record);
            return;
        }
        let reason = format!("was stopped by the sandbox: {why}");
        let record = &ran.record;
        let call = ToolCall::new(record.call_id.clone(), record.tool.clone(), record.arguments.clone());
        let question = Question {
            call: &call,
            summary: &record.summary,
            diff: None,
            reason: &reason,
            asked_by: "sandbox".into(),
            choices: &Choices::default(),
            kind: ApprovalKind::OutsideSandbox { why: why.clone() },
            needs_user: true,
        };
        match self.tools.gate().ask(question, cancel, &self.link.emitter()).await {
            Approval::Approved(_) => {
                let started = Instant::now();
                let Rerun { tool, args, prepared, ctx: own, capture, why: _ } = rerun;
                let ctx = own.as_ref().unwrap_or(ctx);
                let unconfined = SandboxPolicy::full_access();
                let run = tool.execute_in_sandbox(&args, prepared, ctx, &unconfined);
                let result = around(capture.as_ref(), Some(CallKind::Exec), &call.name, &call.id, run).await;
                ran.took(output_of(result));
                ran.record.duration += started.elapsed();
                Ruling::new(
                    "user",
                    format!("run outside the sandbox, approved by you (the sandbox stopped it: {why})"),
                )
                .into_record(&mut ran.record);
            }
            Approval::Denied { .. } => {
                ran.record.output.push_str("\n[the user chose not to run it outside the sandbox]");
                Ruling::new("sandbox", format!("{stopped} (you kept it inside)")).into_record(&mut ran.record);
            }
            Approval::Interrupted => Ruling::new("sandbox", stopped).into_record(&mut ran.record),
        }
    }
}
