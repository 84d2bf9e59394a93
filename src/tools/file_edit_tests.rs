use serde_json::json;

use super::*;
use crate::tools::file_read::FileRead;
use crate::tools::test_support::{project, run};

fn file(ctx: &ToolContext, name: &str, content: &str) {
    std::fs::write(ctx.root.join(name), content).unwrap();
}

fn on_disk(ctx: &ToolContext, name: &str) -> String {
    std::fs::read_to_string(ctx.root.join(name)).unwrap()
}

async fn edit(ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    run(&FileEdit, ctx, args).await
}

async fn edit_err(ctx: &ToolContext, path: &str, old: &str, new: &str) -> String {
    edit(ctx, json!({"path": path, "old_string": old, "new_string": new})).await.unwrap_err().0
}

#[tokio::test]
async fn edit_replaces_the_unique_occurrence_and_returns_a_diff() {
    let (_d, ctx) = project();
    file(&ctx, "lib.rs", "fn a() {\n    1\n}\n");
    let out =
        edit(&ctx, json!({"path": "lib.rs", "old_string": "    1\n", "new_string": "    2\n    3\n"})).await.unwrap();
    assert_eq!(out.content, "Edited lib.rs: +2 −1 lines");
    assert!(out.diff.as_deref().unwrap().contains("-    1\n+    2\n+    3\n"));
    assert_eq!(on_disk(&ctx, "lib.rs"), "fn a() {\n    2\n    3\n}\n");
    assert!(ctx.files.knows(&ctx.root.join("lib.rs")), "the edited content counts as seen");
}

#[tokio::test]
async fn prepare_previews_the_edit_without_writing() {
    let (_d, ctx) = project();
    file(&ctx, "a.txt", "one two\n");
    let prepared = FileEdit.prepare(&json!({"path": "a.txt", "old_string": "two", "new_string": "2"}), &ctx).unwrap();
    let change = prepared.change.unwrap();
    assert_eq!((change.before.as_deref(), change.after.as_str()), (Some("one two\n"), "one 2\n"));
    assert_eq!(on_disk(&ctx, "a.txt"), "one two\n");
}

#[tokio::test]
async fn edit_of_ambiguous_string_lists_line_numbers() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "x = 1;\ny = 2;\nx = 1;\n\nx = 1;\n");
    let err = edit_err(&ctx, "a.rs", "x = 1;", "x = 3;").await;
    assert_eq!(
        err,
        "old_string occurs 3 times in a.rs (lines 1, 3, 5); include more surrounding lines to make it unique, or set replace_all: true"
    );
    let many: String = (0..7).map(|_| "dup\n").collect();
    file(&ctx, "b.rs", &many);
    let err = edit_err(&ctx, "b.rs", "dup", "one").await;
    assert!(err.contains("occurs 7 times in b.rs (lines 1, 2, 3, 4, 5, …)"), "{err}");
}

#[tokio::test]
async fn edit_with_replace_all_counts_replacements() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "let foo = foo + foo;\n");
    let args = json!({"path": "a.rs", "old_string": "foo", "new_string": "bar", "replace_all": true});
    let out = edit(&ctx, args).await.unwrap();
    assert_eq!(out.content, "Edited a.rs: +1 −1 lines (3 replacements)");
    assert_eq!(on_disk(&ctx, "a.rs"), "let bar = bar + bar;\n");
}

#[tokio::test]
async fn edit_detects_file_changed_since_read() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "old\n");
    let args = json!({"path": "a.rs"});
    run(&FileRead, &ctx, args).await.unwrap();
    file(&ctx, "a.rs", "old\nand new\n");
    let err = edit_err(&ctx, "a.rs", "old", "older").await;
    assert_eq!(err, "a.rs changed on disk since you last read it; read it again first");
}

#[tokio::test]
async fn crlf_file_edits_keep_crlf() {
    let (_d, ctx) = project();
    file(&ctx, "dos.txt", "a\r\nb\r\nc\r\n");
    edit(&ctx, json!({"path": "dos.txt", "old_string": "a\nb", "new_string": "x\ny\nz"})).await.unwrap();
    assert_eq!(on_disk(&ctx, "dos.txt"), "x\r\ny\r\nz\r\nc\r\n");
    edit(&ctx, json!({"path": "dos.txt", "old_string": "c", "new_string": "c\nd"})).await.unwrap();
    assert_eq!(on_disk(&ctx, "dos.txt"), "x\r\ny\r\nz\r\nc\r\nd\r\n", "new lines get the file's endings too");
}

#[tokio::test]
async fn lf_file_edits_keep_lf() {
    let (_d, ctx) = project();
    file(&ctx, "unix.txt", "a\nb\n");
    edit(&ctx, json!({"path": "unix.txt", "old_string": "a\n", "new_string": "a\nz\n"})).await.unwrap();
    assert_eq!(on_disk(&ctx, "unix.txt"), "a\nz\nb\n");
}

#[tokio::test]
async fn edit_points_at_a_match_differing_only_in_whitespace() {
    let (_d, ctx) = project();
    file(&ctx, "a.py", "def f():\n\n    if x:\n        return 1\n");
    let err = edit_err(&ctx, "a.py", "if x:\n    return 1", "if y:\n    return 2").await;
    assert!(err.contains("differs only in whitespace/indentation starts at line 3"), "{err}");
}

#[tokio::test]
async fn edit_spots_copied_line_number_prefixes() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "fn a() {\n    1\n}\n");
    let err = edit_err(&ctx, "a.rs", "     1\tfn a() {\n     2\t    1", "fn b() {").await;
    assert!(err.contains("line numbers copied from file_read output"), "{err}");
}

#[tokio::test]
async fn edit_notices_an_edit_already_made() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "one\nlet total = 2;\n");
    let err = edit_err(&ctx, "a.rs", "let sum = 1;", "let total = 2;").await;
    assert!(err.contains("new_string is already there (line 2)"), "{err}");
}

#[tokio::test]
async fn a_common_or_short_new_string_found_in_the_file_is_not_called_an_edit_already_made() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "fn a() {\n}\nfn b() {\n}\nlet x = ok;\nreturn total;\nreturn total;\n");
    for new in ["}", "ok", "return total;"] {
        let err = edit_err(&ctx, "a.rs", "let sum = 1;", new).await;
        assert_eq!(err, "old_string not found in a.rs; read the file again to get the current text", "{new}");
    }
}

#[tokio::test]
async fn edit_of_text_not_in_the_file_says_to_read_again() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "one\n");
    let err = edit_err(&ctx, "a.rs", "three", "four").await;
    assert_eq!(err, "old_string not found in a.rs; read the file again to get the current text");
}

#[tokio::test]
async fn edit_rejects_empty_or_unchanged_strings() {
    let (_d, ctx) = project();
    file(&ctx, "a.rs", "one\n");
    assert!(edit_err(&ctx, "a.rs", "", "x").await.contains("old_string is empty"));
    assert!(edit_err(&ctx, "a.rs", "one", "one").await.contains("identical"));
}

#[tokio::test]
async fn edit_of_missing_file_suggests_file_write() {
    let (_d, ctx) = project();
    let err = edit_err(&ctx, "new.rs", "a", "b").await;
    assert!(err.contains("new.rs does not exist") && err.contains("file_write"), "{err}");
}

#[tokio::test]
async fn edit_refuses_binary_and_non_utf8_files() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("a.bin"), b"ab\0cd").unwrap();
    assert!(edit_err(&ctx, "a.bin", "ab", "x").await.contains("binary"));
    std::fs::write(ctx.root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    assert!(edit_err(&ctx, "latin1.txt", "caf", "x").await.contains("not valid UTF-8"));
}

#[test]
fn whitespace_match_reports_the_line_holding_the_first_character() {
    assert_eq!(whitespace_insensitive_match("a\n\n\n  b c\n", "bc"), Some(4));
    assert_eq!(whitespace_insensitive_match("abc\n", "x"), None);
    assert_eq!(whitespace_insensitive_match("abc\n", " \n "), None);
}
