//! `todo`: the model's task list — a tree of work items, each pending, in progress or done.
//! The list is the session's ([`TaskBoard`], which the agent provides): kept with it, sent after
//! the last cache breakpoint of every request, shown to the user as a checklist.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::TODO;
use crate::conversation::{TaskItem, TaskList};

/// Where the list lives.
pub trait TaskBoard: Send + Sync {
    /// Replace the session's list; the answer is what the model is told.
    fn replace(&self, list: TaskList) -> Result<String, String>;
}

pub struct Todo {
    max_items: usize,
}

impl Todo {
    pub fn new(max_items: usize) -> Todo {
        Todo { max_items }
    }

    fn list(&self, args: &serde_json::Value) -> Result<TaskList, ToolError> {
        let a: Args = parse_args(TODO, args, SHAPE)?;
        TaskList::checked(a.items, self.max_items).map_err(|e| ToolError::new(format!("todo: {e}")))
    }
}

#[derive(Deserialize)]
struct Args {
    items: Vec<TaskItem>,
}

const SHAPE: &str = r#"{"items": [{"id": "1", "text": "…", "status": "pending"|"in_progress"|"done", "parent"?: "id of another item"}]}"#;

impl Tool for Todo {
    fn name(&self) -> &'static str {
        TODO
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/todo.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "description": "The whole list, replacing the previous one.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "Short and unique, e.g. \"1\" or \"2.1\"."},
                            "text": {"type": "string", "description": "The step, in a line."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]},
                            "parent": {"type": "string", "description": "The id of the item this one is a step of."}
                        },
                        "required": ["id", "text", "status"]
                    }
                }
            },
            "required": ["items"]
        })
    }

    fn access(&self) -> Access {
        // It changes only the session's own list, never the project.
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let list = self.list(args)?;
        Ok(Prepared::new(list.describe_counts()))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let list = self.list(args)?;
            let board = ctx.task_list.as_deref().ok_or_else(|| ToolError::new("todo: no task list in this session"))?;
            Ok(ToolOutput::text(board.replace(list).map_err(ToolError::new)?))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_list_is_refused_before_it_runs() {
        let (_dir, ctx) = crate::tools::test_support::project();
        let todo = Todo::new(10);
        let ok = todo.prepare(&json!({"items": [{"id": "1", "text": "a", "status": "done"}]}), &ctx).unwrap();
        assert_eq!(ok.summary, "0 pending, 0 in progress, 1 done");
        let bad = todo.prepare(&json!({"items": [{"id": "1", "text": "a", "status": "started"}]}), &ctx).unwrap_err();
        assert!(bad.0.contains("expected"), "{bad}");
        let orphan = todo
            .prepare(&json!({"items": [{"id": "1", "text": "a", "status": "done", "parent": "0"}]}), &ctx)
            .unwrap_err();
        assert!(orphan.0.starts_with("todo: ") && orphan.0.contains("not in the list"), "{orphan}");
    }
}
