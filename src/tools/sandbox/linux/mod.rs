//! The sandbox on Linux: Landlock (files, TCP, signal and abstract-socket scopes), a mount
//! namespace in a user namespace of the command's own (everything outside the writable roots
//! read-only; protected paths and hard links out of the project read-only inside them),
//! seccomp (mount calls, terminal injection, sockets when the network is off, attribute
//! changes in the read-only sandbox), and limits on processes and memory. Everything is built
//! in cairn before the fork; the child, between fork and exec, only makes system calls.

mod filter;
mod limits;
mod mounts;
mod rules;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::RulesetCreated;
use seccompiler::BpfProgram;

use super::{SandboxPolicy, Support};

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
    let scopes = if abi >= 6 { ", signal and socket scopes" } else { "; no signal or socket scopes (ABI 6 is needed)" };
    let seccomp = if filter::target_arch().is_some() { ", seccomp" } else { "" };
    let mounts = match namespaces() {
        Ok(()) => ", a read-only mount namespace".to_string(),
        Err(why) => {
            format!("; no mount namespace ({why}): attribute changes outside the writable roots are not blocked")
        }
    };
    Support::Available { detail: format!("Landlock ABI {abi} for {net}{scopes}{seccomp}{mounts}") }
}

/// Whether a child can have a user and mount namespace of its own here; probed once.
fn namespaces() -> Result<(), String> {
    static PROBED: OnceLock<Result<(), String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            let plan = mounts::Plan::new(Path::new("/"), &[], &[], &[]).map_err(|e| e.to_string())?;
            let mut probe = std::process::Command::new("/bin/sh");
            probe.args(["-c", "exit 0"]).stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null());
            // SAFETY: the plan is applied in the forked child with system calls only.
            unsafe {
                use std::os::unix::process::CommandExt;
                probe.pre_exec(move || plan.apply());
            }
            match probe.status() {
                Ok(status) if status.success() => Ok(()),
                Ok(_) => Err("the probe failed".into()),
                Err(e) => Err(format!("user namespaces are not available: {e}")),
            }
        })
        .clone()
}

/// Whether commands get a mount namespace here.
pub fn has_namespaces() -> bool {
    namespaces().is_ok()
}

/// The limits' leftovers of processes that have ended, removed (see `limits::sweep_ended`).
pub fn sweep_ended() {
    limits::sweep_ended();
}

pub fn describe_limits(policy: &SandboxPolicy) -> String {
    limits::Limits::describe(policy.max_processes, has_namespaces())
}

pub struct Confinement {
    ruleset: Option<RulesetCreated>,
    seccomp: Option<BpfProgram>,
    mounts: Option<mounts::Plan>,
    limits: limits::Limits,
}

impl Confinement {
    /// `writable`: the folders the command may write (existing, canonical); `read_only`: paths
    /// inside them it may not; `pinned`: folders inside them it may not move or remove.
    pub fn build(
        policy: &SandboxPolicy,
        root: &Path,
        writable: &[PathBuf],
        read_only: &[PathBuf],
        pinned: &[PathBuf],
    ) -> std::io::Result<Option<Confinement>> {
        let ruleset = rules::ruleset(policy, root, writable)
            .map_err(|e| std::io::Error::other(format!("cannot set up the sandbox: {e}")))?;
        let read_only_sandbox = policy.mode == super::SandboxMode::ReadOnly;
        let seccomp = filter::filter(policy.network, read_only_sandbox)?;
        let mounts = if has_namespaces() { Some(mounts::Plan::new(root, writable, read_only, pinned)?) } else { None };
        let limits = limits::Limits::new(policy.max_processes, policy.memory_limit_mb, mounts.is_some());
        Ok(Some(Confinement { ruleset: Some(ruleset), seccomp, mounts, limits }))
    }

    /// In the child, between fork and exec: no allocation, only system calls.
    pub fn apply(&mut self) -> std::io::Result<()> {
        // Nothing cairn has open reaches the command: its terminal least of all.
        // SAFETY: close_range with CLOEXEC only marks descriptors; none is closed before exec.
        unsafe {
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC);
        }
        self.limits.apply_before_namespace()?;
        if let Some(plan) = &self.mounts {
            plan.apply()?;
        }
        self.limits.apply_in_namespace()?;
        if let Some(ruleset) = self.ruleset.take() {
            ruleset.restrict_self().map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(program) = &self.seccomp {
            seccompiler::apply_filter(program).map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    }
}
