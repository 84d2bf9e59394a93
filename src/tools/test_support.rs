//! What the tools' tests share: a throwaway project and a call made the way the agent makes it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{FileTracker, Tool, ToolContext, ToolError, ToolOutput};
use crate::config::ToolsConfig;

/// An empty project folder and a context rooted in it; the folder goes when the `TempDir` does.
pub fn project() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ctx = ToolContext {
        root,
        config: ToolsConfig::default(),
        files: Arc::new(FileTracker::default()),
        cancel: CancellationToken::new(),
        memory: None,
        subagents: None,
        task_list: None,
        editor: None,
    };
    (dir, ctx)
}

/// A git project (so ignore rules apply) holding these files.
pub fn project_with(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    let (dir, ctx) = project();
    std::fs::create_dir(ctx.root.join(".git")).unwrap();
    for (file, content) in files {
        let path = ctx.root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    (dir, ctx)
}

/// Prepare, then execute: the agent's two steps, without policy or approval.
pub async fn run(tool: &dyn Tool, ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let prepared = tool.prepare(&args, ctx)?;
    tool.execute(&args, prepared, ctx).await
}
