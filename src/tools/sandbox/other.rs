//! Systems without an OS sandbox in cairn yet: commands run unconfined and approvals hold.

use std::path::{Path, PathBuf};

use super::{SandboxPolicy, Support};

pub fn probe() -> Support {
    Support::Unavailable { reason: format!("cairn has no OS sandbox on {} yet", std::env::consts::OS) }
}

pub struct Confinement;

impl Confinement {
    pub fn build(
        _policy: &SandboxPolicy,
        _root: &Path,
        _writable: &[PathBuf],
        _read_only: &[PathBuf],
        _pinned: &[PathBuf],
    ) -> std::io::Result<Option<Confinement>> {
        Ok(None)
    }

    pub fn apply(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn sweep_ended() {}

pub fn describe_limits(_policy: &SandboxPolicy) -> String {
    "no process limit".into()
}
