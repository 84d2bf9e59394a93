//! `glob`: find files by name pattern. Also owns what `grep` shares with it: how a glob
//! pattern is matched against a walked path, how the project is walked (ignore files honoured,
//! hidden files skipped), and how walked paths are shown.

use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::file_read::prepared_path;
use super::{Access, Prepared, ProjectPath, Tool, ToolContext, ToolError, ToolOutput, parse_args, resolve_path};
use crate::conversation::tool_names::GLOB;

pub struct Glob;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
}

const SHAPE: &str = r#"{"pattern": "**/*.rs", "path"?: "folder to search, default the project root"}"#;

impl Tool for Glob {
    fn name(&self) -> &'static str {
        GLOB
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/glob.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. `*.rs` (file names anywhere) or `src/**/*.ts` (paths relative to `path`)."},
                "path": {"type": "string", "description": "Folder to search in. Default: the project root."}
            },
            "required": ["pattern"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        PathPattern::new(&args.pattern)?;
        let base = resolve_path(&ctx.root, args.path.as_deref().unwrap_or("."));
        let summary =
            if base.display == "." { args.pattern.clone() } else { format!("{} in {}", args.pattern, base.display) };
        Ok(Prepared { summary, paths: vec![base], change: None, shown_as: None })
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: Args = parse_args(self.name(), args, SHAPE)?;
            let pattern = PathPattern::new(&args.pattern)?;
            let base = prepared_path(&prepared)?;
            let root = ctx.root.clone();
            let cap = ctx.config.glob_max_results;
            let cancel = ctx.cancel.clone();
            let raw = args.pattern;
            let denied = ctx.denied.clone();
            tokio::task::spawn_blocking(move || find(&root, &base, &raw, &pattern, cap, &cancel, &denied))
                .await
                .map_err(|e| ToolError::new(format!("glob failed unexpectedly: {e}")))?
        }
        .boxed()
    }
}

fn find(
    root: &Path,
    base: &ProjectPath,
    raw: &str,
    pattern: &PathPattern,
    cap: usize,
    cancel: &CancellationToken,
    denied: &super::ReadDenials,
) -> Result<ToolOutput, ToolError> {
    let shown = &base.display;
    match std::fs::metadata(&base.absolute) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::new(format!(
                "{shown} is a file, not a folder; glob searches a folder (read the file with file_read)"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::new(format!(
                "{shown} does not exist; give an existing folder as path, or leave path out"
            )));
        }
        Err(e) => return Err(ToolError::new(format!("cannot search {shown}: {e}"))),
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut interrupted = false;
    let mut skipped = 0usize;
    for entry in walk(&base.absolute, pattern.names_hidden()).filter_map(Result::ok) {
        if cancel.is_cancelled() {
            interrupted = true;
            break;
        }
        if !is_file(&entry) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&base.absolute) else { continue };
        if pattern.matches(entry.path(), relative) {
            if denied.denies("glob", entry.path()) {
                skipped += 1;
                continue;
            }
            found.push(entry.into_path());
        }
    }
    let skipped_note = (skipped > 0).then(|| {
        format!(
            "[{skipped} matching file{} not listed: a deny rule covers {}]",
            if skipped == 1 { "" } else { "s" },
            if skipped == 1 { "it" } else { "them" }
        )
    });
    if found.is_empty() && !interrupted {
        let mut text = format!("No files match {raw} under {shown}");
        if let Some(note) = skipped_note {
            text.push_str(&format!("\n{note}"));
        }
        return Ok(ToolOutput::text(text));
    }
    // Component-wise order: a folder's files stay together (`a/b.rs` before `a.rs`).
    found.sort();
    let mut lines: Vec<String> = found.iter().take(cap).map(|p| display_path(root, p)).collect();
    if found.len() > cap {
        lines.push(format!("[{} more not shown; narrow the pattern]", found.len() - cap));
    }
    lines.extend(skipped_note);
    if interrupted {
        lines.push("[interrupted by the user]".into());
    }
    Ok(ToolOutput::text(lines.join("\n")))
}

fn is_file(entry: &ignore::DirEntry) -> bool {
    match entry.file_type() {
        Some(ft) if ft.is_file() => true,
        // A symlink counts when it leads to a file; links to folders are not followed.
        Some(ft) if ft.is_symlink() => entry.path().is_file(),
        Some(_) | None => false,
    }
}

/// A glob as the tools use it: without a `/` it matches file names anywhere, with one it
/// matches the path relative to the search folder (or the absolute path, when absolute).
pub(super) struct PathPattern {
    matcher: globset::GlobMatcher,
    target: Target,
    names_hidden: bool,
}

#[derive(Clone, Copy)]
enum Target {
    FileName,
    Relative,
    Absolute,
}

impl PathPattern {
    pub(super) fn new(raw: &str) -> Result<PathPattern, ToolError> {
        let trimmed = raw.trim();
        let pattern = trimmed.strip_prefix("./").unwrap_or(trimmed);
        if pattern.is_empty() {
            return Err(ToolError::new("the glob pattern is empty; give one such as `*.rs` or `src/**/*.toml`"));
        }
        let target = if pattern.starts_with('/') {
            Target::Absolute
        } else if pattern.contains('/') {
            Target::Relative
        } else {
            Target::FileName
        };
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::new(format!("invalid glob pattern: {e}")))?;
        let names_hidden = pattern.split('/').any(|part| part.starts_with('.') && part != "." && part != "..");
        Ok(PathPattern { matcher: glob.compile_matcher(), target, names_hidden })
    }

    pub(super) fn matches(&self, absolute: &Path, relative: &Path) -> bool {
        match self.target {
            Target::FileName => relative.file_name().is_some_and(|name| self.matcher.is_match(name)),
            Target::Relative => self.matcher.is_match(relative),
            Target::Absolute => self.matcher.is_match(absolute),
        }
    }

    /// Whether the pattern itself names a hidden file or folder, so hidden ones must be walked.
    pub(super) fn names_hidden(&self) -> bool {
        self.names_hidden
    }
}

/// Walk `base` in sorted order, honouring `.gitignore` (inside a git repository, as git
/// does), `.ignore` and global git excludes, skipping hidden entries unless `hidden` and
/// never descending into `.git`. `base` itself is always visited, even if ignored or hidden.
pub(super) fn walk(base: &Path, hidden: bool) -> ignore::Walk {
    ignore::WalkBuilder::new(base)
        .hidden(!hidden)
        // Only inside a repository: a stray `.gitignore` above the project (a dotfiles repo in
        // the home folder ignoring `*`, say) must not hide the project's files.
        .require_git(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
}

/// A walked path as transcripts show it: relative to the project root when inside it.
pub(super) fn display_path(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        Ok(_) | Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::test_support;

    fn project(files: &[&str]) -> (tempfile::TempDir, ToolContext) {
        let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x\n")).collect();
        test_support::project_with(&files)
    }

    async fn glob(ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        test_support::run(&Glob, ctx, args).await
    }

    const TREE: &[&str] =
        &["Cargo.toml", "build.rs", "src/main.rs", "src/tools/mod.rs", "src/tools/bash.rs", "docs/a.md"];

    #[tokio::test]
    async fn glob_without_slash_matches_file_names_anywhere_sorted() {
        let (_d, ctx) = project(TREE);
        let out = glob(&ctx, json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(out.content, "build.rs\nsrc/main.rs\nsrc/tools/bash.rs\nsrc/tools/mod.rs");
    }

    #[tokio::test]
    async fn glob_with_slash_matches_paths_relative_to_the_base() {
        let (_d, ctx) = project(TREE);
        let out = glob(&ctx, json!({"pattern": "src/*.rs"})).await.unwrap();
        assert_eq!(out.content, "src/main.rs", "a single star does not cross folders");
        let out = glob(&ctx, json!({"pattern": "src/**/*.rs"})).await.unwrap();
        assert_eq!(out.content, "src/main.rs\nsrc/tools/bash.rs\nsrc/tools/mod.rs");
        let out = glob(&ctx, json!({"pattern": "*.rs", "path": "src/tools"})).await.unwrap();
        assert_eq!(out.content, "src/tools/bash.rs\nsrc/tools/mod.rs", "results stay relative to the project root");
        let out = glob(&ctx, json!({"pattern": "tools/m*.rs", "path": "src"})).await.unwrap();
        assert_eq!(out.content, "src/tools/mod.rs");
    }

    #[tokio::test]
    async fn glob_respects_gitignore_and_skips_hidden_files_unless_named() {
        let (_d, ctx) = project(&["src/lib.rs", "target/debug/gen.rs", ".hidden/secret.rs", ".github/ci.yml"]);
        std::fs::write(ctx.root.join(".gitignore"), "target/\n").unwrap();
        let out = glob(&ctx, json!({"pattern": "**/*.rs"})).await.unwrap();
        assert_eq!(out.content, "src/lib.rs");
        let out = glob(&ctx, json!({"pattern": ".github/*.yml"})).await.unwrap();
        assert_eq!(out.content, ".github/ci.yml");
        let out = glob(&ctx, json!({"pattern": ".git*"})).await.unwrap();
        assert_eq!(out.content, ".gitignore", "hidden files are found when named, but .git is never walked");
    }

    #[tokio::test]
    async fn glob_caps_results_with_a_note() {
        let (_d, mut ctx) = project(&["a1.rs", "a2.rs", "a3.rs", "a4.rs"]);
        ctx.config.glob_max_results = 3;
        let out = glob(&ctx, json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(out.content, "a1.rs\na2.rs\na3.rs\n[1 more not shown; narrow the pattern]");
    }

    #[tokio::test]
    async fn glob_without_match_says_so_plainly() {
        let (_d, ctx) = project(TREE);
        let out = glob(&ctx, json!({"pattern": "*.py", "path": "src"})).await.unwrap();
        assert_eq!(out.content, "No files match *.py under src");
        assert!(!out.is_error);
    }

    #[tokio::test]
    async fn glob_with_invalid_pattern_reports_the_globset_error() {
        let (_d, ctx) = project(TREE);
        let err = glob(&ctx, json!({"pattern": "src/[a-"})).await.unwrap_err();
        assert!(err.0.starts_with("invalid glob pattern:") && err.0.contains("unclosed"), "{err}");
    }

    #[tokio::test]
    async fn glob_of_a_missing_or_file_base_explains() {
        let (_d, ctx) = project(TREE);
        let err = glob(&ctx, json!({"pattern": "*", "path": "nope"})).await.unwrap_err();
        assert!(err.0.contains("nope does not exist"), "{err}");
        let err = glob(&ctx, json!({"pattern": "*", "path": "Cargo.toml"})).await.unwrap_err();
        assert!(err.0.contains("is a file"), "{err}");
    }

    #[tokio::test]
    async fn glob_supports_alternatives_and_leading_dot_slash() {
        let (_d, ctx) = project(&["a.ts", "b.tsx", "c.js"]);
        let out = glob(&ctx, json!({"pattern": "./*.{ts,tsx}"})).await.unwrap();
        assert_eq!(out.content, "a.ts\nb.tsx");
    }
}
