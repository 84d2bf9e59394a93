use std::path::{Path, PathBuf};

/// Facts about where the session runs, rendered after the cache boundary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub platform: String,
    /// Day granularity, so the text changes at most once a day.
    pub date: String,
    pub git_branch: Option<String>,
}

impl Environment {
    pub fn detect(root: &Path, cwd: &Path, today: chrono::NaiveDate) -> Environment {
        Environment {
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            platform: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: today.format("%Y-%m-%d").to_string(),
            git_branch: git_branch(root),
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::from("# Environment\n");
        out.push_str(&format!("- Project root: {}\n", self.root.display()));
        if self.cwd != self.root {
            out.push_str(&format!("- Working directory: {}\n", self.cwd.display()));
        }
        out.push_str(&format!("- Platform: {}\n", self.platform));
        out.push_str(&format!("- Date: {}\n", self.date));
        match &self.git_branch {
            Some(branch) => out.push_str(&format!("- Git branch: {branch}\n")),
            None => out.push_str("- Not a git repository\n"),
        }
        out
    }
}

/// The checked-out branch, read from `.git/HEAD` (following a `gitdir:` file for worktrees);
/// a detached head shows its short hash.
fn git_branch(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let dir = text.trim().strip_prefix("gitdir:")?.trim();
        root.join(dir)
    } else {
        dot_git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: refs/heads/") {
        Some(branch) => Some(branch.to_string()),
        None => Some(format!("detached at {}", crate::conversation::clip(head, 10).trim_end_matches('…'))),
    }
}
