//! An editor that holds the project's files, as a front end offers it (ACP's `fs/*` methods):
//! the file tools read a file's text from the editor — its buffer, unsaved changes included —
//! and write their changes into it, instead of the disk. Without one, they use the disk.

use std::path::Path;

use futures_util::future::BoxFuture;

/// What an editor front end does with the project's text files for the tools.
pub trait Editor: Send + Sync {
    /// Reads go through [`Editor::read_file`].
    fn reads_files(&self) -> bool;
    /// Writes go through [`Editor::write_file`].
    fn writes_files(&self) -> bool;
    /// The text of the file at the absolute `path` as the editor has it. The error says why not.
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    /// Make `text` the content of the file at the absolute `path`, in the editor.
    fn write_file<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
}
