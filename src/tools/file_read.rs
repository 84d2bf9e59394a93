//! `file_read`: show a text file, or a range of its lines, numbered like `cat -n`, and remember
//! what was read so later writes can tell when the file changed underneath. Also owns the small
//! text helpers the other file tools share (binary sniffing, long-line cutting).

use std::borrow::Cow;
use std::path::Path;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, ProjectPath, Tool, ToolContext, ToolError, ToolOutput, parse_args, resolve_path};

/// Lines longer than this are cut in the output.
const MAX_LINE_CHARS: usize = 2_000;
/// How much of a file is sniffed for a NUL byte to call it binary (what git and ripgrep do).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

pub struct FileRead;

#[derive(Deserialize)]
struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

const SHAPE: &str = r#"{"path": "src/main.rs", "offset"?: 1-based first line, "limit"?: number of lines}"#;

impl Tool for FileRead {
    fn name(&self) -> &'static str {
        "file_read"
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/file_read.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the project root or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show. Default 2000."}
            },
            "required": ["path"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        if args.limit == Some(0) {
            return Err(ToolError::new(format!(
                "limit must be at least 1; leave it out to read up to {} lines",
                ctx.config.read_default_lines
            )));
        }
        let path = resolve_path(&ctx.root, &args.path);
        Ok(Prepared { summary: path.display.clone(), paths: vec![path], change: None })
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: Args = parse_args(self.name(), args, SHAPE)?;
            let path = prepared_path(&prepared)?;
            let window = Window {
                first: args.offset.unwrap_or(1).max(1),
                limit: args.limit.unwrap_or(ctx.config.read_default_lines).max(1),
            };
            let files = ctx.files.clone();
            let content = tokio::task::spawn_blocking(move || {
                let bytes = read_regular_file(&path)?;
                let text = render(&path.display, &bytes, window)?;
                files.record(&path.absolute, &bytes);
                Ok::<_, ToolError>(text)
            })
            .await
            .map_err(|e| ToolError::new(format!("file_read failed unexpectedly: {e}")))??;
            Ok(ToolOutput::text(content))
        }
        .boxed()
    }
}

/// The one path `prepare` resolved; `execute` uses it so what runs is what the policy checked.
pub(super) fn prepared_path(prepared: &Prepared) -> Result<ProjectPath, ToolError> {
    prepared
        .paths
        .first()
        .cloned()
        .ok_or_else(|| ToolError::new("internal error: the call was prepared without a path"))
}

#[derive(Clone, Copy)]
struct Window {
    first: usize,
    limit: usize,
}

fn read_regular_file(path: &ProjectPath) -> Result<Vec<u8>, ToolError> {
    let shown = &path.display;
    let meta = match std::fs::metadata(&path.absolute) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path)),
        Err(e) => return Err(ToolError::new(format!("cannot read {shown}: {e}"))),
    };
    if meta.is_dir() {
        return Err(ToolError::new(format!(
            "{shown} is a directory, not a file; list its files with glob (pattern \"*\", path \"{shown}\")"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!(
            "{shown} is not a regular file (a device, socket or pipe); file_read reads regular files only"
        )));
    }
    std::fs::read(&path.absolute).map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))
}

/// A missing file, with the neighbours the model probably meant.
fn not_found(path: &ProjectPath) -> ToolError {
    let shown = &path.display;
    let Some(dir) = path.absolute.parent() else {
        return ToolError::new(format!("{shown} does not exist"));
    };
    if !dir.is_dir() {
        return ToolError::new(format!(
            "{shown} does not exist (nor does its folder); find the file with glob, e.g. pattern \"**/{}\"",
            path.absolute.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ));
    }
    let similar = similar_names(dir, &path.absolute);
    if similar.is_empty() {
        let name = path.absolute.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        return ToolError::new(format!("{shown} does not exist; find the file with glob, e.g. pattern \"**/{name}\""));
    }
    let display_dir = Path::new(shown.as_str()).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let listed: Vec<String> = similar
        .iter()
        .map(|name| if display_dir.is_empty() { name.clone() } else { format!("{display_dir}/{name}") })
        .collect();
    ToolError::new(format!("{shown} does not exist. Did you mean: {}?", listed.join(", ")))
}

/// Entries of `dir` whose name matches the missing file's ignoring case, or share its stem.
fn similar_names(dir: &Path, missing: &Path) -> Vec<String> {
    let Some(name) = missing.file_name().map(|n| n.to_string_lossy().to_lowercase()) else { return Vec::new() };
    let stem = missing.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|candidate| {
            let lower = candidate.to_lowercase();
            let candidate_stem = Path::new(&lower).file_stem().map(|s| s.to_string_lossy().into_owned());
            lower == name || (!stem.is_empty() && candidate_stem.as_deref() == Some(stem.as_str()))
        })
        .collect();
    found.sort();
    found.truncate(5);
    found
}

/// Whether the start of a file holds a NUL byte, the usual sign of a binary file.
pub(super) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// `line`, cut to `max` characters with a marker saying how long it was.
pub(super) fn cut_line(line: &str, max: usize) -> Cow<'_, str> {
    match line.char_indices().nth(max) {
        None => Cow::Borrowed(line),
        Some((end, _)) => Cow::Owned(format!("{}… [line truncated, {} chars]", &line[..end], line.chars().count())),
    }
}

/// The numbered listing of the lines in `window`, with notes for what is not shown.
fn render(shown: &str, bytes: &[u8], window: Window) -> Result<String, ToolError> {
    if bytes.is_empty() {
        return Ok(format!("{shown} is empty (0 bytes)"));
    }
    if looks_binary(bytes) {
        return Err(ToolError::new(format!(
            "{shown} is a binary file ({} bytes); file_read shows text only",
            bytes.len()
        )));
    }
    // Borrowed for valid UTF-8 (no copy); only a non-UTF-8 file is copied to repair it.
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    if matches!(text, Cow::Owned(_)) {
        out.push_str("[not valid UTF-8: invalid bytes shown as \u{FFFD}]\n");
    }
    let last_wanted = window.first.saturating_add(window.limit - 1);
    let mut total = 0;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        total = number;
        if number < window.first || number > last_wanted {
            continue;
        }
        out.push_str(&format!("{number:>6}\t{}\n", cut_line(line, MAX_LINE_CHARS)));
    }
    if window.first > total {
        return Err(ToolError::new(format!(
            "offset {} is past the end of {shown}, which has {total} line{}; use an offset from 1 to {total}",
            window.first,
            if total == 1 { "" } else { "s" }
        )));
    }
    let last_shown = last_wanted.min(total);
    if last_shown < total {
        out.push_str(&format!(
            "[showing lines {}–{last_shown} of {total}; continue with offset={}]\n",
            window.first,
            last_shown + 1
        ));
    } else if window.first > 1 {
        out.push_str(&format!("[showing lines {}–{total} of {total}; end of file]\n", window.first));
    }
    // The listing ends without a newline, like every other tool result.
    out.truncate(out.trim_end_matches('\n').len());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::test_support::{project, run};

    async fn read(ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        run(&FileRead, ctx, args).await
    }

    #[tokio::test]
    async fn read_numbers_lines_like_cat_n_and_records_the_file() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("main.rs"), "fn main() {\n}\n").unwrap();
        let out = read(&ctx, json!({"path": "main.rs"})).await.unwrap();
        assert_eq!(out.content, "     1\tfn main() {\n     2\t}");
        assert!(!out.is_error);
        assert_eq!(ctx.files.changed_since_seen(&ctx.root.join("main.rs"), b"fn main() {\n}\n"), Some(false));
    }

    #[tokio::test]
    async fn read_window_says_where_to_continue() {
        let (_d, ctx) = project();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(ctx.root.join("a.txt"), text).unwrap();
        let out = read(&ctx, json!({"path": "a.txt", "offset": 3, "limit": 2})).await.unwrap();
        assert_eq!(out.content, "     3\tline 3\n     4\tline 4\n[showing lines 3–4 of 10; continue with offset=5]");
        let tail = read(&ctx, json!({"path": "a.txt", "offset": 9})).await.unwrap();
        assert_eq!(tail.content, "     9\tline 9\n    10\tline 10\n[showing lines 9–10 of 10; end of file]");
    }

    #[tokio::test]
    async fn read_uses_the_configured_default_limit() {
        let (_d, mut ctx) = project();
        ctx.config.read_default_lines = 3;
        std::fs::write(ctx.root.join("a.txt"), "1\n2\n3\n4\n5").unwrap();
        let out = read(&ctx, json!({"path": "a.txt"})).await.unwrap();
        assert!(
            out.content.ends_with("     3\t3\n[showing lines 1–3 of 5; continue with offset=4]"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn read_offset_past_the_end_names_the_line_count() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("a.txt"), "one\ntwo\nthree").unwrap();
        let err = read(&ctx, json!({"path": "a.txt", "offset": 7})).await.unwrap_err();
        assert!(err.0.contains("has 3 lines"), "{err}");
    }

    #[tokio::test]
    async fn read_of_empty_file_says_it_is_empty() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("empty.txt"), "").unwrap();
        let out = read(&ctx, json!({"path": "empty.txt"})).await.unwrap();
        assert_eq!(out.content, "empty.txt is empty (0 bytes)");
    }

    #[tokio::test]
    async fn read_cuts_very_long_lines() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("min.js"), format!("{}\nshort\n", "é".repeat(5000))).unwrap();
        let out = read(&ctx, json!({"path": "min.js"})).await.unwrap();
        let first = out.content.lines().next().unwrap();
        assert!(first.ends_with("… [line truncated, 5000 chars]"), "{first}");
        assert_eq!(first.chars().filter(|&c| c == 'é').count(), MAX_LINE_CHARS);
        assert!(out.content.ends_with("     2\tshort"));
    }

    #[tokio::test]
    async fn read_strips_crlf_line_endings() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("dos.txt"), "a\r\nb\r\n").unwrap();
        let out = read(&ctx, json!({"path": "dos.txt"})).await.unwrap();
        assert_eq!(out.content, "     1\ta\n     2\tb");
    }

    #[tokio::test]
    async fn read_of_directory_suggests_glob() {
        let (_d, ctx) = project();
        std::fs::create_dir(ctx.root.join("src")).unwrap();
        let err = read(&ctx, json!({"path": "src"})).await.unwrap_err();
        assert!(err.0.contains("is a directory") && err.0.contains("glob"), "{err}");
    }

    #[tokio::test]
    async fn read_of_missing_file_suggests_similar_names() {
        let (_d, ctx) = project();
        std::fs::create_dir(ctx.root.join("src")).unwrap();
        std::fs::write(ctx.root.join("src/Main.rs"), "").unwrap();
        std::fs::write(ctx.root.join("src/lib.ts"), "").unwrap();
        std::fs::write(ctx.root.join("src/other.rs"), "").unwrap();
        let err = read(&ctx, json!({"path": "src/main.rs"})).await.unwrap_err();
        assert!(err.0.contains("src/main.rs does not exist. Did you mean: src/Main.rs?"), "{err}");
        let err = read(&ctx, json!({"path": "src/lib.rs"})).await.unwrap_err();
        assert!(err.0.contains("Did you mean: src/lib.ts?"), "{err}");
        let err = read(&ctx, json!({"path": "src/nothing.rs"})).await.unwrap_err();
        assert!(err.0.contains("does not exist") && err.0.contains("**/nothing.rs"), "{err}");
        assert!(!ctx.files.knows(&ctx.root.join("src/nothing.rs")));
    }

    #[tokio::test]
    async fn read_of_binary_file_is_an_error_result() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        let err = read(&ctx, json!({"path": "logo.png"})).await.unwrap_err();
        assert_eq!(err.0, "logo.png is a binary file (16 bytes); file_read shows text only");
        assert!(!ctx.files.knows(&ctx.root.join("logo.png")));
    }

    #[tokio::test]
    async fn read_of_non_utf8_file_says_so() {
        let (_d, ctx) = project();
        std::fs::write(ctx.root.join("latin1.txt"), b"caf\xe9\nok\n").unwrap();
        let out = read(&ctx, json!({"path": "latin1.txt"})).await.unwrap();
        assert_eq!(out.content, "[not valid UTF-8: invalid bytes shown as \u{FFFD}]\n     1\tcaf\u{FFFD}\n     2\tok");
        assert!(ctx.files.knows(&ctx.root.join("latin1.txt")));
    }

    #[tokio::test]
    async fn read_rejects_a_zero_limit_and_explains_bad_arguments() {
        let (_d, ctx) = project();
        let err = read(&ctx, json!({"path": "a", "limit": 0})).await.unwrap_err();
        assert!(err.0.contains("limit must be at least 1"), "{err}");
        let err = read(&ctx, json!({"file": "a"})).await.unwrap_err();
        assert!(err.0.starts_with("file_read: bad arguments") && err.0.contains("\"path\""), "{err}");
    }

    #[test]
    fn prepare_lists_the_resolved_path_for_the_policy() {
        let (_d, ctx) = project();
        let prepared = FileRead.prepare(&json!({"path": "../outside.txt", "junk": 1}), &ctx).unwrap();
        assert_eq!(prepared.paths.len(), 1);
        assert!(!prepared.paths[0].inside_project);
        assert_eq!(prepared.summary, prepared.paths[0].display);
    }
}
