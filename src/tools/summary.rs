//! A call's one-line summary from its arguments alone, without preparing it: what a transcript
//! shows for a call it loads from the store, so a resumed session reads like the live one.
//! Each line is the one the tool's own `prepare` gives (a test holds them together).

use std::path::Path;

use serde_json::Value;

use super::resolve_path;
use crate::conversation::tool_names::{BASH, FILE_EDIT, FILE_READ, FILE_WRITE, GLOB, GREP, MEMORY_SAVE, MEMORY_SEARCH};

/// The summary `prepare` would give `tool` for `arguments`; `None` when the arguments do not
/// parse or the tool is not a built-in one.
pub fn summary_of(tool: &str, arguments: &str, root: &Path) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let path = |key: &str| resolve_path(root, text(key).unwrap_or("."));
    Some(match tool {
        FILE_READ | FILE_WRITE | FILE_EDIT => resolve_path(root, text("path")?).display,
        BASH => format!("$ {}", text("command")?),
        GREP => {
            let mut summary = format!("{} in {}", text("pattern")?, path("path").display);
            if let Some(glob) = text("glob") {
                summary.push_str(&format!(" ({glob})"));
            }
            summary
        }
        GLOB => {
            let base = path("path");
            let pattern = text("pattern")?;
            if base.display == "." { pattern.to_string() } else { format!("{pattern} in {}", base.display) }
        }
        MEMORY_SAVE => {
            let scope = if text("scope") == Some("global") { "global " } else { "" };
            format!("{scope}{}: {}", text("type")?, text("title")?.trim())
        }
        MEMORY_SEARCH => text("query")?.trim().to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::Registry;
    use crate::tools::test_support::project_with;

    #[test]
    fn every_builtin_tool_summarises_as_its_prepare_does() {
        let (_dir, ctx) = project_with(&[("src/lib.rs", "fn a() {}\n"), ("notes.txt", "hello\n")]);
        let calls = [
            ("file_read", json!({"path": "src/lib.rs"})),
            ("file_read", json!({"path": "/etc/hostname"})),
            ("file_write", json!({"path": "new/file.txt", "content": "x"})),
            ("file_edit", json!({"path": "notes.txt", "old_string": "hello", "new_string": "bye"})),
            ("bash", json!({"command": "cargo test --all\n  -- --nocapture"})),
            ("grep", json!({"pattern": "fn a", "path": "src", "glob": "*.rs"})),
            ("grep", json!({"pattern": "hello"})),
            ("glob", json!({"pattern": "*.rs"})),
            ("glob", json!({"pattern": "*.rs", "path": "src"})),
            ("memory_save", json!({"type": "decision", "title": " tabs ", "content": "use tabs", "scope": "global"})),
            ("memory_search", json!({"query": " tabs "})),
        ];
        let registry = Registry::builtin();
        for (tool, args) in calls {
            let prepared = registry.get(tool).unwrap().prepare(&args, &ctx).unwrap();
            assert_eq!(summary_of(tool, &args.to_string(), &ctx.root), Some(prepared.summary), "{tool} {args}");
        }
        assert_eq!(summary_of("bash", "{\"command\": ", &ctx.root), None);
        assert_eq!(summary_of("no_such_tool", "{}", &ctx.root), None);
    }
}
