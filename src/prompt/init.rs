//! `/init`: the prompt that has the model write (or improve) the project's AGENTS.md, with a
//! survey of the project gathered by reading names only — the instruction, build and CI files
//! present and the top-level layout — so the model starts from them instead of exploring
//! blindly. Runs nothing and reads no file's contents.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

const INIT: &str = include_str!("../../assets/prompts/init.md");

/// Instruction files of any agent, as the project may have them.
const INSTRUCTION_FILES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
    "README.md",
];

/// Files that say how a project builds, tests and checks itself.
const BUILD_FILES: &[&str] = &[
    "Cargo.toml",
    "rust-toolchain.toml",
    "rustfmt.toml",
    ".rustfmt.toml",
    "clippy.toml",
    "package.json",
    "pnpm-workspace.yaml",
    "tsconfig.json",
    "deno.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "tox.ini",
    "noxfile.py",
    "ruff.toml",
    "go.mod",
    "Makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "CMakeLists.txt",
    "meson.build",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "Gemfile",
    "composer.json",
    "mix.exs",
    "Dockerfile",
    "docker-compose.yml",
    "compose.yaml",
    ".pre-commit-config.yaml",
    ".editorconfig",
    ".gitlab-ci.yml",
    ".ci/run",
];

/// Folders whose every file is a CI or hook configuration worth reading.
const CI_FOLDERS: &[&str] = &[".github/workflows", ".circleci", ".buildkite"];

/// The walk of the layout stops here: enough to say where the code is in any project.
const MAX_WALKED: usize = 20_000;
/// Top-level entries listed at most.
const MAX_TOP: usize = 40;

/// What the survey found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectSurvey {
    pub git: bool,
    /// Present instruction files, with their sizes in bytes.
    pub instructions: Vec<(String, u64)>,
    pub build: Vec<(String, u64)>,
    /// Top-level folders with how many files each holds (git-ignored ones left out), and
    /// top-level files (`None`).
    pub top: BTreeMap<String, Option<usize>>,
    /// The walk stopped at [`MAX_WALKED`] entries.
    pub partial: bool,
}

impl ProjectSurvey {
    /// Whether an AGENTS.md is already there (the user's, to improve).
    pub fn has_agents_md(&self) -> bool {
        self.instructions.iter().any(|(name, _)| name == "AGENTS.md")
    }
}

fn size_of(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len())
}

/// Survey `root` (the project root), reading names and sizes only.
pub fn survey(root: &Path) -> ProjectSurvey {
    let mut s = ProjectSurvey { git: root.join(".git").exists(), ..ProjectSurvey::default() };
    let present = |names: &[&str]| -> Vec<(String, u64)> {
        names.iter().filter_map(|n| size_of(&root.join(n)).map(|size| (n.to_string(), size))).collect()
    };
    s.instructions = present(INSTRUCTION_FILES);
    if let Ok(rules) = std::fs::read_dir(root.join(".cursor/rules")) {
        for entry in rules.flatten() {
            let name = format!(".cursor/rules/{}", entry.file_name().to_string_lossy());
            if let Some(size) = size_of(&entry.path()) {
                s.instructions.push((name, size));
            }
        }
    }
    s.build = present(BUILD_FILES);
    for folder in CI_FOLDERS {
        let Ok(entries) = std::fs::read_dir(root.join(folder)) else { continue };
        let mut found: Vec<(String, u64)> = entries
            .flatten()
            .filter_map(|e| {
                size_of(&e.path()).map(|size| (format!("{folder}/{}", e.file_name().to_string_lossy()), size))
            })
            .collect();
        found.sort();
        s.build.extend(found);
    }
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for (walked, entry) in walk.flatten().enumerate() {
        if walked >= MAX_WALKED {
            s.partial = true;
            break;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        let mut parts = relative.components();
        let Some(first) = parts.next() else { continue };
        let name = first.as_os_str().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let nested = parts.next().is_some();
        if !nested && !is_dir {
            s.top.entry(name).or_insert(None);
        } else {
            let count = s.top.entry(format!("{name}/")).or_insert(Some(0));
            if nested && !is_dir {
                *count = Some(count.unwrap_or(0) + 1);
            }
        }
    }
    s
}

fn sizes(list: &[(String, u64)]) -> String {
    let shown: Vec<String> = list.iter().map(|(name, size)| format!("{name} ({})", bytes(*size))).collect();
    if shown.is_empty() { "none".into() } else { shown.join(", ") }
}

fn bytes(n: u64) -> String {
    if n < 1024 { format!("{n} B") } else { format!("{:.1} KB", n as f64 / 1024.0) }
}

/// The line a stored `/init` prompt starts with: the session is titled by it, and an export
/// shows it with the instructions folded under it.
pub const INIT_LINE: &str = "/init";

/// The prompt `/init` sends: the command as typed, the instructions, then the survey of `root`.
pub fn init_prompt(root: &Path, survey: &ProjectSurvey) -> String {
    let mut out = format!("{INIT_LINE}\n\n{}", INIT.trim_end());
    let _ = write!(out, "\n\n<project_survey>\nRoot: {}", root.display());
    out.push_str(if survey.git { " (a git repository)\n" } else { " (not a git repository)\n" });
    let _ = writeln!(out, "Instruction files: {}", sizes(&survey.instructions));
    if survey.has_agents_md() {
        out.push_str("AGENTS.md exists: improve it with file_edit, keeping the user's content.\n");
    } else {
        out.push_str("AGENTS.md does not exist yet: create it with file_write.\n");
    }
    let _ = writeln!(out, "Build, test and CI files: {}", sizes(&survey.build));
    let mut top: Vec<String> = survey
        .top
        .iter()
        .take(MAX_TOP)
        .map(|(name, files)| match files {
            Some(n) => format!("{name} ({n} file{})", if *n == 1 { "" } else { "s" }),
            None => name.clone(),
        })
        .collect();
    if survey.top.len() > MAX_TOP {
        top.push(format!("… and {} more", survey.top.len() - MAX_TOP));
    }
    let _ = writeln!(out, "Top level (git-ignored files left out): {}", top.join(", "));
    if survey.partial {
        let _ = writeln!(out, "(The count stopped after {MAX_WALKED} entries: a large tree.)");
    }
    out.push_str("</project_survey>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_survey_names_the_files_that_say_how_a_project_builds_and_where_its_code_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/inner")).unwrap();
        std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        std::fs::write(root.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("src/inner/a.rs"), "").unwrap();
        std::fs::write(root.join("target/junk"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "Use tabs.\n").unwrap();
        let survey = survey(root);
        assert!(!survey.has_agents_md());
        assert_eq!(survey.instructions, vec![("CLAUDE.md".to_string(), 10)]);
        let build: Vec<&str> = survey.build.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(build, ["Cargo.toml", ".github/workflows/ci.yml"]);
        assert_eq!(survey.top.get("src/"), Some(&Some(2)));
        assert!(!survey.top.contains_key("target/"), "git-ignored folders are left out: {:?}", survey.top);
        let prompt = init_prompt(root, &survey);
        assert!(prompt.contains("AGENTS.md does not exist yet"), "{prompt}");
        assert!(prompt.contains("src/ (2 files)") && prompt.contains("Cargo.toml (21 B)"), "{prompt}");

        std::fs::write(root.join("AGENTS.md"), "# Mine\n").unwrap();
        let prompt = init_prompt(root, &super::survey(root));
        assert!(prompt.contains("AGENTS.md exists: improve it with file_edit"), "{prompt}");
    }
}
