//! `file_edit`: replace an exact piece of a file's text, and when the piece is not found, tell
//! the model why (whitespace, copied line numbers, an edit already made) so it can fix its call.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::file_write::{apply, current_text, prepare_held, prepared_change};
use super::{Access, FileChange, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args, resolve_path};
use crate::conversation::tool_names::FILE_EDIT;

/// Line numbers listed when `old_string` is ambiguous.
const LISTED_MATCHES: usize = 5;

pub struct FileEdit;

#[derive(Deserialize)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

const SHAPE: &str =
    r#"{"path": "src/lib.rs", "old_string": "exact current text", "new_string": "replacement", "replace_all"?: false}"#;

impl Tool for FileEdit {
    fn name(&self) -> &'static str {
        FILE_EDIT
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/file_edit.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative to the project root or absolute."},
                "old_string": {"type": "string", "description": "Exact text to replace, as it is in the file now (without file_read's line-number prefixes)."},
                "new_string": {"type": "string", "description": "Text to put in its place; must differ from old_string."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."}
            },
            "required": ["path", "old_string", "new_string"]
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
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: Args = parse_args(self.name(), args, SHAPE)?;
            let change = prepared_change(prepared)?;
            apply(&change, ctx).await?;
            let (added, removed) = change.line_stats();
            let mut content = format!("Edited {}: +{added} −{removed} lines", change.path.display);
            if args.replace_all.unwrap_or(false) {
                // Pure and already done once in `prepare`, so it cannot fail differently here.
                let before = change.before.as_deref().unwrap_or_default();
                if let Ok(edit) = plan(&change.path.display, before, &args) {
                    let n = edit.replacements;
                    content.push_str(&format!(" ({n} replacement{})", if n == 1 { "" } else { "s" }));
                }
            }
            Ok(ToolOutput { diff: Some(change.unified_diff()), ..ToolOutput::text(content) })
        }
        .boxed()
    }
}

/// `prepare`, with the file's text as the editor holds it when `held`.
fn prepare_with(args: &serde_json::Value, ctx: &ToolContext, held: Option<String>) -> Result<Prepared, ToolError> {
    let args: Args = parse_args(FILE_EDIT, args, SHAPE)?;
    let path = resolve_path(&ctx.root, &args.path);
    let Some(before) = current_text(&path, &ctx.files, held)? else {
        return Err(ToolError::new(format!(
            "{} does not exist; file_edit changes existing files. To create a new file use file_write",
            path.display
        )));
    };
    let edit = plan(&path.display, &before, &args)?;
    let change = FileChange { path: path.clone(), before: Some(before), after: edit.after };
    Ok(Prepared { summary: path.display.clone(), paths: vec![path], change: Some(change), shown_as: None })
}

struct Edit {
    after: String,
    replacements: usize,
}

/// Work out the edited text, or why the edit cannot be made.
fn plan(shown: &str, content: &str, args: &Args) -> Result<Edit, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::new(
            "old_string is empty; give the exact text to replace. To insert, include a neighbouring line in old_string and repeat it in new_string; to create a file, use file_write",
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::new("old_string and new_string are identical, so nothing would change"));
    }
    let crlf = uses_crlf(content);
    let mut old = Cow::Borrowed(args.old_string.as_str());
    let mut count = content.matches(old.as_ref()).count();
    if count == 0 && crlf && args.old_string.contains('\n') {
        // The model writes `\n` (file_read shows no `\r`); match the file's own line endings.
        old = Cow::Owned(to_crlf(&args.old_string));
        count = content.matches(old.as_ref()).count();
    }
    if count == 0 {
        return Err(not_found(shown, content, &args.old_string, &args.new_string));
    }
    let replace_all = args.replace_all.unwrap_or(false);
    if count > 1 && !replace_all {
        let lines: Vec<String> = content
            .match_indices(old.as_ref())
            .take(LISTED_MATCHES)
            .map(|(i, _)| line_of(content, i).to_string())
            .collect();
        let more = if count > LISTED_MATCHES { ", …" } else { "" };
        return Err(ToolError::new(format!(
            "old_string occurs {count} times in {shown} (lines {}{more}); include more surrounding lines to make it unique, or set replace_all: true",
            lines.join(", ")
        )));
    }
    let new = if crlf { Cow::Owned(to_crlf(&args.new_string)) } else { Cow::Borrowed(args.new_string.as_str()) };
    let after = if replace_all { content.replace(old.as_ref(), &new) } else { content.replacen(old.as_ref(), &new, 1) };
    if after == content {
        return Err(ToolError::new("old_string and new_string differ only in line endings, so nothing would change"));
    }
    Ok(Edit { after, replacements: count })
}

/// Whether most of the file's line breaks are `\r\n`.
fn uses_crlf(content: &str) -> bool {
    let crlf = content.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= content.matches('\n').count()
}

fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// 1-based line number of byte `index`.
fn line_of(content: &str, index: usize) -> usize {
    content[..index].matches('\n').count() + 1
}

/// Letters and digits a new_string needs before finding it in the file is evidence that the
/// edit was already made.
const MIN_DISTINCTIVE_CHARS: usize = 6;

/// Why `old` was not found, as precisely as can be told.
fn not_found(shown: &str, content: &str, old: &str, new: &str) -> ToolError {
    if has_line_number_prefixes(old) {
        return ToolError::new(format!(
            "old_string was not found in {shown}. Its lines start with line numbers copied from file_read output (like `    12\\t`), which are not part of the file; remove them, keeping only the text after the tab"
        ));
    }
    if let Some(line) = whitespace_insensitive_match(content, old) {
        return ToolError::new(format!(
            "old_string was not found exactly in {shown}, but a match that differs only in whitespace/indentation starts at line {line}; copy the exact text from file_read output (without the line-number prefix)"
        ));
    }
    // Only a distinctive new_string found exactly once says the edit was made: a `}` or a
    // common line found somewhere proves nothing.
    let distinctive = new.trim().chars().filter(|c| c.is_alphanumeric()).count() >= MIN_DISTINCTIVE_CHARS;
    if distinctive
        && content.matches(new).count() == 1
        && let Some(index) = content.find(new)
    {
        return ToolError::new(format!(
            "old_string was not found in {shown}, but new_string is already there (line {}); the edit may already have been made. Read the file to check",
            line_of(content, index)
        ));
    }
    ToolError::new(format!("old_string not found in {shown}; read the file again to get the current text"))
}

/// Whether every non-blank line of `text` starts like a `file_read` line: spaces, digits, tab.
fn has_line_number_prefixes(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some()
        && lines.all(|line| {
            let rest = line.trim_start_matches(' ');
            let after_digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            after_digits.len() < rest.len() && after_digits.starts_with('\t')
        })
}

/// The line where `needle` starts if whitespace is ignored altogether, in both texts.
fn whitespace_insensitive_match(content: &str, needle: &str) -> Option<usize> {
    let squashed_needle: String = needle.chars().filter(|c| !c.is_whitespace()).collect();
    if squashed_needle.is_empty() {
        return None;
    }
    let mut squashed = String::with_capacity(content.len());
    // Offset in `squashed` where each line starts.
    let mut line_starts = Vec::new();
    for line in content.split('\n') {
        line_starts.push(squashed.len());
        squashed.extend(line.chars().filter(|c| !c.is_whitespace()));
    }
    let offset = squashed.find(&squashed_needle)?;
    // The last line starting at or before the offset holds it (blank lines share offsets).
    Some(line_starts.partition_point(|&start| start <= offset))
}

#[cfg(test)]
#[path = "file_edit_tests.rs"]
mod tests;
