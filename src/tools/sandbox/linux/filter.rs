//! The seccomp filter of a sandboxed command: what Landlock does not cover.
//!
//! Always: no mount system calls (a command that is root in its user namespace could otherwise
//! make its read-only mounts writable again, `mount_setattr` having no Landlock hook), and no
//! `TIOCSTI`/`TIOCLINUX` (typing into a terminal). With the network off: `socket()` only for
//! Unix sockets, no io_uring (which opens sockets without `socket()`). In the read-only
//! sandbox: no attribute changes at all (`chmod`, `chown`, `utime`, extended attributes), even
//! where no mount namespace could make them fail.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

pub fn target_arch() -> Option<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH).ok()
}

/// `setxattrat` and `removexattrat` (Linux 6.13), numbered alike on every architecture.
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

const MOUNTS: &[i64] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_mount_setattr,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
];

#[cfg(target_arch = "x86_64")]
const ATTRIBUTES_LEGACY: &[i64] =
    &[libc::SYS_chmod, libc::SYS_chown, libc::SYS_lchown, libc::SYS_utime, libc::SYS_utimes, libc::SYS_futimesat];
#[cfg(not(target_arch = "x86_64"))]
const ATTRIBUTES_LEGACY: &[i64] = &[];

const ATTRIBUTES: &[i64] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_fchmodat2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_SETXATTRAT,
    SYS_REMOVEXATTRAT,
];

/// The filter, or `None` on an architecture seccompiler does not know.
pub fn filter(network: bool, read_only: bool) -> std::io::Result<Option<BpfProgram>> {
    let Some(arch) = target_arch() else { return Ok(None) };
    let err = |e: seccompiler::BackendError| std::io::Error::other(format!("cannot build the seccomp filter: {e}"));
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in MOUNTS {
        rules.insert(*call, Vec::new());
    }
    // `Ioctl` is an unsigned long with glibc and an int with musl: the cast is needed there.
    #[allow(clippy::unnecessary_cast)]
    let ioctl = |request: libc::Ioctl| -> Result<SeccompRule, seccompiler::BackendError> {
        SeccompRule::new(vec![SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request as u64)?])
    };
    rules.insert(libc::SYS_ioctl, vec![ioctl(libc::TIOCSTI).map_err(err)?, ioctl(libc::TIOCLINUX).map_err(err)?]);
    if !network {
        let not_unix =
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64).map_err(err)?;
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![not_unix]).map_err(err)?]);
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
    }
    if read_only {
        for call in ATTRIBUTES.iter().chain(ATTRIBUTES_LEGACY) {
            rules.insert(*call, Vec::new());
        }
    }
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).map_err(err)?;
    let program: BpfProgram = filter.try_into().map_err(err)?;
    Ok(Some(program))
}
