//! Where an agent works, fixed for its life: the project and its folders, the config, the
//! store, and the folder truncated outputs are saved in.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::prompt::InstructionScan;
use crate::store::{ProjectId, Store};
use crate::trust::ProjectTrust;

#[derive(Clone)]
pub(super) struct Workplace {
    store: Arc<Store>,
    project: ProjectId,
    /// Canonical project root.
    root: PathBuf,
    cwd: PathBuf,
    config: Arc<Config>,
    /// Canonical, so paths the tools resolve compare equal.
    truncations_dir: PathBuf,
    /// Whether the project's files are in force (its instruction files among them).
    trust: ProjectTrust,
    /// The user's own folders: their instruction files come before the project's.
    user_dirs: Arc<[PathBuf]>,
}

impl Workplace {
    pub(super) fn new(
        store: Arc<Store>,
        project: ProjectId,
        root: PathBuf,
        cwd: PathBuf,
        config: Config,
        truncations_dir: PathBuf,
        trust: ProjectTrust,
    ) -> Workplace {
        // Created so it can be made canonical; a failure shows when a file is first saved there.
        let _ = std::fs::create_dir_all(&truncations_dir);
        let truncations_dir = truncations_dir.canonicalize().unwrap_or(truncations_dir);
        Workplace {
            store,
            project,
            root,
            cwd,
            config: Arc::new(config),
            truncations_dir,
            trust,
            user_dirs: Arc::new([]),
        }
    }

    /// The user's own folders (cairn's config folder, `~/.claude`), whose AGENTS.md and
    /// CLAUDE.md apply in every project.
    pub(super) fn with_user_dirs(self, user_dirs: Vec<PathBuf>) -> Workplace {
        Workplace { user_dirs: user_dirs.into(), ..self }
    }

    pub(super) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn project(&self) -> ProjectId {
        self.project
    }

    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    pub(super) fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    pub(super) fn trust(&self) -> &ProjectTrust {
        &self.trust
    }

    /// What the instruction files are and which were left out, with why: read from disk for each
    /// request, and what `/context` shows. In a folder the user has not trusted, the project's
    /// are all left out (the user's own still count).
    pub(super) fn instruction_scan(&self) -> InstructionScan {
        let scan = crate::prompt::scan_instruction_files(&self.root, &self.cwd, &self.user_dirs);
        if self.trust.is_trusted() { scan } else { scan.untrusted() }
    }

    pub(super) fn truncations_dir(&self) -> &Path {
        &self.truncations_dir
    }

    /// The data folder: where `truncations/`, `reports/` and `background/` live.
    pub(super) fn data_dir(&self) -> &Path {
        self.truncations_dir.parent().unwrap_or(&self.truncations_dir)
    }

    /// cairn's own folders, never checkpointed when they sit inside the project: the data
    /// folder (the database beside its session locks) and the saved outputs.
    pub(super) fn checkpoint_exclusions(&self) -> Vec<PathBuf> {
        let data = self.store.locks_dir().and_then(Path::parent).map(|d| d.canonicalize().unwrap_or(d.to_path_buf()));
        data.into_iter().chain([self.truncations_dir.clone()]).collect()
    }
}
