//! `task`: hand a self-contained job to a subagent with its own context, and get back only its
//! report. The run itself is the agent's ([`Subagents`]): it knows the session, the model and
//! the rules a child is held to.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::TASK;
use crate::prompt::{AgentTypes, DEFAULT_TYPE};

/// The job the model handed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// A few words for the user.
    pub description: String,
    /// The brief: goal, what is known, constraints, what to report.
    pub prompt: String,
    pub agent_type: String,
}

/// What the `task` tool needs from the agent: one subagent run to its report.
pub trait Subagents: Send + Sync {
    /// Run the job; `Ok` is the report the model gets, `Err` says why there is none.
    fn run(&self, request: TaskRequest) -> BoxFuture<'_, Result<String, ToolError>>;
}

pub struct Task {
    /// Types the model may name: name and description.
    types: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Args {
    description: String,
    prompt: String,
    agent_type: Option<String>,
}

const SHAPE: &str = r#"{"description": "a few words", "prompt": "the whole brief", "agent_type"?: "explore"}"#;

impl Task {
    pub fn new(types: &AgentTypes) -> Task {
        Task { types: types.all().iter().map(|t| (t.name.clone(), t.description.clone())).collect() }
    }

    fn request(&self, args: &serde_json::Value) -> Result<TaskRequest, ToolError> {
        let a: Args = parse_args(TASK, args, SHAPE)?;
        if a.description.trim().is_empty() || a.prompt.trim().is_empty() {
            return Err(ToolError::new(
                "task: `description` and `prompt` must not be empty; the prompt is the subagent's whole brief",
            ));
        }
        let agent_type = a.agent_type.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        let agent_type = agent_type.unwrap_or_else(|| DEFAULT_TYPE.to_string());
        if !self.types.iter().any(|(name, _)| *name == agent_type) {
            let known: Vec<&str> = self.types.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ToolError::new(format!(
                "task: there is no agent type {agent_type:?}; the types are: {}",
                known.join(", ")
            )));
        }
        Ok(TaskRequest {
            description: a.description.trim().to_string(),
            prompt: a.prompt.trim().to_string(),
            agent_type,
        })
    }
}

impl Tool for Task {
    fn name(&self) -> &'static str {
        TASK
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/task.md")
    }

    fn schema(&self) -> serde_json::Value {
        let names: Vec<&str> = self.types.iter().map(|(n, _)| n.as_str()).collect();
        let listed: Vec<String> = self.types.iter().map(|(n, d)| format!("{n}: {d}")).collect();
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "What the job is, in three to six words, for the user."},
                "prompt": {"type": "string", "description": "The brief: the goal, what is already known, constraints, and what the report must contain. The subagent sees nothing else of this conversation."},
                "agent_type": {"type": "string", "enum": names, "description": format!("The kind of subagent (default {DEFAULT_TYPE}). {}", listed.join(" "))}
            },
            "required": ["description", "prompt"]
        })
    }

    fn access(&self) -> Access {
        // The call itself changes nothing: each of the subagent's own calls is decided by the
        // rules, the mode and the user, as the parent's would be.
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let r = self.request(args)?;
        Ok(Prepared::new(format!("{}: {}", r.agent_type, r.description)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let request = self.request(args)?;
            let subagents = ctx.subagents.as_deref().ok_or_else(|| {
                ToolError::new("task: subagents cannot be started here (a subagent cannot start its own)")
            })?;
            let report = subagents.run(request).await?;
            Ok(ToolOutput::text(report))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_the_types_and_bad_calls_say_what_to_send() {
        let task = Task::new(&AgentTypes::builtin());
        let schema = task.schema();
        assert_eq!(schema["properties"]["agent_type"]["enum"], json!(["explore", "general"]));
        assert!(schema["properties"]["agent_type"]["description"].as_str().unwrap().contains("explore: Fast"));
        let (_dir, ctx) = crate::tools::test_support::project();
        let p = task.prepare(&json!({"description": "find callers", "prompt": "find them"}), &ctx).unwrap();
        assert_eq!(p.summary, "general: find callers");
        let e = task.prepare(&json!({"description": "x", "prompt": "y", "agent_type": "wizard"}), &ctx).unwrap_err();
        assert!(e.0.contains("no agent type \"wizard\"") && e.0.contains("explore, general"), "{e}");
        let e = task.prepare(&json!({"description": " ", "prompt": "y"}), &ctx).unwrap_err();
        assert!(e.0.contains("must not be empty"));
    }
}
