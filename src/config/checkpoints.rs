//! `[checkpoints]`: per-turn file checkpoints (what `/rewind`, `/undo` and `/diff` read).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointsConfig {
    /// Record checkpoints at all. Off: no scan around `bash`, no copies of files.
    pub enabled: bool,
    /// Size cap of the stored file contents (compressed), in MiB; past it the least recently
    /// used contents are dropped first. A gigabyte holds the compressed history of a large
    /// project for weeks; contents still in use by the project tree go last.
    pub max_store_mb: u64,
    /// Files larger than this (bytes) are tracked but their content is not kept, so a change to
    /// one can be listed, not undone. Sources are far below it; build artefacts and media above.
    pub max_file_bytes: u64,
    /// Paths (gitignore-style globs, matched against the path relative to the project root and
    /// against the file name) whose content is never copied into the database: secrets stay
    /// where the user put them. Changes to them are listed as not restorable.
    pub never_store: Vec<String>,
    /// Entries walked inside an ignored folder (target/, node_modules/) to decide it is small
    /// enough to checkpoint in full; larger ignored folders are only watched, see
    /// `ignored_dir_watch_limit`.
    pub ignored_walk_budget: usize,
    /// Folders inside large ignored folders whose modification time each scan checks, so a
    /// bash call that creates or deletes files there is reported (not restored).
    pub ignored_dir_watch_limit: usize,
    /// A project with more entries than this is not scanned around `bash` (writes and edits
    /// are still checkpointed): a scan of a million files would cost seconds per command.
    pub max_scan_entries: usize,
    /// Linux: watch the tracked folders with inotify, so the scan around `bash` stats only the
    /// folders where something happened. Off: every entry is stat-ed before and after each
    /// command (for file systems where inotify misses changes, such as network mounts).
    pub watch_folders: bool,
}

impl Default for CheckpointsConfig {
    fn default() -> Self {
        CheckpointsConfig {
            enabled: true,
            max_store_mb: 1_024,
            max_file_bytes: 4 * 1024 * 1024,
            never_store: [".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", ".netrc"]
                .into_iter()
                .map(String::from)
                .collect(),
            ignored_walk_budget: 2_000,
            ignored_dir_watch_limit: 2_000,
            max_scan_entries: 250_000,
            watch_folders: true,
        }
    }
}

impl CheckpointsConfig {
    /// The cap in bytes.
    pub fn max_store_bytes(&self) -> u64 {
        self.max_store_mb.saturating_mul(1024 * 1024)
    }

    /// Why the section is unusable, if it is.
    /// The key at fault and what is wrong with it.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.enabled && self.max_store_mb == 0 {
            return Err((
                "checkpoints.max_store_mb",
                "0 would drop every checkpoint at once; give a size in MiB (default 1024) or set checkpoints.enabled = false".into(),
            ));
        }
        for glob in &self.never_store {
            if let Err(e) = globset::Glob::new(glob) {
                return Err(("checkpoints.never_store", format!("bad pattern {glob:?}: {e}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_cap_and_a_bad_glob_are_explained() {
        let zero = CheckpointsConfig { max_store_mb: 0, ..Default::default() };
        assert!(zero.validate().unwrap_err().0.contains("max_store_mb"));
        let off = CheckpointsConfig { enabled: false, ..zero };
        assert!(off.validate().is_ok());
        let bad = CheckpointsConfig { never_store: vec!["a[".into()], ..Default::default() };
        assert!(bad.validate().unwrap_err().0.contains("never_store"));
        assert!(CheckpointsConfig::default().validate().is_ok());
    }

    #[test]
    fn the_readme_block_parses_to_the_defaults() {
        let readme = include_str!("../../README.md");
        let start = readme.find("[checkpoints]\n").expect("README documents [checkpoints]");
        let block = &readme[start..start + readme[start..].find("```").expect("end of the block")];
        let config = super::super::file::parse(block).expect("the README block parses");
        assert_eq!(config.checkpoints, CheckpointsConfig::default());
    }
}
