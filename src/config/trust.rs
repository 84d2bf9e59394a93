//! The folders the user trusts, kept in their own `config.toml` as `[trust."PATH"]`: when the
//! folder was trusted, and a digest of each thing its files make cairn run, by a name that says
//! where it is written (`.cairn/settings.toml#hooks.SessionStart[1]`). What the digests mean, and
//! what the project holds now, is `trust`'s business; this layer only reads and writes the table.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One trusted folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustEntry {
    /// When the user said yes (RFC 3339).
    pub at: String,
    /// What runs, by where it is written, with the digest of what it was then. Something not
    /// listed here, or listed with another digest, is asked about again.
    pub items: BTreeMap<String, String>,
}

/// Write `entry` as the folder `root`'s trust in the config file at `path` (created if missing),
/// keeping everything else the file holds, comments included. Written to a temporary file and
/// renamed, so a reader never sees half a file.
pub fn record_trust(path: &Path, root: &Path, entry: &TrustEntry) -> Result<(), String> {
    let text = super::edit::read_for_edit(path)?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    let trust = super::edit::table_for_edit(&mut doc, "trust", path)?;
    let mut table = toml_edit::Table::new();
    table.insert("at", toml_edit::value(entry.at.as_str()));
    let mut items = toml_edit::InlineTable::new();
    for (id, digest) in &entry.items {
        items.insert(id, digest.as_str().into());
    }
    table.insert("items", toml_edit::value(items));
    trust.insert(&root.display().to_string(), toml_edit::Item::Table(table));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("toml.{}.tmp", std::process::id()));
    std::fs::write(&tmp, doc.to_string()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot replace {}: {e}", path.display())
    })
}
