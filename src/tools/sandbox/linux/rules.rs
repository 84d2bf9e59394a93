//! The Landlock ruleset of a sandboxed command: what it may read, write and execute, which
//! TCP ports it may use, and its scopes (no signals to processes outside the sandbox, no
//! abstract Unix sockets created outside it).
//!
//! Reads: everywhere but `/dev` (only the harmless devices there: no terminal, so nothing can
//! type into or read cairn's own), or — for plan mode and commands run unasked because they
//! only read — only the project, the system folders and what a rule allowed.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use crate::tools::sandbox::{SandboxMode, SandboxPolicy};

/// The newest Landlock ABI whose rights cairn asks for; older kernels enforce what they know
/// (best effort), newer ones are fine with it.
pub const TARGET_ABI: ABI = ABI::V6;

/// Device files every command may read and write. No terminal: `/dev/tty`, `/dev/pts` and
/// `/dev/ptmx` stay closed, so a command cannot write escapes to cairn's terminal or type
/// into it.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// System folders a read-only command may read: programs, libraries, the kernel's views.
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sys",
    "/nix/store",
    "/run/current-system",
];

/// Files of `/etc` programs read to run (users and groups for `ls -l`, the dynamic linker's
/// cache, locales, time zones, git's system configuration, `file`'s magic): not all of `/etc`,
/// which holds secrets root can read.
const ETC: &[&str] = &[
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/gitconfig",
    "/etc/gitattributes",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/mime.types",
    "/etc/terminfo",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/alternatives",
    "/etc/mtab",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/inputrc",
    "/etc/debian_version",
];

/// The folders a confined read may reach: the project, the system, the folders of PATH that
/// hold programs (not the home folder itself), the repository's git folder when it lives
/// elsewhere (a linked worktree), and `extra`.
pub fn readable(root: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut out: Vec<PathBuf> = SYSTEM.iter().chain(ETC).map(PathBuf::from).collect();
    out.push(root.to_path_buf());
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            let too_broad = dir.parent().is_none() || Some(&dir) == home.as_ref() || root.starts_with(&dir);
            if dir.is_absolute() && !too_broad && !dir.starts_with("/tmp") && !dir.starts_with(root) {
                out.push(dir);
            }
        }
    }
    out.extend(linked_git_dirs(root));
    out.extend(extra.iter().cloned());
    out
}

/// `.git` as a file (`gitdir: …`): the worktree's git folder and the repository's common one.
fn linked_git_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join(".git")) else { return Vec::new() };
    let Some(dir) = text.lines().find_map(|l| l.strip_prefix("gitdir:")).map(|d| root.join(d.trim())) else {
        return Vec::new();
    };
    let mut out = vec![dir.clone()];
    if let Ok(common) = std::fs::read_to_string(dir.join("commondir")) {
        out.push(dir.join(common.trim()));
    }
    out
}

/// Every top-level folder but `/dev`: reads anywhere except the devices.
fn everywhere_but_devices() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/") else { return vec![PathBuf::from("/")] };
    entries.flatten().map(|e| e.path()).filter(|p| p != Path::new("/dev")).collect()
}

pub fn ruleset(
    policy: &SandboxPolicy,
    root: &Path,
    writable: &[PathBuf],
) -> Result<RulesetCreated, landlock::RulesetError> {
    let all = AccessFs::from_all(TARGET_ABI);
    let read = AccessFs::from_read(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    if !policy.network {
        // No rule for any port: every TCP connect and bind is refused.
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let readable = if policy.confine_reads { readable(root, &policy.readable) } else { everywhere_but_devices() };
    let mut created = ruleset
        .create()?
        .add_rules(path_beneath_rules(&readable, read))?
        .add_rules(path_beneath_rules(DEVICES, read | AccessFs::WriteFile | AccessFs::IoctlDev))?;
    match policy.mode {
        SandboxMode::WorkspaceWrite => created = created.add_rules(path_beneath_rules(writable, all))?,
        SandboxMode::ReadOnly | SandboxMode::FullAccess => {}
    }
    Ok(created)
}
