//! `bash_output` and `bash_stop`: the model's hold on the background commands its `bash` calls
//! started (`background`) — reading what one printed, from where it last read or an offset,
//! filtered by a pattern; and ending one. Both only touch this agent's own jobs, which already
//! passed the approval of the `bash` call that started them, so neither asks again.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::background::Job;
use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::{BASH_OUTPUT, BASH_STOP};

/// Output one read returns at most: enough for a server's log since the last look, small
/// enough to leave room in the window.
const READ_BYTES: usize = 30 * 1024;

fn job(ctx: &ToolContext, id: u32) -> Result<std::sync::Arc<Job>, ToolError> {
    let place = ctx
        .background
        .as_ref()
        .ok_or_else(|| ToolError::new("there are no background commands here (a subagent cannot start them)"))?;
    place.jobs.get(id).ok_or_else(|| {
        let known: Vec<String> = place.jobs.list().iter().map(|j| j.id.to_string()).collect();
        ToolError::new(if known.is_empty() {
            format!("there is no background job {id}: none was started (bash with background: true starts one)")
        } else {
            format!("there is no background job {id}; the jobs are {}", known.join(", "))
        })
    })
}

/// `job 1 · running for 42s · $ python3 -m http.server 8123`
fn headline(job: &Job) -> String {
    let p = job.picture();
    let how = if p.state.is_running() { format!("running for {}", p.ran_for()) } else { p.state.label() };
    format!("job {} · {how} · $ {}", p.id, crate::conversation::clip(&p.command, 200))
}

#[derive(Deserialize)]
struct OutputArgs {
    id: u32,
    offset: Option<u64>,
    filter: Option<String>,
}

const OUTPUT_SHAPE: &str = r#"{"id": 1, "offset"?: bytes, "filter"?: "regex"}"#;
const STOP_SHAPE: &str = r#"{"id": 1}"#;

pub struct BashOutput;

impl Tool for BashOutput {
    fn name(&self) -> &'static str {
        BASH_OUTPUT
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/bash_output.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 1, "description": "The job id the bash call returned."},
                "offset": {"type": "integer", "minimum": 0, "description": "Byte offset to read from; default: where your last read of this job ended."},
                "filter": {"type": "string", "description": "A regular expression: only matching lines are returned."}
            },
            "required": ["id"]
        })
    }

    fn access(&self) -> Access {
        // It reads what a command already approved printed.
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: OutputArgs = parse_args(self.name(), args, OUTPUT_SHAPE)?;
        if let Some(filter) = &args.filter {
            regex::Regex::new(filter)
                .map_err(|e| ToolError::new(format!("filter is not a regular expression: {e}")))?;
        }
        Ok(Prepared::new(format!("job {}", args.id)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: OutputArgs = parse_args(self.name(), args, OUTPUT_SHAPE)?;
            let job = job(ctx, args.id)?;
            let slice = job
                .read(args.offset, READ_BYTES)
                .map_err(|e| ToolError::new(format!("could not read job {}'s output: {e}", args.id)))?;
            let mut content = format!("{}\n", headline(&job));
            if let Some(asked) = args.offset.filter(|&o| o < slice.from) {
                content.push_str(&format!(
                    "[bytes {asked}–{} were dropped: the file keeps only the newest output]\n",
                    slice.from
                ));
            }
            let text = match &args.filter {
                Some(filter) => {
                    let pattern = regex::Regex::new(filter)
                        .map_err(|e| ToolError::new(format!("filter is not a regular expression: {e}")))?;
                    slice.text.lines().filter(|l| pattern.is_match(l)).map(|l| format!("{l}\n")).collect()
                }
                None => slice.text.clone(),
            };
            if slice.text.is_empty() {
                content.push_str("(no new output)\n");
            } else if text.is_empty() {
                content.push_str("(no line matched the filter)\n");
            } else {
                content.push_str(&text);
                if !text.ends_with('\n') {
                    content.push('\n');
                }
            }
            let more = if slice.to < slice.total { " (more to read)" } else { "" };
            content.push_str(&format!(
                "[bytes {}–{} of {}; next offset {}{more}]",
                slice.from, slice.to, slice.total, slice.to
            ));
            Ok(ToolOutput::text(content))
        }
        .boxed()
    }
}

#[derive(Deserialize)]
struct StopArgs {
    id: u32,
}

pub struct BashStop;

impl Tool for BashStop {
    fn name(&self) -> &'static str {
        BASH_STOP
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/bash_stop.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 1, "description": "The job id the bash call returned."}},
            "required": ["id"]
        })
    }

    fn access(&self) -> Access {
        // It ends only what an approved `bash` call of this agent started.
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: StopArgs = parse_args(self.name(), args, STOP_SHAPE)?;
        Ok(Prepared::new(format!("job {}", args.id)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: StopArgs = parse_args(self.name(), args, STOP_SHAPE)?;
            let job = job(ctx, args.id)?;
            let was = job.state();
            job.stop().await;
            let p = job.picture();
            let mut content = if was.is_running() {
                format!("Ended job {} ({}).\n", p.id, p.state.label())
            } else {
                format!("Job {} had already ended ({}).\n", p.id, p.state.label())
            };
            if !p.last_lines.is_empty() {
                content.push_str("Its last lines:\n");
                for line in &p.last_lines {
                    content.push_str(&format!("{line}\n"));
                }
            }
            Ok(ToolOutput::text(content.trim_end().to_string()))
        }
        .boxed()
    }
}
