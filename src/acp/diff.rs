//! A change as ACP shows it: a unified diff of cairn's (what a write or an edit did) made into
//! ACP diff content, one per hunk — the old and the new text of the lines the hunk covers.

use std::path::Path;

use agent_client_protocol::v1::schema::Diff;

/// The hunks of `unified` (as `FileChange::unified_diff` writes it) as ACP diffs of the file
/// under `root`. A created file's only hunk has no old text. Empty when `unified` names no file.
pub(super) fn diffs(unified: &str, root: &Path) -> Vec<Diff> {
    let mut lines = unified.lines();
    let (mut created, mut path) = (false, None);
    for line in lines.by_ref() {
        if let Some(old) = line.strip_prefix("--- ") {
            created = old.trim() == "/dev/null";
        } else if let Some(new) = line.strip_prefix("+++ ") {
            let new = new.trim();
            path = Some(root.join(new.strip_prefix("b/").unwrap_or(new)));
            break;
        }
    }
    let Some(path) = path else { return Vec::new() };
    let mut out = Vec::new();
    let mut hunk: Option<(String, String)> = None;
    let finish = |hunk: Option<(String, String)>, out: &mut Vec<Diff>| {
        if let Some((old, new)) = hunk {
            let diff = Diff::new(path.clone(), new);
            out.push(if created { diff } else { diff.old_text(old) });
        }
    };
    for line in lines {
        if line.starts_with("@@") {
            finish(hunk.take(), &mut out);
            hunk = Some((String::new(), String::new()));
            continue;
        }
        let Some((old, new)) = hunk.as_mut() else { continue };
        match line.split_at_checked(1) {
            Some((" ", text)) => {
                for side in [&mut *old, &mut *new] {
                    side.push_str(text);
                    side.push('\n');
                }
            }
            Some(("-", text)) => {
                old.push_str(text);
                old.push('\n');
            }
            Some(("+", text)) => {
                new.push_str(text);
                new.push('\n');
            }
            // `\ No newline at end of file`, or an empty context line some writers trim.
            _ if line.is_empty() => {
                old.push('\n');
                new.push('\n');
            }
            _ => {}
        }
    }
    finish(hunk, &mut out);
    out
}

/// The first line the change touches in the new file, for the call's location.
pub(super) fn first_line(unified: &str) -> Option<u32> {
    let header = unified.lines().find(|l| l.starts_with("@@"))?;
    let new = header.split_whitespace().find_map(|part| part.strip_prefix('+'))?;
    new.split(',').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(before: Option<&str>, after: &str) -> String {
        let old = if before.is_some() { "a/src/lib.rs" } else { "/dev/null" };
        similar::TextDiff::from_lines(before.unwrap_or(""), after)
            .unified_diff()
            .context_radius(3)
            .header(old, "b/src/lib.rs")
            .to_string()
    }

    #[test]
    fn an_edit_becomes_one_diff_per_hunk_with_its_context() {
        let before: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let after = before.replace("line 5\n", "line five\n").replace("line 25\n", "");
        let unified = change(Some(&before), &after);
        let got = diffs(&unified, Path::new("/p"));
        assert_eq!(got.len(), 2, "{unified}");
        assert_eq!(got[0].path, Path::new("/p/src/lib.rs"));
        assert_eq!(got[0].old_text.as_deref(), Some("line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n"));
        assert_eq!(got[0].new_text, "line 2\nline 3\nline 4\nline five\nline 6\nline 7\nline 8\n");
        assert_eq!(got[1].old_text.as_deref(), Some("line 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28\n"));
        assert_eq!(got[1].new_text, "line 22\nline 23\nline 24\nline 26\nline 27\nline 28\n");
        assert_eq!(first_line(&unified), Some(2));
    }

    #[test]
    fn a_created_file_has_no_old_text() {
        let got = diffs(&change(None, "fn a() {}\n"), Path::new("/p"));
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].old_text.as_deref(), got[0].new_text.as_str()), (None, "fn a() {}\n"));
        assert!(diffs("no diff here", Path::new("/p")).is_empty());
    }
}
