//! Ctrl+G: the prompt written in the user's own editor (`$VISUAL`, then `$EDITOR`, then `vi`),
//! through a private temporary file that is deleted afterwards.

use std::io::Write;
use std::path::Path;

/// The editor command as the user set it; it may carry arguments (`code --wait`).
pub fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Open `text` in `editor` and return what the user saved. An editor that fails (or exits
/// non-zero) leaves the prompt as it was, with a message that says why.
pub async fn edit(editor: &str, text: &str) -> Result<String, String> {
    let mut file = tempfile::Builder::new()
        .prefix("cairn-prompt-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| format!("could not create a file for the editor: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("could not write the prompt for the editor: {e}"))?;
    let status = command(editor, file.path())
        .status()
        .await
        .map_err(|e| format!("could not start the editor `{editor}`: {e}; set $VISUAL or $EDITOR"))?;
    if status.code() == Some(127) {
        return Err(format!("the editor `{editor}` was not found; set $VISUAL or $EDITOR (the prompt is unchanged)"));
    }
    if !status.success() {
        return Err(format!("the editor `{editor}` exited with {status}; the prompt is unchanged"));
    }
    let edited = std::fs::read_to_string(file.path())
        .map_err(|e| format!("could not read the prompt back from the editor: {e}"))?;
    // Editors end the file with a newline the prompt did not have.
    Ok(edited.trim_end_matches(['\n', '\r']).to_string())
}

/// The editor through the shell, so `$EDITOR` may hold arguments; the path is passed as `$1`,
/// never spliced into the command line.
fn command(editor: &str, path: &Path) -> tokio::process::Command {
    #[cfg(unix)]
    {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c").arg(format!("{editor} \"$1\"")).arg("cairn-editor").arg(path);
        cmd
    }
    #[cfg(not(unix))]
    {
        let mut cmd = tokio::process::Command::new("cmd");
        cmd.arg("/C").arg(editor).arg(path);
        cmd
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_edited_text_comes_back_and_a_failing_editor_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("ed.sh");
        std::fs::write(&script, "#!/bin/sh\nprintf ' and more\\n' >> \"$1\"\n").unwrap();
        // An editor command with an argument, as `code --wait` has.
        let editor = format!("sh {}", script.display());
        assert_eq!(edit(&editor, "first line\nsecond").await.unwrap(), "first line\nsecond and more");
        let err = edit("false", "kept").await.unwrap_err();
        assert!(err.contains("`false` exited") && err.contains("unchanged"), "{err}");
        let err = edit("/nonexistent/editor", "kept").await.unwrap_err();
        assert!(err.contains("was not found; set $VISUAL") && err.contains("unchanged"), "{err}");
    }
}
