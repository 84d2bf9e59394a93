//! An editor that holds the project's files, as a front end offers it (ACP's `fs/*` methods):
//! the file tools read a file's text from the editor — its buffer, unsaved changes included —
//! and write their changes into it, instead of the disk. Without one, they use the disk. An
//! editor may also offer its terminals (ACP's `terminal/*`), where `bash` runs its commands.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::terminals::Terminals;

/// What an editor front end does with the project's text files (and commands) for the tools.
pub trait Editor: Send + Sync {
    /// Reads go through [`Editor::read_file`].
    fn reads_files(&self) -> bool;
    /// Writes go through [`Editor::write_file`].
    fn writes_files(&self) -> bool;
    /// The text of the file at the absolute `path` as the editor has it. The error says why not.
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    /// Make `text` the content of the file at the absolute `path`, in the editor.
    fn write_file<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// The editor's terminals, where `bash` runs a call's command so the user watches it;
    /// `None`: cairn runs commands itself.
    fn terminals(&self) -> Option<&dyn Terminals> {
        None
    }
}

/// `editor` for a subagent: its files, not its terminals. A subagent's calls are not shown in
/// the editor (its `task` call is), so a terminal there is one nobody would watch; its
/// commands run in cairn's own runner.
pub fn files_only(editor: Arc<dyn Editor>) -> Arc<dyn Editor> {
    if editor.terminals().is_none() {
        return editor;
    }
    Arc::new(FilesOnly(editor))
}

struct FilesOnly(Arc<dyn Editor>);

impl Editor for FilesOnly {
    fn reads_files(&self) -> bool {
        self.0.reads_files()
    }

    fn writes_files(&self) -> bool {
        self.0.writes_files()
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        self.0.read_file(path)
    }

    fn write_file<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.0.write_file(path, text)
    }
}
