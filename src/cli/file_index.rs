//! The project's files for `@path` completion, listed on a background thread with `ignore` (so
//! `.gitignore` is respected) and handed to the interface, which asks for a frame to show them.

use std::path::{Path, PathBuf};

use crate::tui::{FileIndex, FrameRequester};

/// Files indexed at most; a bigger tree is still usable, the rest is found by typing a path.
const MAX_FILES: usize = 50_000;

/// An index that fills itself from `root` in the background.
pub fn spawn(root: PathBuf, frames: FrameRequester) -> FileIndex {
    let index = FileIndex::default();
    let slot = index.clone();
    let spawned = std::thread::Builder::new().name("cairn-file-index".into()).spawn(move || {
        slot.fill(list_files(&root));
        frames.request();
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "could not start the file index; @path completion is off");
    }
    index
}

fn list_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(root).hidden(true).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file())
            && let Ok(rel) = entry.path().strip_prefix(root)
        {
            out.push(rel.to_string_lossy().replace('\\', "/"));
            if out.len() >= MAX_FILES {
                break;
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_lists_files_and_respects_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("target/out.bin"), "x").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "x").unwrap();
        assert_eq!(list_files(dir.path()), ["src/lib.rs"]);
    }
}
