//! A tool call as ACP shows it: its kind, title, locations and, once it ran, its status and
//! content (the change as diffs, else the result's text). Shared by the live session and the
//! replay of a stored one, so both show a call the same way.

use std::path::Path;

use crate::conversation::tool_names::{
    BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, TASK, TODO, TOOL_SEARCH, WEB_FETCH,
};
use agent_client_protocol::v1::schema::{
    ContentBlock, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdateFields, ToolKind,
};

/// What the client's icon and grouping say a call does.
pub(super) fn kind(tool: &str) -> ToolKind {
    match tool {
        FILE_READ => ToolKind::Read,
        FILE_WRITE | FILE_EDIT => ToolKind::Edit,
        BASH => ToolKind::Execute,
        GREP | GLOB | TOOL_SEARCH => ToolKind::Search,
        WEB_FETCH => ToolKind::Fetch,
        TODO | TASK => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The call's one line: `file_edit src/lib.rs`, `$ cargo test` (a command says itself).
pub(super) fn title(tool: &str, summary: &str) -> String {
    if summary.is_empty() {
        tool.to_string()
    } else if tool == BASH {
        summary.to_string()
    } else {
        format!("{tool} {summary}")
    }
}

/// The files a call is about, for "follow the agent": the `path` it names (at the first line
/// it read or changed).
pub(super) fn locations(arguments: &str, root: &Path, diff: Option<&str>) -> Vec<ToolCallLocation> {
    let Ok(serde_json::Value::Object(args)) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return Vec::new();
    };
    let Some(path) = args.get("path").and_then(|p| p.as_str()).filter(|p| !p.is_empty()) else { return Vec::new() };
    let line = diff
        .and_then(super::diff::first_line)
        .or_else(|| args.get("offset").and_then(|o| o.as_u64()).and_then(|o| u32::try_from(o).ok()));
    vec![ToolCallLocation::new(root.join(path)).line(line)]
}

/// The arguments as the client's raw input: the JSON the model wrote, or its text when it
/// does not parse.
pub(super) fn raw_input(arguments: &str) -> serde_json::Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::Value::String(arguments.to_string()))
}

/// A finished call: failed or completed, with its change as diffs (or the result's text), and
/// the result as raw output.
pub(super) fn finished(content: &str, is_error: bool, diff: Option<&str>, root: &Path) -> ToolCallUpdateFields {
    let status = if is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let diffs = diff.map(|d| super::diff::diffs(d, root)).unwrap_or_default();
    let shown: Vec<ToolCallContent> = if diffs.is_empty() || is_error {
        vec![ToolCallContent::from(ContentBlock::from(fenced(content)))]
    } else {
        diffs.into_iter().map(ToolCallContent::from).collect()
    };
    ToolCallUpdateFields::new()
        .status(status)
        .content(shown)
        .raw_output(serde_json::json!({ "content": content, "is_error": is_error }))
}

/// Text shown as it is (a result holds code, paths and numbered lines, not markdown).
pub(super) fn fenced(text: &str) -> String {
    let fence = if text.contains("```") { "````" } else { "```" };
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_names_its_file_and_line() {
        let root = Path::new("/p");
        let at = locations(r#"{"path": "src/a.rs", "offset": 40}"#, root, None);
        assert_eq!(at, [ToolCallLocation::new("/p/src/a.rs").line(40)]);
        let diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -7,3 +7,3 @@\n a\n-b\n+c\n d\n";
        assert_eq!(
            locations(r#"{"path": "src/a.rs"}"#, root, Some(diff)),
            [ToolCallLocation::new("/p/src/a.rs").line(7)]
        );
        assert!(locations(r#"{"command": "ls"}"#, root, None).is_empty());
        assert!(locations("{not json", root, None).is_empty());
        assert_eq!(title("bash", "$ ls"), "$ ls");
        assert_eq!(title("file_edit", "src/a.rs"), "file_edit src/a.rs");
        assert_eq!(kind("file_edit"), ToolKind::Edit);
    }

    #[test]
    fn a_finished_edit_shows_its_diff_and_a_failure_its_text() {
        let root = Path::new("/p");
        let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n";
        let done = finished("Edited a.txt: +1 −1 lines", false, Some(diff), root);
        assert_eq!(done.status, Some(ToolCallStatus::Completed));
        let Some([ToolCallContent::Diff(d)]) = done.content.as_deref() else { panic!("{done:?}") };
        assert_eq!((d.old_text.as_deref(), d.new_text.as_str()), (Some("old\n"), "new\n"));
        let failed = finished("old_string not found", true, None, root);
        assert_eq!(failed.status, Some(ToolCallStatus::Failed));
        let Some([ToolCallContent::Content(c)]) = failed.content.as_deref() else { panic!("{failed:?}") };
        assert_eq!(c.content, ContentBlock::from("```\nold_string not found\n```"));
    }
}
