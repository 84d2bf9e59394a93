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
        denied: Default::default(),
        background: None,
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

/// A folder outside every writable root of the sandbox (the temp dirs among them), where a
/// test can put canary files only an unconfined command could change: the build's target
/// folder, else the home folder, else (as root) `/var/lib`. `None` when all of them lie in a
/// writable root (a checkout and home under `/tmp`).
pub fn outside_dir() -> Option<std::path::PathBuf> {
    let writable: Vec<std::path::PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(std::path::PathBuf::from)
        .chain(std::env::var_os("TMPDIR").map(std::path::PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let candidates = [
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target")),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
        Some(std::path::PathBuf::from("/var/lib")),
    ];
    candidates.into_iter().flatten().find_map(|dir| {
        let dir = dir.canonicalize().ok()?;
        let probe = dir.join(format!(".cairn-probe-{}", std::process::id()));
        let usable = !writable.iter().any(|w| dir.starts_with(w)) && std::fs::write(&probe, "").is_ok();
        let _ = std::fs::remove_file(&probe);
        usable.then_some(dir)
    })
}
