//! The `[permissions]` and `[sandbox]` tables, in `config.toml` and in the project's
//! `.cairn/settings.toml` (committed) and `.cairn/settings.local.toml` (git-ignored).
//!
//! This layer only reads the shapes: a rule is kept as its text and the line it was written
//! on, so that `tools::permissions`, which knows what a rule means, can say "file, line, rule"
//! when one is wrong.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::{ConfigError, key_at};
use super::extensions::{HooksConfig, McpServerConfig};

/// One rule as written, e.g. `bash(git log *)`, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleText {
    pub text: String,
    /// Byte offset of the string in its file, from the TOML parser.
    offset: usize,
    /// 1-based line; filled in by [`PermissionsConfig::locate`] once the file's text is known.
    pub line: usize,
}

impl RuleText {
    pub fn new(text: impl Into<String>, line: usize) -> RuleText {
        RuleText { text: text.into(), offset: 0, line }
    }
}

impl<'de> Deserialize<'de> for RuleText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RuleText, D::Error> {
        let spanned = toml::Spanned::<String>::deserialize(d)?;
        let offset = spanned.span().start;
        Ok(RuleText { text: spanned.into_inner(), offset, line: 0 })
    }
}

impl Serialize for RuleText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.text.serialize(s)
    }
}

/// `[permissions]`: rules per effect. Which effect wins is decided in `tools::permissions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionsConfig {
    pub allow: Vec<RuleText>,
    pub ask: Vec<RuleText>,
    pub deny: Vec<RuleText>,
}

impl PermissionsConfig {
    /// Turn each rule's byte offset into its line in `text`, the file it was parsed from.
    pub fn locate(&mut self, text: &str) {
        for rule in self.allow.iter_mut().chain(self.ask.iter_mut()).chain(self.deny.iter_mut()) {
            let offset = rule.offset.min(text.len());
            rule.line = text[..offset].matches('\n').count() + 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

/// How much the OS sandbox lets a `bash` command do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Reads anywhere, writes nowhere (but /dev/null and the like).
    ReadOnly,
    /// Writes inside the project, the temp dirs and `writable_roots` only (the default).
    #[default]
    WorkspaceWrite,
    /// No sandbox.
    FullAccess,
}

impl SandboxMode {
    pub fn label(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }

    /// `--sandbox MODE`.
    pub fn parse(s: &str) -> Option<SandboxMode> {
        match s.trim() {
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "full-access" => Some(SandboxMode::FullAccess),
            _ => None,
        }
    }
}

/// `[sandbox]` as written in one file; unset keys fall through to the next level.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// read-only | workspace-write | full-access; unset means workspace-write.
    pub mode: Option<SandboxMode>,
    /// Let sandboxed commands use the network; unset means off.
    pub network: Option<bool>,
    /// More folders sandboxed commands may write to (`~/` allowed), e.g. `~/.cargo` so that
    /// cargo can update its registry cache.
    pub writable_roots: Vec<String>,
    /// Processes (threads included) one command may run at once; 0 for no limit. Unset:
    /// [`default_max_processes`].
    pub max_processes: Option<u64>,
    /// Address space of each process of a command, in MiB; 0 for no limit. Unset:
    /// [`DEFAULT_MEMORY_LIMIT_MB`].
    pub memory_limit_mb: Option<u64>,
}

/// `[sandbox] memory_limit_mb` unset: 16 GiB of address space per process, far above what a
/// build needs (V8 and the JVM reserve a few GiB they never touch) and low enough that a
/// command allocating without end fails before the machine swaps.
pub const DEFAULT_MEMORY_LIMIT_MB: u64 = 16 * 1024;

/// `[sandbox] max_processes` unset: 32 per CPU, at least 256 — a parallel build on every core
/// (each compiler with its threads) fits, a fork bomb does not.
pub fn default_max_processes() -> u64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    (32 * cpus).max(256)
}

/// One of the project's settings files. The same tables as `config.toml` takes for them;
/// anything else is an error, so a typo is reported instead of silently ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SettingsFile {
    pub permissions: PermissionsConfig,
    pub sandbox: SandboxConfig,
    pub mcp_servers: std::collections::BTreeMap<String, McpServerConfig>,
    pub hooks: HooksConfig,
}

/// The project's two settings files, each with where it was read from (absent files are
/// empty).
#[derive(Clone, Debug, Default)]
pub struct ProjectSettings {
    /// `.cairn/settings.toml`: meant to be committed, shared by everyone on the project.
    pub shared: SettingsFile,
    pub shared_path: PathBuf,
    /// `.cairn/settings.local.toml`: this checkout only, git-ignored.
    pub local: SettingsFile,
    pub local_path: PathBuf,
}

/// `.cairn/settings.toml` under `root`.
pub fn shared_settings_path(root: &Path) -> PathBuf {
    root.join(".cairn").join("settings.toml")
}

/// `.cairn/settings.local.toml` under `root`.
pub fn local_settings_path(root: &Path) -> PathBuf {
    root.join(".cairn").join("settings.local.toml")
}

/// Read both project settings files; a missing file is empty, a malformed one an error naming
/// the file, the line and the key.
pub fn load_project_settings(root: &Path) -> Result<ProjectSettings, ConfigError> {
    let shared_path = shared_settings_path(root);
    let local_path = local_settings_path(root);
    Ok(ProjectSettings {
        shared: load_settings(&shared_path)?,
        shared_path,
        local: load_settings(&local_path)?,
        local_path,
    })
}

/// Read one settings file (missing is empty).
pub fn load_settings(path: &Path) -> Result<SettingsFile, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SettingsFile::default()),
        Err(source) => return Err(ConfigError::Unreadable { path: path.to_path_buf(), source }),
    };
    parse_settings(&text).map_err(|(line, key, message)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        key,
        message,
    })
}

/// Parse settings text; on failure the 1-based line, the key if one can be named, and the
/// parser's message.
pub fn parse_settings(text: &str) -> Result<SettingsFile, (usize, Option<String>, String)> {
    match toml::from_str::<SettingsFile>(text) {
        Ok(mut settings) => {
            settings.permissions.locate(text);
            check_extensions(&settings, text)?;
            Ok(settings)
        }
        Err(e) => {
            let offset = e.span().map(|s| s.start).unwrap_or(0).min(text.len());
            let line = text[..offset].matches('\n').count() + 1;
            let mut message = e.message().trim().to_string();
            if message.starts_with("unknown field `local`") {
                // Only the user runs a model server: a project's files cannot start one.
                message.push_str(" ([local] is read only from your own config.toml, never from a project's files)");
            }
            if message.starts_with("unknown field `tui`") {
                // The status command runs without the folder's trust: only the user sets it.
                message.push_str(
                    " ([tui], the status command among it, is read only from your own config.toml, never from a project's files)",
                );
            }
            Err((line, key_at(text, line), message))
        }
    }
}

/// A server or hook table that parses but cannot be used, with the line of its header.
fn check_extensions(settings: &SettingsFile, text: &str) -> Result<(), (usize, Option<String>, String)> {
    let header_line = |needle: &str| text.lines().position(|l| l.trim().starts_with(needle)).map_or(1, |i| i + 1);
    for (name, server) in &settings.mcp_servers {
        let key = format!("mcp_servers.{name}");
        if !super::extensions::valid_server_name(name) {
            return Err((
                header_line(&format!("[{key}")),
                Some(key),
                "a server name takes letters, digits, `-` and `_` (no `__`)".into(),
            ));
        }
        if let Some(p) = server.problem() {
            return Err((header_line(&format!("[{key}")), Some(key), p));
        }
    }
    if let Some(p) = settings.hooks.problem() {
        return Err((header_line("[[hooks."), None, p));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_keep_the_line_they_were_written_on() {
        let text = "# mine\n[permissions]\nallow = [\n  \"bash(git log *)\",\n  \"file_edit(src/**)\",\n]\ndeny = [\"bash(rm *)\"]\n";
        let s = parse_settings(text).unwrap();
        let lines: Vec<_> = s.permissions.allow.iter().map(|r| (r.text.as_str(), r.line)).collect();
        assert_eq!(lines, [("bash(git log *)", 4), ("file_edit(src/**)", 5)]);
        assert_eq!(s.permissions.deny[0].line, 7);
    }

    #[test]
    fn sandbox_modes_read_as_written_and_unknown_keys_name_their_line() {
        let s = parse_settings("[sandbox]\nmode = \"read-only\"\nnetwork = true\n").unwrap();
        assert_eq!(s.sandbox.mode, Some(SandboxMode::ReadOnly));
        assert_eq!(s.sandbox.network, Some(true));
        let (line, key, msg) = parse_settings("[sandbox]\nmode = \"readonly\"\n").unwrap_err();
        assert_eq!((line, key.as_deref()), (2, Some("sandbox.mode")));
        assert!(msg.contains("read-only"), "{msg}");
        let (line, key, _) = parse_settings("[permissions]\nalow = []\n").unwrap_err();
        assert_eq!((line, key.as_deref()), (2, Some("permissions.alow")));
    }

    #[test]
    fn missing_files_are_empty_and_a_bad_one_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let settings = load_project_settings(dir.path()).unwrap();
        assert!(settings.shared.permissions.is_empty() && settings.local.permissions.is_empty());
        std::fs::create_dir(dir.path().join(".cairn")).unwrap();
        std::fs::write(local_settings_path(dir.path()), "[permissions]\nallow = \"bash\"\n").unwrap();
        let err = load_project_settings(dir.path()).unwrap_err().to_string();
        assert!(err.contains("settings.local.toml") && err.contains("line 2"), "{err}");
    }
}
