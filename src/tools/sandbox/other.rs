//! Systems without an OS sandbox in cairn yet: commands run unconfined and approvals hold.

use std::path::PathBuf;

use super::{SandboxPolicy, Support};

pub fn probe() -> Support {
    Support::Unavailable { reason: format!("cairn has no OS sandbox on {} yet", std::env::consts::OS) }
}

pub struct Confinement;

impl Confinement {
    pub fn build(_policy: &SandboxPolicy, _writable: &[PathBuf]) -> std::io::Result<Option<Confinement>> {
        Ok(None)
    }

    pub fn apply(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
