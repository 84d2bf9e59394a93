//! Editing a TOML file cairn writes to (the user's `config.toml`, the project-local settings),
//! keeping what it holds — comments and layout included.

use std::path::Path;

/// The text of the TOML file at `path`, to edit (missing: empty).
pub fn read_for_edit(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The table `key` of `doc` (of the file at `path`), made when missing, written only as its
/// subtables (`[key.NAME]`) when it has no keys of its own.
pub fn table_for_edit<'a>(
    doc: &'a mut toml_edit::DocumentMut,
    key: &str,
    path: &Path,
) -> Result<&'a mut toml_edit::Table, String> {
    doc.entry(key)
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| format!("{}: `{key}` is not a table", path.display()))
}
