//! Truncation files: the full output of a truncated tool result (or an over-long prompt),
//! written atomically under the data folder's `truncations/`, named by session and call so
//! names never collide, and removed after the retention period unless a live session may
//! still point at them.

use std::path::{Path, PathBuf};

use super::Worker;
use crate::context::{Spill, TruncationLimits, plan_cut, render_cut};
use crate::conversation::ToolCall;
use crate::conversation::tool_names::FILE_READ;
use crate::store::Store;

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

impl Worker {
    pub(super) fn truncation_limits(&self) -> TruncationLimits {
        TruncationLimits::new(&self.place.config().context, &self.budget())
    }

    /// The result as the model sees it, cut to `limits` with the full text saved; `true` when
    /// it was cut.
    pub(super) fn truncate_result(&self, call: &ToolCall, content: &str, limits: &TruncationLimits) -> (String, bool) {
        let Some(cut) = plan_cut(content, limits) else { return (content.to_string(), false) };
        if self.reads_a_spill_file(call) {
            // Reading a saved output back must never save it again (no loop).
            return (render_cut(content, &cut, Spill::NotSaved), true);
        }
        let name = format!("{}-{}", safe_name(self.session.id()), safe_name(&call.id));
        let text = match write_atomically(self.place.truncations_dir(), &name, &self.session.redactor().redact(content))
        {
            Ok(path) => render_cut(content, &cut, Spill::Saved(&path.display().to_string())),
            Err(e) => {
                tracing::error!(error = %e, "cannot save a truncated output");
                render_cut(content, &cut, Spill::Failed(&e.to_string()))
            }
        };
        (text, true)
    }

    fn reads_a_spill_file(&self, call: &ToolCall) -> bool {
        if call.name != FILE_READ {
            return false;
        }
        let Ok(args) = call.parsed_arguments() else { return false };
        let Some(path) = args.get("path").and_then(|p| p.as_str()) else { return false };
        crate::tools::resolve_path(self.place.root(), path).absolute.starts_with(self.place.truncations_dir())
    }

    /// A prompt too long for the window is cut like a tool result, its full text saved.
    pub(super) fn spill_long_prompt(&mut self, prompt: String) -> String {
        let limits = self.truncation_limits();
        let doubled = TruncationLimits { max_bytes: limits.max_bytes * 2, max_lines: limits.max_lines * 2, ..limits };
        let Some(cut) = plan_cut(&prompt, &doubled) else { return prompt };
        let name = format!("{}-prompt-{}", safe_name(self.session.id()), self.session.last_seq() + 1);
        let text = match write_atomically(self.place.truncations_dir(), &name, &self.session.redactor().redact(&prompt))
        {
            Ok(path) => render_cut(&prompt, &cut, Spill::Saved(&path.display().to_string())),
            Err(e) => render_cut(&prompt, &cut, Spill::Failed(&e.to_string())),
        };
        self.session.pipeline_mut().note_truncations(1);
        self.link.notice(
            crate::agent::events::NoticeLevel::Warning,
            "the message was too long for the context window; its middle was saved to a file the model can read",
        );
        text
    }
}

/// Remove spilled outputs older than `days`, except those of sessions active within that time.
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
