//! A file change as the user approves it and as it is applied: the two can never differ.

use std::io::Write;

use super::{FileTracker, ProjectPath, ToolError};

/// The whole content of a file before and after a write or edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    pub path: ProjectPath,
    /// `None` when the file does not exist yet.
    pub before: Option<String>,
    pub after: String,
}

impl FileChange {
    /// Unified diff with three lines of context, headed by the display path.
    pub fn unified_diff(&self) -> String {
        let before = self.before.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(before, &self.after);
        let old_header = if self.before.is_some() { format!("a/{}", self.path.display) } else { "/dev/null".into() };
        diff.unified_diff().context_radius(3).header(&old_header, &format!("b/{}", self.path.display)).to_string()
    }

    /// Lines added and removed.
    pub fn line_stats(&self) -> (usize, usize) {
        let before = self.before.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(before, &self.after);
        let mut added = 0;
        let mut removed = 0;
        for change in diff.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        (added, removed)
    }

    /// Write `after`, but only if the file still holds `before`: a file changed by someone else
    /// while the user looked at the preview is not overwritten. Atomic (temp file + rename),
    /// keeps the file's permissions, creates missing parent folders.
    pub fn apply(&self, tracker: &FileTracker) -> Result<(), ToolError> {
        let path = &self.path.absolute;
        let current = match std::fs::read(path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ToolError::new(format!("cannot read {} before writing: {e}", self.path.display))),
        };
        if current.as_deref() != self.before.as_deref().map(str::as_bytes) {
            return Err(ToolError::new(format!(
                "{} changed on disk while the change was waiting for approval; nothing was written. Read the file again and redo the change.",
                self.path.display
            )));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ToolError::new(format!("cannot create folder {}: {e}", parent.display())))?;
        }
        write_atomically(path, self.after.as_bytes())
            .map_err(|e| ToolError::new(format!("cannot write {}: {e}", self.path.display)))?;
        tracker.record(path, self.after.as_bytes());
        Ok(())
    }
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| std::path::Path::new("."));
    let mut tmp = tempfile_in(dir, path)?;
    let result = (|| {
        tmp.1.write_all(bytes)?;
        tmp.1.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp.0, meta.permissions())?;
        }
        std::fs::rename(&tmp.0, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp.0);
    }
    result
}

fn tempfile_in(
    dir: &std::path::Path,
    target: &std::path::Path,
) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for _ in 0..16 {
        let candidate = dir.join(format!(".{name}.cairn-{}-{:08x}", std::process::id(), fastrand::u32(..)));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not create a temporary file next to the target"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::resolve_path;

    #[test]
    fn applies_only_over_the_previewed_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        let change = FileChange {
            path: resolve_path(&root, "a.txt"),
            before: Some("one\ntwo\n".into()),
            after: "one\n2\n".into(),
        };
        assert!(change.unified_diff().contains("-two\n+2\n"));
        assert_eq!(change.line_stats(), (1, 1));
        std::fs::write(root.join("a.txt"), "one\nthree\n").unwrap();
        let err = change.apply(&FileTracker::default()).unwrap_err();
        assert!(err.0.contains("changed on disk"), "{err}");
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\nthree\n");
    }

    #[test]
    fn creates_new_files_with_parents_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let change =
            FileChange { path: resolve_path(&root, "deep/er/new.sh"), before: None, after: "echo hi\n".into() };
        assert!(change.unified_diff().starts_with("--- /dev/null"));
        change.apply(&FileTracker::default()).unwrap();
        let file = root.join("deep/er/new.sh");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        let again = FileChange { before: Some("echo hi\n".into()), after: "echo bye\n".into(), ..change };
        again.apply(&FileTracker::default()).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o755);
        let leftovers: Vec<_> = std::fs::read_dir(root.join("deep/er")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    }
}
