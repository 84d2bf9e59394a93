//! The place for saved outputs: the whole text of a tool result cut to the limits (or of an
//! over-long prompt), written atomically under the data folder's `truncations/`, named by
//! session and call so names never collide, with key values kept out; a saved output read back
//! is never saved again. Files are removed after the retention period unless a live session may
//! still point at them.

use std::path::{Path, PathBuf};

use crate::config::Redactor;
use crate::context::{Spill, TruncationLimits, plan_cut, render_cut};
use crate::conversation::tool_names::FILE_READ;
use crate::store::Store;

/// Where one session's outputs are saved.
pub(super) struct SavedOutputs<'a> {
    /// Canonical, so paths the tools resolve compare equal.
    dir: &'a Path,
    /// The project root, against which a `file_read` path resolves.
    root: &'a Path,
    session: String,
    redactor: Redactor,
}

fn safe_name(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).take(80).collect()
}

/// Write `text` to `dir/name` via a temporary file and a rename, so a reader never sees half.
fn write_atomically(dir: &Path, name: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut path = dir.join(format!("{name}.txt"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = dir.join(format!("{name}-{n}.txt"));
    }
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(path)
}

impl<'a> SavedOutputs<'a> {
    pub(super) fn new(dir: &'a Path, root: &'a Path, session: &str, redactor: &Redactor) -> SavedOutputs<'a> {
        SavedOutputs { dir, root, session: session.to_string(), redactor: redactor.clone() }
    }

    /// The session whose outputs these are.
    pub(super) fn session(&self) -> &str {
        &self.session
    }

    /// The folder, for the read permission: reading a saved output is as free as reading the
    /// project.
    pub(super) fn dir(&self) -> &Path {
        self.dir
    }

    /// The result of the call `call_id` of `tool` with `arguments`, as the model sees it: cut
    /// to `limits` with the whole text saved; `true` when it was cut.
    pub(super) fn cut(
        &self,
        call_id: &str,
        tool: &str,
        arguments: &str,
        content: &str,
        limits: &TruncationLimits,
    ) -> (String, bool) {
        let Some(cut) = plan_cut(content, limits) else { return (content.to_string(), false) };
        if self.reads_a_saved_output(tool, arguments) {
            // Reading a saved output back must never save it again (no loop).
            return (render_cut(content, &cut, Spill::NotSaved), true);
        }
        let name = format!("{}-{}", safe_name(&self.session), safe_name(call_id));
        let text = match write_atomically(self.dir, &name, &self.redactor.redact(content)) {
            Ok(path) => render_cut(content, &cut, Spill::Saved(&path.display().to_string())),
            Err(e) => {
                tracing::error!(error = %e, "cannot save a truncated output");
                render_cut(content, &cut, Spill::Failed(&e.to_string()))
            }
        };
        (text, true)
    }

    fn reads_a_saved_output(&self, tool: &str, arguments: &str) -> bool {
        if tool != FILE_READ {
            return false;
        }
        let Ok(args) = serde_json::from_str::<serde_json::Value>(arguments) else { return false };
        let Some(path) = args.get("path").and_then(|p| p.as_str()) else { return false };
        crate::tools::resolve_path(self.root, path).absolute.starts_with(self.dir)
    }

    /// A prompt too long for the window, cut like a tool result (to twice `limits`) with its
    /// whole text saved; `None` when it fits. `seq` is the one it will be stored at.
    pub(super) fn cut_prompt(&self, prompt: &str, seq: i64, limits: &TruncationLimits) -> Option<String> {
        let doubled = TruncationLimits { max_bytes: limits.max_bytes * 2, max_lines: limits.max_lines * 2, ..*limits };
        let cut = plan_cut(prompt, &doubled)?;
        let name = format!("{}-prompt-{seq}", safe_name(&self.session));
        Some(match write_atomically(self.dir, &name, &self.redactor.redact(prompt)) {
            Ok(path) => render_cut(prompt, &cut, Spill::Saved(&path.display().to_string())),
            Err(e) => render_cut(prompt, &cut, Spill::Failed(&e.to_string())),
        })
    }
}

/// Remove saved outputs older than `days`, except those of sessions active within that time.
pub fn clean_truncations(dir: &Path, store: &Store, days: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let cutoff = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
    let since =
        (chrono::Utc::now() - chrono::Duration::days(days as i64)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let live = store.sessions_active_since(&since).unwrap_or_default();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let old = entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < cutoff);
        let in_use = live.iter().any(|id| name.starts_with(&format!("{}-", safe_name(id))));
        if old && !in_use && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_collide_and_writes_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_atomically(dir.path(), "s-c", "one").unwrap();
        let b = write_atomically(dir.path(), "s-c", "two").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn cleanup_spares_live_sessions_and_recent_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_memory().unwrap();
        let project = store.project(Path::new("/p")).unwrap();
        let live = store
            .create_session(
                project,
                crate::store::NewSession {
                    provider: crate::config::ProviderKind::Anthropic,
                    model: "m",
                    mode: crate::conversation::Mode::Edit,
                },
            )
            .unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 86_400);
        for name in [format!("{}-call1.txt", live.id), "deadbeef0000-call2.txt".to_string()] {
            let path = dir.path().join(name);
            std::fs::write(&path, "x").unwrap();
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        }
        std::fs::write(dir.path().join("deadbeef0000-fresh.txt"), "x").unwrap();
        assert_eq!(clean_truncations(dir.path(), &store, 7), 1);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }
}
