//! `file_write`: create a file or replace its whole content, refusing to overwrite what the agent
//! has not seen. Also owns the checks `file_edit` shares: reading the current text of a file
//! about to change, and refusing folders, binary files and files changed since last seen.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::file_read::looks_binary;
use super::{
    Access, Editor, FileChange, FileTracker, Prepared, ProjectPath, Tool, ToolContext, ToolError, ToolOutput,
    parse_args, resolve_path,
};
use crate::conversation::tool_names::FILE_WRITE;

pub struct FileWrite;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
}

const SHAPE: &str = r#"{"path": "src/new.rs", "content": "the whole file"}"#;

impl Tool for FileWrite {
    fn name(&self) -> &'static str {
        FILE_WRITE
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/file_write.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to write, relative to the project root or absolute."},
                "content": {"type": "string", "description": "The complete new content of the file."}
            },
            "required": ["path", "content"]
        })
    }

    fn access(&self) -> Access {
        Access::Write
    }

    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError> {
        prepare_with(args, ctx, None)
    }

    fn prepare_in<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Prepared, ToolError>> {
        prepare_held(args, ctx, prepare_with)
    }

    fn execute<'a>(
        &'a self,
        _args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let change = prepared_change(prepared)?;
            apply(&change, ctx).await?;
            let content = match &change.before {
                None => {
                    let lines = change.after.lines().count();
                    format!("Created {} ({lines} line{})", change.path.display, if lines == 1 { "" } else { "s" })
                }
                Some(_) => {
                    let (added, removed) = change.line_stats();
                    format!("Wrote {}: +{added} −{removed} lines", change.path.display)
                }
            };
            Ok(ToolOutput { diff: Some(change.unified_diff()), ..ToolOutput::text(content) })
        }
        .boxed()
    }
}

/// `prepare`, with the file's text as the editor holds it when `held`.
fn prepare_with(args: &serde_json::Value, ctx: &ToolContext, held: Option<String>) -> Result<Prepared, ToolError> {
    let args: Args = parse_args(FILE_WRITE, args, SHAPE)?;
    if args.path.ends_with('/') || args.path.ends_with(std::path::MAIN_SEPARATOR) || args.path.trim().is_empty() {
        return Err(ToolError::new(format!(
            "{:?} names a folder, not a file; give the path of the file to write, e.g. {}new.txt (missing folders are created)",
            args.path,
            args.path.trim()
        )));
    }
    let path = resolve_path(&ctx.root, &args.path);
    let before = current_text(&path, &ctx.files, held)?;
    // An empty file holds nothing that could be lost, so it needs no read first.
    if before.as_deref().is_some_and(|text| !text.is_empty()) && !ctx.files.knows(&path.absolute) {
        return Err(ToolError::new(format!(
            "{} exists and you have not read it in this session; read it first (file_read) so you don't overwrite content you haven't seen, or use file_edit",
            path.display
        )));
    }
    let change = FileChange { path: path.clone(), before, after: args.content };
    Ok(Prepared { summary: path.display.clone(), paths: vec![path], change: Some(change), shown_as: None })
}

/// The change `prepare` built; `execute` applies exactly that.
pub(super) fn prepared_change(prepared: Prepared) -> Result<FileChange, ToolError> {
    prepared.change.ok_or_else(|| ToolError::new("internal error: the call was prepared without a change"))
}

/// Apply `change`: into the editor's buffer when an editor writes files, else to the disk, off
/// the async runtime (the write is fsynced, which can take a while).
pub(super) async fn apply(change: &FileChange, ctx: &ToolContext) -> Result<(), ToolError> {
    if let Some(editor) = ctx.editor.as_deref().filter(|e| e.writes_files()) {
        return apply_in_editor(change, editor, ctx).await;
    }
    let (owned, files) = (change.clone(), ctx.files.clone());
    tokio::task::spawn_blocking(move || owned.apply(&files))
        .await
        .map_err(|e| ToolError::new(format!("writing {} failed unexpectedly: {e}", change.path.display)))?
}

/// As [`FileChange::apply`] does on disk: only over the text the user saw in the preview, and
/// what was written counts as seen.
async fn apply_in_editor(change: &FileChange, editor: &dyn Editor, ctx: &ToolContext) -> Result<(), ToolError> {
    let shown = &change.path.display;
    let now = match editor_text(&change.path, ctx).await? {
        Some(text) => Some(text),
        None => match std::fs::read(&change.path.absolute) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::new(format!("cannot read {shown} before writing: {e}"))),
        },
    };
    if now != change.before {
        return Err(ToolError::new(format!(
            "{shown} changed in the editor while the change was waiting for approval; nothing was written. Read the file again and redo the change."
        )));
    }
    if let Some(parent) = change.path.absolute.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| ToolError::new(format!("cannot create folder {}: {e}", parent.display())))?;
    }
    editor
        .write_file(&change.path.absolute, &change.after)
        .await
        .map_err(|e| ToolError::new(format!("the editor did not write {shown}: {e}")))?;
    ctx.files.record(&change.path.absolute, change.after.as_bytes());
    Ok(())
}

/// Prepare a call to a file tool with the text of the file its `path` names as the editor holds
/// it (`then` is the tool's `prepare` with that text; arguments without a path are its to refuse).
pub(super) fn prepare_held<'a>(
    args: &'a serde_json::Value,
    ctx: &'a ToolContext,
    then: fn(&serde_json::Value, &ToolContext, Option<String>) -> Result<Prepared, ToolError>,
) -> BoxFuture<'a, Result<Prepared, ToolError>> {
    async move {
        let held = match args.get("path").and_then(serde_json::Value::as_str) {
            Some(path) => editor_text(&resolve_path(&ctx.root, path), ctx).await?,
            None => None,
        };
        then(args, ctx, held)
    }
    .boxed()
}

/// The text of an existing file as the editor holds it (unsaved changes included), when an
/// editor reads files; `None` when it does not, or the file is not a regular file on disk
/// (missing files and folders are for [`current_text`] to tell).
pub(super) async fn editor_text(path: &ProjectPath, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
    let Some(editor) = ctx.editor.as_deref().filter(|e| e.reads_files()) else { return Ok(None) };
    if !std::fs::metadata(&path.absolute).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    editor
        .read_file(&path.absolute)
        .await
        .map(Some)
        .map_err(|e| ToolError::new(format!("cannot read {} from the editor: {e}", path.display)))
}

/// The current text of a file about to be changed, `None` when it does not exist; `held` is
/// its text as the editor holds it, read instead of the disk. Refuses folders, special files,
/// binary and non-UTF-8 files, and files that changed since the agent last read or wrote them.
pub(super) fn current_text(
    path: &ProjectPath,
    files: &FileTracker,
    held: Option<String>,
) -> Result<Option<String>, ToolError> {
    let shown = &path.display;
    match std::fs::metadata(&path.absolute) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::new(format!("{shown} is a directory; give the path of a file inside it")));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::new(format!("{shown} is not a regular file (a device, socket or pipe)")));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ToolError::new(format!("cannot read {shown}: {e}"))),
    }
    let place = if held.is_some() { "in the editor" } else { "on disk" };
    let bytes = match held {
        Some(text) => text.into_bytes(),
        None => std::fs::read(&path.absolute).map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))?,
    };
    if looks_binary(&bytes) {
        return Err(ToolError::new(format!(
            "{shown} is a binary file; file_write and file_edit change text files only"
        )));
    }
    if files.changed_since_seen(&path.absolute, &bytes) == Some(true) {
        return Err(ToolError::new(format!("{shown} changed {place} since you last read it; read it again first")));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| {
        ToolError::new(format!(
            "{shown} is not valid UTF-8 text; file_write and file_edit would corrupt its encoding, so they do not change it"
        ))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::file_read::FileRead;
    use crate::tools::test_support::{project, run};

    #[tokio::test]
    async fn write_creates_a_new_file_with_parents_and_a_diff() {
        let (_d, ctx) = project();
        let out =
            run(&FileWrite, &ctx, json!({"path": "src/new.rs", "content": "fn a() {}\nfn b() {}\n"})).await.unwrap();
        assert_eq!(out.content, "Created src/new.rs (2 lines)");
        assert!(!out.is_error);
        assert!(out.diff.as_deref().unwrap().contains("+fn b() {}"));
        assert_eq!(std::fs::read_to_string(ctx.root.join("src/new.rs")).unwrap(), "fn a() {}\nfn b() {}\n");
        assert!(ctx.files.knows(&ctx.root.join("src/new.rs")), "a written file counts as seen");
    }

    #[tokio::test]
    async fn prepare_previews_without_writing() {
        let (_d, ctx) = project();
        let prepared = FileWrite.prepare(&json!({"path": "a.txt", "content": "hi\n"}), &ctx).unwrap();
        assert_eq!(prepared.summary, "a.txt");
        assert_eq!(prepared.paths[0].absolute, ctx.root.join("a.txt"));
        let change = prepared.change.unwrap();
        assert_eq!((change.before, change.after.as_str()), (None, "hi\n"));
        assert!(!ctx.root.join("a.txt").exists());
    }

    #[tokio::test]
    async fn write_refuses_unread_existing_file() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("lib.rs"), "old\n").unwrap();
        let err = run(&FileWrite, &ctx, json!({"path": "lib.rs", "content": "new\n"})).await.unwrap_err();
        assert!(err.0.starts_with("lib.rs exists and you have not read it in this session"), "{err}");
        assert_eq!(std::fs::read_to_string(ctx.root.join("lib.rs")).unwrap(), "old\n");
    }

    #[tokio::test]
    async fn write_replaces_a_read_file_and_reports_line_stats() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("lib.rs"), "a\nb\nc\n").unwrap();
        run(&FileRead, &ctx, json!({"path": "lib.rs"})).await.unwrap();
        let out = run(&FileWrite, &ctx, json!({"path": "lib.rs", "content": "a\nB\nc\nd\ne\n"})).await.unwrap();
        assert_eq!(out.content, "Wrote lib.rs: +3 −1 lines");
        assert!(out.diff.as_deref().unwrap().starts_with("--- a/lib.rs\n+++ b/lib.rs\n"));
        let again = run(&FileWrite, &ctx, json!({"path": "lib.rs", "content": "z\n"})).await.unwrap();
        assert_eq!(again.content, "Wrote lib.rs: +1 −5 lines", "its own write counts as seen");
    }

    #[tokio::test]
    async fn write_refuses_a_file_changed_since_it_was_read() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("lib.rs"), "mine\n").unwrap();
        run(&FileRead, &ctx, json!({"path": "lib.rs"})).await.unwrap();
        std::fs::write(ctx.root.join("lib.rs"), "someone else's\n").unwrap();
        let err = run(&FileWrite, &ctx, json!({"path": "lib.rs", "content": "x\n"})).await.unwrap_err();
        assert_eq!(err.0, "lib.rs changed on disk since you last read it; read it again first");
    }

    #[tokio::test]
    async fn write_refuses_directories_binary_and_non_utf8_files() {
        let (_d, ctx) = project();
        std::fs::create_dir(ctx.root.join("src")).unwrap();
        let err = run(&FileWrite, &ctx, json!({"path": "src", "content": "x"})).await.unwrap_err();
        assert!(err.0.contains("is a directory"), "{err}");
        std::fs::write(ctx.root.join("img.png"), b"\x89PNG\0\0").unwrap();
        ctx.files.record(&ctx.root.join("img.png"), b"\x89PNG\0\0");
        let err = run(&FileWrite, &ctx, json!({"path": "img.png", "content": "x"})).await.unwrap_err();
        assert!(err.0.contains("binary"), "{err}");
        std::fs::write(ctx.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
        ctx.files.record(&ctx.root.join("latin1.txt"), b"caf\xe9\n");
        let err = run(&FileWrite, &ctx, json!({"path": "latin1.txt", "content": "x"})).await.unwrap_err();
        assert!(err.0.contains("not valid UTF-8"), "{err}");
    }

    #[tokio::test]
    async fn a_path_ending_in_a_slash_is_refused_and_nothing_is_created() {
        let (_d, ctx) = project();
        for path in ["newdir/", "a/b/", ""] {
            let err = run(&FileWrite, &ctx, json!({"path": path, "content": "x\n"})).await.unwrap_err();
            assert!(err.0.contains("names a folder, not a file"), "{path}: {err}");
        }
        assert!(!ctx.root.join("newdir").exists() && !ctx.root.join("a").exists());
    }

    #[tokio::test]
    async fn write_may_fill_an_unread_empty_file() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("empty.txt"), "").unwrap();
        let out = run(&FileWrite, &ctx, json!({"path": "empty.txt", "content": "x\n"})).await.unwrap();
        assert_eq!(out.content, "Wrote empty.txt: +1 −0 lines");
    }

    #[tokio::test]
    async fn write_does_not_clobber_a_change_made_while_awaiting_approval() {
        let (_d, ctx) = project();
        let args = json!({"path": "a.txt", "content": "mine\n"});
        let prepared = FileWrite.prepare(&args, &ctx).unwrap();
        std::fs::write(ctx.root.join("a.txt"), "theirs\n").unwrap();
        let err = FileWrite.execute(&args, prepared, &ctx).await.unwrap_err();
        assert!(err.0.contains("changed on disk while the change was waiting for approval"), "{err}");
        assert_eq!(std::fs::read_to_string(ctx.root.join("a.txt")).unwrap(), "theirs\n");
    }
}
