use std::path::{Path, PathBuf};

/// Where cairn keeps its files. With `CAIRN_HOME` everything lives in that one folder;
/// otherwise config goes to the platform config dir and data to the platform data dir.
#[derive(Clone, Debug)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
}

impl Paths {
    /// Resolve from the environment. Fails only when neither `CAIRN_HOME` nor a home directory
    /// can be found.
    pub fn from_env() -> Result<Paths, String> {
        if let Some(home) = std::env::var_os("CAIRN_HOME").filter(|v| !v.is_empty()) {
            return Ok(Paths::in_one_folder(Path::new(&home)));
        }
        let dirs = directories::ProjectDirs::from("dev", "cairn", "cairn").ok_or_else(|| {
            "cannot find a home directory for cairn's files; set CAIRN_HOME to a folder cairn may use".to_string()
        })?;
        Ok(Paths { config_file: dirs.config_dir().join("config.toml"), data_dir: dirs.data_dir().to_path_buf() })
    }

    pub fn in_one_folder(home: &Path) -> Paths {
        Paths { config_file: home.join("config.toml"), data_dir: home.to_path_buf() }
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("cairn.db")
    }

    pub fn truncations(&self) -> PathBuf {
        self.data_dir.join("truncations")
    }

    pub fn logs(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    /// The user's folders of custom commands and skills: the config folder, and Claude Code's
    /// `~/.claude` so existing ones carry over — unless `CAIRN_HOME` keeps cairn to one folder.
    pub fn user_extension_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.config_file.parent().map(Path::to_path_buf).into_iter().collect();
        let one_folder = std::env::var_os("CAIRN_HOME").is_some_and(|v| !v.is_empty());
        if !one_folder && let Some(base) = directories::BaseDirs::new() {
            dirs.push(base.home_dir().join(".claude"));
        }
        dirs
    }
}
