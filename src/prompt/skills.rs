//! Skills: folders with a `SKILL.md` (Claude Code's and Kontekst's layout) or single `NAME.md`
//! files (Kontekst's), in `.cairn/skills/`, `.claude/skills/` and the user's folders. Only
//! their names and descriptions go into the system prompt (its cached part); the `skill` tool
//! loads one when the model calls it, and the files beside it are the model's to read.

use std::path::{Path, PathBuf};

use super::arguments::Numbering;
use super::frontmatter::{self, Value};

/// One skill, as found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The `SKILL.md` or `NAME.md` file.
    pub path: PathBuf,
    /// The skill's folder, for the files beside `SKILL.md`; `None` for a single-file skill.
    pub dir: Option<PathBuf>,
    /// Kept out of the model's list (`disable-model-invocation`); still runs as `/NAME`.
    pub model_invocable: bool,
    /// Runs as `/NAME` (`user-invocable`, default yes).
    pub user_invocable: bool,
    pub numbering: Numbering,
}

/// A file that looked like a skill but could not be read, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillProblem {
    pub path: PathBuf,
    pub problem: String,
}

/// The skill folders of a project and a user, most specific first: a skill found earlier
/// hides one of the same name found later. `root` is `None` in a folder the user has not
/// trusted: only the user's folders count.
pub fn skill_dirs(root: Option<&Path>, user_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        root.map(|r| vec![r.join(".cairn").join("skills"), r.join(".claude").join("skills")]).unwrap_or_default();
    dirs.extend(user_dirs.iter().map(|d| d.join("skills")));
    dirs
}

/// Every skill in `dirs`, by name, the first of each name kept; and what could not be read.
pub fn discover(dirs: &[PathBuf]) -> (Vec<Skill>, Vec<SkillProblem>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let (file, folder) = if path.is_dir() {
                let file = path.join("SKILL.md");
                if !file.is_file() {
                    continue;
                }
                (file, Some(path.clone()))
            } else if path.extension().is_some_and(|e| e == "md") {
                (path.clone(), None)
            } else {
                continue;
            };
            match read_skill(&file, folder) {
                Ok(skill) if skills.iter().any(|s| s.name == skill.name) => {}
                Ok(skill) => skills.push(skill),
                Err(problem) => problems.push(SkillProblem { path: file, problem }),
            }
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, problems)
}

fn read_skill(file: &Path, dir: Option<PathBuf>) -> Result<Skill, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read it: {e}"))?;
    let fm = frontmatter::parse(&text)?;
    let stem = match &dir {
        Some(d) => d.file_name(),
        None => file.file_stem(),
    };
    let fallback = stem.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = fm.text("name").unwrap_or(fallback);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')) {
        return Err(format!("`{name}` is not a usable skill name (letters, digits, -, _, :)"));
    }
    let description = fm.text("description").unwrap_or_else(|| super::commands::first_line(&fm.body));
    let toml = text.trim_start_matches('\u{feff}').starts_with("+++");
    Ok(Skill {
        name,
        description,
        path: file.to_path_buf(),
        dir,
        model_invocable: !fm.get("disable_model_invocation").and_then(Value::flag).unwrap_or(false),
        user_invocable: fm.get("user_invocable").and_then(Value::flag).unwrap_or(true),
        numbering: if toml { Numbering::FromZero } else { Numbering::FromOne },
    })
}

/// The skills the model may load, as the system prompt lists them (empty: no layer at all).
pub fn listing(skills: &[Skill]) -> String {
    let listed: Vec<String> = skills
        .iter()
        .filter(|s| s.model_invocable)
        .map(|s| format!("- {}: {}", s.name, crate::conversation::clip(s.description.trim(), 300)))
        .collect();
    if listed.is_empty() {
        return String::new();
    }
    format!("{}\n\n{}", include_str!("../../assets/prompts/skills.md").trim_end(), listed.join("\n"))
}

/// The skill's instructions (its body, arguments substituted) and the files beside it.
pub fn load(skill: &Skill, args: &str) -> Result<String, String> {
    let text =
        std::fs::read_to_string(&skill.path).map_err(|e| format!("cannot read {}: {e}", skill.path.display()))?;
    let fm = frontmatter::parse(&text)?;
    let body = super::arguments::substitute(fm.body.trim(), args, skill.numbering);
    let mut out = format!("# Skill: {}\n\n{body}\n", skill.name);
    if let Some(dir) = &skill.dir {
        let files = files_of(dir);
        out.push_str(&format!("\nThe skill's folder is {}.", dir.display()));
        if !files.is_empty() {
            out.push_str(" Its files (read them with file_read when the instructions call for them):\n");
            for f in files {
                out.push_str(&format!("- {}\n", f.display()));
            }
        }
    }
    Ok(out)
}

/// Files under a skill folder (SKILL.md aside), at most a few levels and a few hundred.
fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(dir).max_depth(Some(4)).build();
    for entry in walker.flatten() {
        let path = entry.path();
        if path.is_file() && path.file_name().is_none_or(|n| n != "SKILL.md") {
            out.push(path.to_path_buf());
        }
        if out.len() >= 200 {
            break;
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_are_found_and_the_first_of_a_name_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("p");
        let user = tmp.path().join("u");
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            project.join(".claude/skills/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse forms.py.\n",
        );
        write(project.join(".claude/skills/pdf/forms.py"), "print()");
        write(
            user.join("skills/summarize.md"),
            "+++\nname = \"summarize\"\ndescription = \"Summarize a file\"\n+++\nSummarize $0 then $1\n",
        );
        write(user.join("skills/pdf/SKILL.md"), "---\ndescription: a user pdf skill\n---\nx");
        write(
            project.join(".cairn/skills/hidden/SKILL.md"),
            "---\ndescription: d\ndisable-model-invocation: true\n---\nx",
        );
        let (skills, problems) = discover(&skill_dirs(Some(&project), &[user]));
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["hidden", "pdf", "summarize"]);
        assert_eq!(skills[1].description, "Fill PDF forms", "the project's pdf hides the user's");
        let list = listing(&skills);
        assert!(list.contains("- pdf: Fill PDF forms") && list.contains("- summarize: Summarize a file"));
        assert!(!list.contains("hidden"));
        let loaded = load(&skills[1], "").unwrap();
        assert!(loaded.contains("Use forms.py.") && loaded.contains("forms.py\n"), "{loaded}");
        assert!(load(&skills[2], "a.txt short").unwrap().contains("Summarize a.txt then short"));
    }
}
