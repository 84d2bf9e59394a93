use std::path::{Path, PathBuf};

/// Facts about where the session runs. Detected once per session (git status is a snapshot
/// from the start of the session, not refreshed per request: a volatile system prompt would
/// invalidate the provider's cache of every message after it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub platform: String,
    /// Day granularity, so the text changes at most once a day.
    pub date: String,
    pub git_branch: Option<String>,
    /// `git status --short` at session start, capped.
    pub git_status: Option<String>,
}

/// Lines of `git status` kept in the prompt.
const MAX_STATUS_LINES: usize = 20;

impl Environment {
    pub fn detect(root: &Path, cwd: &Path, today: chrono::NaiveDate) -> Environment {
        Environment {
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            platform: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: today.format("%Y-%m-%d").to_string(),
            git_branch: git_branch(root),
            git_status: None,
        }
    }

    /// Also take a snapshot of `git status`, which runs a process: once per session.
    pub fn with_git_status(mut self) -> Environment {
        if self.git_branch.is_some() {
            self.git_status = git_status(&self.root);
        }
        self
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
        match self.git_status.as_deref() {
            Some("") => out.push_str("- Git status at session start: clean\n"),
            Some(status) => out.push_str(&format!("- Git status at session start:\n```\n{status}\n```\n")),
            None => {}
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
    let head_path = git_dir.join("HEAD");
    // A FIFO or a device there would hold the session's start forever.
    if !std::fs::metadata(&head_path).is_ok_and(|m| m.is_file() && m.len() < 4096) {
        return None;
    }
    let head = std::fs::read_to_string(head_path).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: refs/heads/") {
        Some(branch) => Some(branch.to_string()),
        None => Some(format!("detached at {}", crate::conversation::clip(head, 10).trim_end_matches('…'))),
    }
}

fn git_status(root: &Path) -> Option<String> {
    // Hardened: the repository's fsmonitor, hooks, filters and the like do not run.
    let text =
        super::git::run_git(root, &["status", "--short", "--untracked-files=normal", "--ignore-submodules=all"])?;
    let lines: Vec<&str> = text.lines().collect();
    let mut status = lines.iter().take(MAX_STATUS_LINES).copied().collect::<Vec<_>>().join("\n");
    if lines.len() > MAX_STATUS_LINES {
        status.push_str(&format!("\n… and {} more", lines.len() - MAX_STATUS_LINES));
    }
    Some(status)
}
