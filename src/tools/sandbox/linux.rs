//! Landlock and seccomp, for the sandbox on Linux.

use std::collections::BTreeMap;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

use super::{SandboxMode, SandboxPolicy, Support};

/// The newest Landlock ABI whose rights cairn asks for; older kernels enforce what they know
/// (best effort), newer ones are fine with it.
const TARGET_ABI: ABI = ABI::V6;

/// Device files every command may read and write (and ioctl, for terminals).
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"];

pub fn probe() -> Support {
    // SAFETY: landlock_create_ruleset with a null attribute and the VERSION flag only returns
    // the ABI version (or an error); it creates nothing.
    let abi =
        unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
    if abi < 1 {
        let reason = match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EOPNOTSUPP) => {
                "Landlock is built into this kernel but not enabled (add `landlock` to the lsm= boot parameter)"
            }
            _ => "this kernel has no Landlock (Linux 5.13 or newer with CONFIG_SECURITY_LANDLOCK is needed)",
        };
        return Support::Unavailable { reason: reason.into() };
    }
    let net = if abi >= 4 { "files and TCP" } else { "files; TCP only by seccomp (ABI 4 is needed for Landlock to)" };
    let seccomp = if target_arch().is_some() { ", seccomp for other sockets" } else { "" };
    Support::Available { detail: format!("Landlock ABI {abi} for {net}{seccomp}") }
}

fn target_arch() -> Option<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH).ok()
}

pub struct Confinement {
    ruleset: Option<RulesetCreated>,
    seccomp: Option<BpfProgram>,
}

impl Confinement {
    pub fn build(policy: &SandboxPolicy, writable: &[PathBuf]) -> std::io::Result<Option<Confinement>> {
        let ruleset =
            ruleset(policy, writable).map_err(|e| std::io::Error::other(format!("cannot set up the sandbox: {e}")))?;
        let seccomp = if policy.network { None } else { Some(network_filter()?) }.flatten();
        Ok(Some(Confinement { ruleset: Some(ruleset), seccomp }))
    }

    /// In the child, between fork and exec: no allocation, only system calls.
    pub fn apply(&mut self) -> std::io::Result<()> {
        if let Some(ruleset) = self.ruleset.take() {
            ruleset.restrict_self().map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(program) = &self.seccomp {
            seccompiler::apply_filter(program).map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    }
}

fn ruleset(policy: &SandboxPolicy, writable: &[PathBuf]) -> Result<RulesetCreated, landlock::RulesetError> {
    let all = AccessFs::from_all(TARGET_ABI);
    let read = AccessFs::from_read(TARGET_ABI);
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(all)?;
    if !policy.network {
        // No rule for any port: every TCP connect and bind is refused.
        ruleset =
            ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?.scope(Scope::AbstractUnixSocket)?;
    }
    let mut created = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], read))?
        .add_rules(path_beneath_rules(DEVICES, read | AccessFs::WriteFile | AccessFs::IoctlDev))?;
    match policy.mode {
        SandboxMode::WorkspaceWrite => created = created.add_rules(path_beneath_rules(writable, all))?,
        SandboxMode::ReadOnly | SandboxMode::FullAccess => {}
    }
    Ok(created)
}

/// With the network off: `socket()` for anything but a Unix socket fails with EPERM, and
/// io_uring (which can open sockets without `socket()`) is not available.
fn network_filter() -> std::io::Result<Option<BpfProgram>> {
    let Some(arch) = target_arch() else { return Ok(None) };
    let err = |e: seccompiler::BackendError| std::io::Error::other(format!("cannot build the network filter: {e}"));
    let not_unix =
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64).map_err(err)?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![SeccompRule::new(vec![not_unix]).map_err(err)?]),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).map_err(err)?;
    let program: BpfProgram = filter.try_into().map_err(err)?;
    Ok(Some(program))
}
