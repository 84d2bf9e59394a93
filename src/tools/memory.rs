//! `memory_save` and `memory_search`: the model's access to cairn's memories and to the
//! project's past sessions. Both work through [`MemoryAccess`], which the agent provides (it
//! knows the session, and the memory rules live a layer up).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::{MEMORY_SAVE, MEMORY_SEARCH};
use crate::conversation::{MemoryKind, RetentionClass};

/// A memory the model asked to save.
#[derive(Clone, Copy, Debug)]
pub struct MemoryDraft<'a> {
    /// One of [`MemoryKind::SAVED`].
    pub kind: MemoryKind,
    pub class: RetentionClass,
    pub title: &'a str,
    pub content: &'a str,
    /// Seen from every project, not only this one.
    pub global: bool,
}

/// What the memory tools need from the agent.
pub trait MemoryAccess: Send + Sync {
    /// Save (or update the twin of) a memory; the answer says which, with its id.
    fn save(&self, draft: MemoryDraft<'_>) -> Result<String, String>;
    /// Memories and past messages matching `query`, rendered for the model.
    fn search(&self, query: &str, limit: usize) -> Result<String, String>;
}

pub struct MemorySave;
pub struct MemorySearch;

#[derive(Deserialize)]
struct SaveArgs {
    r#type: String,
    title: String,
    content: String,
    class: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    limit: Option<usize>,
}

const SAVE_SHAPE: &str = r#"{"type": "project"|"user"|"decision", "title": "…", "content": "…", "class"?: "priority"|"durable"|"working", "scope"?: "project"|"global"}"#;
const SEARCH_SHAPE: &str = r#"{"query": "words to look for", "limit"?: 5}"#;

/// The kind the model asked for: one it may save.
fn saved_kind(name: &str) -> Result<MemoryKind, ToolError> {
    MemoryKind::parse(name)
        .filter(|k| MemoryKind::SAVED.contains(k))
        .ok_or_else(|| ToolError::new(format!("type must be project, user or decision, not {name:?}")))
}

/// The class the model asked for; durable when it named none.
fn retention(name: Option<&str>) -> Result<RetentionClass, ToolError> {
    let Some(name) = name else { return Ok(RetentionClass::default()) };
    RetentionClass::parse(name)
        .ok_or_else(|| ToolError::new(format!("class must be priority, durable or working, not {name:?}")))
}

fn memory(ctx: &ToolContext) -> Result<&dyn MemoryAccess, ToolError> {
    ctx.memory.as_deref().ok_or_else(|| ToolError::new("memories are not available in this session"))
}

impl Tool for MemorySave {
    fn name(&self) -> &'static str {
        MEMORY_SAVE
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/memory_save.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": MemoryKind::SAVED.map(MemoryKind::as_str), "description": "project: a fact about the code; user: a preference or correction of the user; decision: a technical choice and why."},
                "title": {"type": "string", "description": "A short label."},
                "content": {"type": "string", "description": "The knowledge itself, self-contained."},
                "class": {"type": "string", "enum": RetentionClass::ALL.map(RetentionClass::as_str), "description": "priority: always shown first; durable (default): kept; working: expires after 14 days."},
                "scope": {"type": "string", "enum": ["project", "global"], "description": "project (default): this project only; global: every project, for what the user says holds everywhere."}
            },
            "required": ["type", "title", "content"]
        })
    }

    fn access(&self) -> Access {
        Access::Memory
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let a: SaveArgs = parse_args(self.name(), args, SAVE_SHAPE)?;
        saved_kind(&a.r#type)?;
        retention(a.class.as_deref())?;
        if let Some(scope) = &a.scope
            && !["project", "global"].contains(&scope.as_str())
        {
            return Err(ToolError::new(format!("scope must be project or global, not {scope:?}")));
        }
        if a.title.trim().is_empty() || a.content.trim().is_empty() {
            return Err(ToolError::new("title and content must not be empty"));
        }
        let scope = if a.scope.as_deref() == Some("global") { "global " } else { "" };
        Ok(Prepared::new(format!("{scope}{}: {}", a.r#type, a.title.trim())))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let a: SaveArgs = parse_args(self.name(), args, SAVE_SHAPE)?;
            let draft = MemoryDraft {
                kind: saved_kind(&a.r#type)?,
                class: retention(a.class.as_deref())?,
                title: a.title.trim(),
                content: a.content.trim(),
                global: a.scope.as_deref() == Some("global"),
            };
            let answer = memory(ctx)?.save(draft).map_err(ToolError::new)?;
            Ok(ToolOutput::text(answer))
        }
        .boxed()
    }
}

impl Tool for MemorySearch {
    fn name(&self) -> &'static str {
        MEMORY_SEARCH
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/memory_search.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Most results of each kind (default 5)."}
            },
            "required": ["query"]
        })
    }

    fn access(&self) -> Access {
        Access::Memory
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let a: SearchArgs = parse_args(self.name(), args, SEARCH_SHAPE)?;
        if a.query.trim().is_empty() {
            return Err(ToolError::new("query is empty; give the words to look for"));
        }
        Ok(Prepared::new(a.query.trim().to_string()))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        _prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let a: SearchArgs = parse_args(self.name(), args, SEARCH_SHAPE)?;
            let limit = a.limit.unwrap_or(5).clamp(1, 20);
            let answer = memory(ctx)?.search(a.query.trim(), limit).map_err(ToolError::new)?;
            Ok(ToolOutput::text(answer))
        }
        .boxed()
    }
}
