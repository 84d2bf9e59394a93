//! The OS sandbox for `bash`: what a command may read and write, whether it may use the
//! network, which processes it may signal, how many processes and how much memory it may use,
//! enforced by the kernel in the command's own process (between fork and exec), so cairn itself
//! is never restricted. See `linux/` for how, and `docs/permissions.md` for the threat model.
//!
//! On Linux: Landlock for files (reads everywhere but the terminal devices, or — for plan mode
//! and commands run unasked because they only read — only the project and the system folders;
//! writes only inside the project, the temp dirs and `writable_roots` in `workspace-write`,
//! nowhere in `read-only`), TCP (ABI 4+), signals and abstract sockets (ABI 6+); a read-only
//! mount namespace around the writable roots (attribute changes fail outside them; protected
//! paths and hard links out of the project are read-only inside them); seccomp; process and
//! memory limits. Elsewhere, or on a kernel without Landlock, commands run unconfined and
//! cairn says so once; the approvals still hold.

mod scan;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
use linux as os;
#[cfg(not(target_os = "linux"))]
use other as os;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::config::SandboxMode;
use crate::config::{ProjectSettings, SandboxConfig};
use crate::tools::permissions::protected::Guard;

/// What sandboxed commands may do. Serialised, it is what cairn's launcher in an editor's
/// terminal is granted (`tools::launcher`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Network for sandboxed commands (read-only and workspace-write).
    pub network: bool,
    /// Writable besides the project and the temp dirs (workspace-write).
    pub writable_roots: Vec<PathBuf>,
    /// Reads confined to the project, the system folders and `readable` (plan mode, and
    /// commands run unasked because they only read).
    pub confine_reads: bool,
    /// Folders outside the project a confined read may reach besides (a rule allowed them).
    pub readable: Vec<PathBuf>,
    /// Processes (threads included) a command may run at once; `None`: no limit.
    pub max_processes: Option<u64>,
    /// Address space of each of its processes, in MiB; `None`: no limit.
    pub memory_limit_mb: Option<u64>,
    /// Settings that were not applied, and why (for `doctor`).
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn full_access() -> SandboxPolicy {
        SandboxPolicy { network: true, ..SandboxPolicy::new(SandboxMode::FullAccess) }
    }

    /// A mode with the network off, no extra writable folders and the default limits.
    pub fn new(mode: SandboxMode) -> SandboxPolicy {
        SandboxPolicy {
            mode,
            network: false,
            writable_roots: Vec::new(),
            confine_reads: false,
            readable: Vec::new(),
            max_processes: Some(crate::config::default_max_processes()),
            memory_limit_mb: Some(crate::config::DEFAULT_MEMORY_LIMIT_MB),
            notes: Vec::new(),
        }
    }

    /// The sandbox for a project: `--sandbox` first, then `.cairn/settings.local.toml`, then the
    /// user's config, then the default (workspace-write, network off). The committed
    /// `.cairn/settings.toml` comes from whoever wrote the repository, so it may only tighten
    /// it: a stricter mode or `network = false` is taken, anything looser is ignored with a
    /// note.
    pub fn resolve(user: &SandboxConfig, project: &ProjectSettings, cli: Option<SandboxMode>) -> SandboxPolicy {
        let local = &project.local.sandbox;
        let shared = &project.shared.sandbox;
        let shared_file = project.shared_path.display();
        let mut notes = Vec::new();
        let mut mode = cli.or(local.mode).or(user.mode).unwrap_or_default();
        if let Some(wanted) = shared.mode {
            if wanted < mode {
                mode = wanted;
            } else if wanted > mode {
                notes.push(format!(
                    "{shared_file} asks for sandbox mode {}; a committed project file may only tighten the sandbox, so {} stays (put it in .cairn/settings.local.toml or pass --sandbox to loosen it)",
                    wanted.label(),
                    mode.label()
                ));
            }
        }
        let mut network = local.network.or(user.network).unwrap_or(false);
        match shared.network {
            Some(false) => network = false,
            Some(true) if !network => notes.push(format!(
                "{shared_file} asks for network = true; a committed project file may only tighten the sandbox, so the network stays off (put it in .cairn/settings.local.toml to allow it)"
            )),
            Some(true) | None => {}
        }
        if !shared.writable_roots.is_empty() {
            notes.push(format!(
                "{shared_file} lists writable_roots; a committed project file may only tighten the sandbox, so they are ignored (put them in .cairn/settings.local.toml)"
            ));
        }
        let writable_roots = user.writable_roots.iter().chain(&local.writable_roots).map(|r| expand_home(r)).collect();
        // Limits: 0 switches one off; the committed file may only lower them.
        let limit = |name: &str,
                     local: Option<u64>,
                     user: Option<u64>,
                     shared: Option<u64>,
                     default: u64,
                     notes: &mut Vec<String>| {
            let mut value = local.or(user).unwrap_or(default);
            match shared {
                Some(s) if s != 0 && (value == 0 || s < value) => value = s,
                Some(s) if s != value => notes.push(format!(
                    "{shared_file} asks for {name} = {s}; a committed project file may only tighten the sandbox, so {value} stays"
                )),
                _ => {}
            }
            (value != 0).then_some(value)
        };
        let max_processes = limit(
            "max_processes",
            local.max_processes,
            user.max_processes,
            shared.max_processes,
            crate::config::default_max_processes(),
            &mut notes,
        );
        let memory_limit_mb = limit(
            "memory_limit_mb",
            local.memory_limit_mb,
            user.memory_limit_mb,
            shared.memory_limit_mb,
            crate::config::DEFAULT_MEMORY_LIMIT_MB,
            &mut notes,
        );
        SandboxPolicy { writable_roots, max_processes, memory_limit_mb, notes, network, ..SandboxPolicy::new(mode) }
    }

    /// The sandbox of plan mode, and of a command cairn runs unasked because every part of it
    /// only reads, in any mode: read-only, reads confined to the project and the system folders
    /// (and `readable`, outside folders a rule let it read), with this policy's network setting
    /// and limits — so a classifier miss can neither write nor read outside.
    pub fn for_read_only_command(&self, readable: &[PathBuf]) -> SandboxPolicy {
        SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            writable_roots: Vec::new(),
            confine_reads: true,
            readable: readable.to_vec(),
            ..self.clone()
        }
    }

    /// Whether commands actually run confined: a restricting mode on a system that can enforce
    /// it.
    pub fn is_enforced(&self) -> bool {
        self.mode != SandboxMode::FullAccess && support().is_available()
    }

    /// What limits a command's processes and memory, for `doctor`.
    pub fn describe_limits(&self) -> String {
        let memory = match self.memory_limit_mb {
            Some(mb) => format!("{mb} MiB of address space per process"),
            None => "no memory limit".into(),
        };
        format!("{}; {memory}", os::describe_limits(self))
    }

    /// One line for `doctor` and the startup notice.
    pub fn describe(&self) -> String {
        let what = match self.mode {
            SandboxMode::FullAccess => return "full-access: bash commands run unconfined".into(),
            SandboxMode::ReadOnly => "read-only: commands write nowhere".to_string(),
            SandboxMode::WorkspaceWrite if self.writable_roots.is_empty() => {
                "workspace-write: commands write only inside the project and the temp dirs".to_string()
            }
            SandboxMode::WorkspaceWrite => format!(
                "workspace-write: commands write only inside the project, the temp dirs and {}",
                self.writable_roots.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
        };
        let net = if self.network { "network on" } else { "network off" };
        match support() {
            Support::Available { detail } => format!("{what}; {net} ({detail})"),
            Support::Unavailable { reason } => {
                format!(
                    "{} asked for, but not enforced: {reason}; cairn asks before commands instead",
                    self.mode.label()
                )
            }
        }
    }
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Whether this system can enforce the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// `detail`: what enforces it, e.g. "Landlock ABI 7, seccomp".
    Available { detail: String },
    /// `reason`: why not, e.g. "the kernel has no Landlock".
    Unavailable { reason: String },
}

impl Support {
    pub fn is_available(&self) -> bool {
        matches!(self, Support::Available { .. })
    }
}

/// Probed once per process.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(os::probe)
}

/// The "no sandbox here" notice, the first time it is asked for in this process and only when
/// a restricting mode was asked for: cairn says so once, then falls back to approvals.
pub fn take_unavailable_notice(policy: &SandboxPolicy) -> Option<String> {
    static SHOWN: AtomicBool = AtomicBool::new(false);
    if policy.mode == SandboxMode::FullAccess || support().is_available() || SHOWN.swap(true, Ordering::Relaxed) {
        return None;
    }
    Some(format!(
        "The bash sandbox is off: {}. Commands run unconfined; cairn asks before each one that is not read-only.",
        policy.describe()
    ))
}

/// What a child process is confined with; built in the parent (it allocates and opens files),
/// applied in the child after fork (where only async-signal-safe calls are allowed).
pub struct Confinement {
    os: os::Confinement,
    /// Protected files that did not exist when it was built: see [`undo_created`].
    absent: Vec<PathBuf>,
}

impl Confinement {
    /// The confinement for `policy` with the project at `root`, or `None` for full access or
    /// where the system cannot enforce it. Where commands may write in the project, it is
    /// scanned first (hard links out of it, nested repositories) and the missing folders of its
    /// git folders are created empty: slow on a huge tree, so call it off the async threads.
    pub fn build(policy: &SandboxPolicy, root: &Path) -> std::io::Result<Option<Confinement>> {
        if !policy.is_enforced() {
            return Ok(None);
        }
        let (writable, guard) = guard_of(policy, root);
        let os = os::Confinement::build(policy, root, &writable, &guard.read_only, &guard.pinned)?;
        Ok(os.map(|os| Confinement { os, absent: guard.absent }))
    }

    /// Restrict the calling process. Only for the child between fork and exec.
    pub fn apply(&mut self) -> std::io::Result<()> {
        self.os.apply()
    }

    /// Protected files that did not exist when it was built, for [`undo_created`].
    pub fn absent(&self) -> &[PathBuf] {
        &self.absent
    }
}

/// The folders a command under `policy` may write (existing, canonical) and what it may not
/// touch inside them.
fn guard_of(policy: &SandboxPolicy, root: &Path) -> (Vec<PathBuf>, Guard) {
    let writable: Vec<PathBuf> = writable_dirs(policy, root)
        .into_iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .filter(|d| d.is_dir())
        .collect();
    let guard = if writable.is_empty() { Guard::default() } else { read_only_inside(root, &writable) };
    (writable, guard)
}

/// The protected paths that do not exist, for a command confined elsewhere (cairn's launcher
/// in an editor's terminal builds the same [`Confinement`], but cannot clean up after the
/// command it becomes): what [`undo_created`] removes once it ended. Empty where commands are
/// not confined. Scans the project like [`Confinement::build`]: call it off the async threads.
pub fn absent_protected(policy: &SandboxPolicy, root: &Path) -> Vec<PathBuf> {
    if !policy.is_enforced() {
        return Vec::new();
    }
    guard_of(policy, root).1.absent
}

/// What a command confined elsewhere (cairn's launcher in an editor's terminal) left of its
/// limits once it ended — for root, its pids cgroup — removed, with any other whose process
/// is gone. Call it off the async threads.
pub fn sweep_after_launcher() {
    os::sweep_ended();
}

/// Of `absent` (see [`Confinement::absent`]), the protected paths a command created (nothing
/// could be mounted on them), removed once it ended; their paths, for the message.
pub fn undo_created(absent: &[PathBuf]) -> Vec<PathBuf> {
    crate::tools::permissions::protected::remove_created(absent)
}

/// Folders sandboxed commands may write in workspace-write: the project, the temp dirs and
/// the configured ones.
fn writable_dirs(policy: &SandboxPolicy, root: &Path) -> Vec<PathBuf> {
    match policy.mode {
        SandboxMode::ReadOnly | SandboxMode::FullAccess => Vec::new(),
        SandboxMode::WorkspaceWrite => {
            let mut dirs =
                vec![root.to_path_buf(), PathBuf::from("/tmp"), PathBuf::from("/var/tmp"), PathBuf::from("/dev/shm")];
            if let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
                dirs.push(PathBuf::from(tmp));
            }
            dirs.extend(policy.writable_roots.iter().cloned());
            dirs
        }
    }
}

/// What commands may not write inside the writable roots: the project's protected paths
/// (git configuration and hooks, of nested and bare repositories too; `.cairn/`, `.claude/`,
/// `.codex/`, `.mcp.json`), and files with a hard link outside the project.
fn read_only_inside(root: &Path, writable: &[PathBuf]) -> Guard {
    if !writable.iter().any(|w| root.starts_with(w)) {
        return Guard::default();
    }
    let scan = scan::scan(root);
    let mut out = crate::tools::permissions::protected::guard(root, &scan.git_dirs);
    for dir in &scan.git_dirs {
        // A bare repository's own files are its git folder.
        if dir.file_name().is_some_and(|n| n != ".git") {
            out.read_only.push(dir.clone());
        }
    }
    // A package store linked into the project (pnpm) can make thousands: each is a mount, so
    // past this many the rest stay writable (docs/permissions.md says so).
    out.read_only.extend(scan.linked_outside.into_iter().take(MAX_LINK_BINDS));
    out
}

/// Files with a hard link outside the project mounted read-only at most, per command.
const MAX_LINK_BINDS: usize = 10_000;

/// Error messages a confined command prints when the sandbox stopped it.
/// (`resource busy`: a file replaced by a rename where a read-only one is mounted.)
const FILE_MARKERS: &[&str] =
    &["permission denied", "operation not permitted", "read-only file system", "device or resource busy"];
const NETWORK_MARKERS: &[&str] = &[
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "couldn't connect to server",
    "could not connect to server",
    "failed to connect",
    "connection refused",
    "address family not supported",
];

/// If a confined command failed the way the sandbox makes commands fail, say so for the user
/// and the model (who can then ask for a run outside the sandbox). A heuristic, like Codex's:
/// the exit status and the error text, only for commands that ran confined.
pub fn denial(policy: &SandboxPolicy, output: &str, exit_code: i32) -> Option<String> {
    if exit_code == 0 || !policy.is_enforced() {
        return None;
    }
    let lower = output.to_lowercase();
    let refused = FILE_MARKERS.iter().any(|m| lower.contains(m));
    // `socket: Operation not permitted` is the seccomp filter, not a file.
    if !policy.network && (NETWORK_MARKERS.iter().any(|m| lower.contains(m)) || (refused && lower.contains("socket"))) {
        return Some(format!("the sandbox ({}) has the network off", policy.mode.label()));
    }
    if refused {
        let what = match policy.mode {
            SandboxMode::ReadOnly => "the sandbox (read-only) lets commands write nowhere",
            SandboxMode::WorkspaceWrite | SandboxMode::FullAccess => {
                "the sandbox (workspace-write) lets commands write only inside the project and the temp dirs, and not its protected paths (git configuration and hooks, .cairn/, .claude/, .codex/, .mcp.json)"
            }
        };
        return Some(what.to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_settings;

    fn project(shared: &str, local: &str) -> ProjectSettings {
        ProjectSettings {
            shared: parse_settings(shared).unwrap(),
            shared_path: PathBuf::from(".cairn/settings.toml"),
            local: parse_settings(local).unwrap(),
            local_path: PathBuf::from(".cairn/settings.local.toml"),
        }
    }

    #[test]
    fn the_default_is_workspace_write_without_network() {
        let p = SandboxPolicy::resolve(&SandboxConfig::default(), &project("", ""), None);
        assert_eq!((p.mode, p.network), (SandboxMode::WorkspaceWrite, false));
        assert!(p.notes.is_empty());
    }

    #[test]
    fn flag_then_local_then_user_and_a_committed_file_only_tightens() {
        let user = SandboxConfig {
            mode: Some(SandboxMode::FullAccess),
            network: Some(true),
            writable_roots: vec!["~/.cargo".into()],
            max_processes: Some(100),
            memory_limit_mb: None,
        };
        let p = SandboxPolicy::resolve(&user, &project("", "[sandbox]\nmode = \"read-only\"\n"), None);
        assert_eq!(p.mode, SandboxMode::ReadOnly);
        assert!(p.writable_roots[0].ends_with(".cargo") && p.writable_roots[0].is_absolute());
        let p = SandboxPolicy::resolve(
            &user,
            &project("", "[sandbox]\nmode = \"read-only\"\n"),
            Some(SandboxMode::WorkspaceWrite),
        );
        assert_eq!(p.mode, SandboxMode::WorkspaceWrite);
        let tighter = project("[sandbox]\nmode = \"workspace-write\"\nnetwork = false\n", "");
        let p = SandboxPolicy::resolve(&user, &tighter, None);
        assert_eq!((p.mode, p.network), (SandboxMode::WorkspaceWrite, false));
        let looser = project("[sandbox]\nmode = \"full-access\"\nnetwork = true\nwritable_roots = [\"/\"]\n", "");
        let p = SandboxPolicy::resolve(&SandboxConfig::default(), &looser, None);
        assert_eq!((p.mode, p.network), (SandboxMode::WorkspaceWrite, false));
        assert_eq!(p.writable_roots, Vec::<PathBuf>::new());
        assert_eq!(p.notes.len(), 3, "{:?}", p.notes);
        assert!(p.notes[0].contains("may only tighten"));
    }

    #[test]
    fn limits_come_from_the_config_and_a_committed_file_may_only_lower_them() {
        let user = SandboxConfig { max_processes: Some(100), memory_limit_mb: Some(0), ..SandboxConfig::default() };
        let p = SandboxPolicy::resolve(&user, &project("", ""), None);
        assert_eq!((p.max_processes, p.memory_limit_mb), (Some(100), None), "0 switches a limit off");
        let lower = project(
            "[sandbox]
max_processes = 50
memory_limit_mb = 512
",
            "",
        );
        let p = SandboxPolicy::resolve(&user, &lower, None);
        assert_eq!((p.max_processes, p.memory_limit_mb), (Some(50), Some(512)));
        let higher = project(
            "[sandbox]
max_processes = 500
memory_limit_mb = 0
",
            "",
        );
        let p = SandboxPolicy::resolve(&user, &higher, None);
        assert_eq!(p.max_processes, Some(100));
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        let p = SandboxPolicy::resolve(&SandboxConfig::default(), &project("", ""), None);
        assert!(p.max_processes.is_some_and(|n| n >= 256) && p.memory_limit_mb.is_some());
    }

    #[test]
    fn denials_are_recognised_only_for_confined_failures() {
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite);
        let enforced = policy.is_enforced();
        let seen = denial(&policy, "touch: cannot touch '/etc/x': Permission denied\n", 1);
        assert_eq!(seen.is_some(), enforced);
        assert_eq!(denial(&policy, "touch: cannot touch '/etc/x': Permission denied\n", 0), None);
        assert_eq!(denial(&policy, "error: test failed\n", 101), None);
        assert_eq!(denial(&policy, "curl: (6) Could not resolve host: example.com\n", 6).is_some(), enforced);
        policy.network = true;
        assert_eq!(denial(&policy, "curl: (6) Could not resolve host: example.com\n", 6), None);
        assert_eq!(denial(&SandboxPolicy::full_access(), "Permission denied", 1), None);
    }
}
