//! Rules from the files: the user's `config.toml`, the project's `.cairn/settings.toml` and
//! `.cairn/settings.local.toml`; and writing an approved rule to the project-local file
//! (keeping the file's other content and comments) while making sure git ignores it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::decide::Policy;
use super::rule::{Effect, Level, Rule};
use super::rules::{Origin, RuleError, Rules};
use crate::config::{Config, ProjectSettings, local_settings_path, parse_settings};

/// The rules of every file level plus the built-in ones. Command-line and session rules are
/// added to the result with [`Rules::add_flag`] and [`Rules::push`].
pub fn load_rules(config: &Config, config_path: &Path, project: &ProjectSettings) -> Result<Rules, RuleError> {
    let mut rules = Rules::new();
    rules.add_config(Level::User, &config.permissions, config_path)?;
    rules.add_config(Level::Project, &project.shared.permissions, &project.shared_path)?;
    rules.add_config(Level::ProjectLocal, &project.local.permissions, &project.local_path)?;
    Ok(rules)
}

/// The line `.cairn/.gitignore` holds so the local file never gets committed.
const IGNORE_LINE: &str = "settings.local.toml";

impl Policy {
    /// Write `rules` as allow rules to `.cairn/settings.local.toml` (what `p` in the dialog
    /// does) and put them in force now. Returns the file written. Nothing is written when the
    /// file cannot be read as settings: the error says what to fix.
    pub fn remember(&mut self, rules: &[Rule]) -> Result<PathBuf, String> {
        let path = write_local_rules(&self.root, rules)?;
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read back {}: {e}", path.display()))?;
        let settings = parse_settings(&text).map_err(|(line, _, m)| format!("{}, line {line}: {m}", path.display()))?;
        for written in &settings.permissions.allow {
            if let Some(rule) = rules.iter().find(|r| r.text() == written.text) {
                self.rules.push(
                    Effect::Allow,
                    Level::ProjectLocal,
                    rule.clone(),
                    Origin::File { path: path.clone(), line: written.line },
                );
            }
        }
        Ok(path)
    }
}

/// Append `rules` to `[permissions] allow` of the project-local settings file, creating the
/// file, its folder and the `.gitignore` entry as needed; rules already there are not repeated.
pub fn write_local_rules(root: &Path, rules: &[Rule]) -> Result<PathBuf, String> {
    let path = local_settings_path(root);
    let dir = path.parent().ok_or("the settings path has no folder")?.to_path_buf();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    // Refuse to add to a file cairn could not load anyway: the user fixes it first.
    parse_settings(&text).map_err(|(line, key, message)| {
        let key = key.map(|k| format!(", key `{k}`")).unwrap_or_default();
        format!("{}, line {line}{key}: {message}; fix it, then approve again (nothing was written)", path.display())
    })?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    let table = doc
        .entry("permissions")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| format!("{}: `permissions` is not a table", path.display()))?;
    let allow = table
        .entry("allow")
        .or_insert(toml_edit::Item::Value(toml_edit::Value::Array(toml_edit::Array::new())))
        .as_array_mut()
        .ok_or_else(|| format!("{}: `permissions.allow` is not a list", path.display()))?;
    for rule in rules {
        if !allow.iter().any(|v| v.as_str() == Some(rule.text())) {
            allow.push(rule.text());
        }
    }
    write_atomically(&path, doc.to_string().as_bytes())?;
    ensure_ignored(&dir)?;
    Ok(path)
}

/// Make sure `.cairn/.gitignore` ignores the local settings file. The entry lives next to the
/// file, so it holds whatever the project's own `.gitignore` says.
fn ensure_ignored(dir: &Path) -> Result<(), String> {
    let ignore = dir.join(".gitignore");
    let text = match std::fs::read_to_string(&ignore) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", ignore.display())),
    };
    if text.lines().any(|l| matches!(l.trim(), IGNORE_LINE | "/settings.local.toml" | "*.local.toml")) {
        return Ok(());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ignore)
        .map_err(|e| format!("cannot write {}: {e}", ignore.display()))?;
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    let header = if text.is_empty() { "# cairn: this checkout's own approvals, not for the repository\n" } else { "" };
    writeln!(file, "{sep}{header}{IGNORE_LINE}").map_err(|e| format!("cannot write {}: {e}", ignore.display()))
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().ok_or("the settings path has no folder")?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    tmp.write_all(bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path).map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Rule {
        Rule::parse(text).unwrap()
    }

    #[test]
    fn writing_keeps_the_file_and_ignores_it_in_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".cairn")).unwrap();
        let path = local_settings_path(root);
        std::fs::write(
            &path,
            "# my notes\n[sandbox]\nnetwork = true # for npm\n\n[permissions]\ndeny = [\"bash(rm *)\"]\n",
        )
        .unwrap();
        write_local_rules(root, &[rule("bash(cargo test *)")]).unwrap();
        write_local_rules(root, &[rule("bash(cargo test *)"), rule("file_edit(src/)")]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my notes\n[sandbox]\nnetwork = true # for npm\n"), "{text}");
        let settings = parse_settings(&text).unwrap();
        let allow: Vec<_> = settings.permissions.allow.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(allow, ["bash(cargo test *)", "file_edit(src/)"]);
        assert_eq!(settings.permissions.deny[0].text, "bash(rm *)");
        let ignore = std::fs::read_to_string(root.join(".cairn/.gitignore")).unwrap();
        assert_eq!(ignore.matches("settings.local.toml").count(), 1, "{ignore}");
    }

    #[test]
    fn a_broken_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".cairn")).unwrap();
        let path = local_settings_path(dir.path());
        std::fs::write(&path, "[permissions]\nallow = [\"bash(ls)\"\n").unwrap();
        let err = write_local_rules(dir.path(), &[rule("bash(cargo test *)")]).unwrap_err();
        assert!(err.contains("line") && err.contains("nothing was written"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[permissions]\nallow = [\"bash(ls)\"\n");
    }

    #[test]
    fn a_bad_rule_in_the_user_config_or_a_flag_is_named_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \"m\"\n[permissions]\ndeny = [\"file_write(.env)\", \"Bash(rm *)\"]\n").unwrap();
        let config = crate::config::load(&path).unwrap();
        let err = load_rules(&config, &path, &ProjectSettings::default()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:3: bad permission rule `Bash(rm *)`", path.display())), "{err}");
        assert!(err.contains("did you mean `bash`"), "{err}");

        let mut rules = Rules::new();
        rules.add_flag(Effect::Allow, "bash(git log *)").unwrap();
        let err = rules.add_flag(Effect::Deny, "file_write(").unwrap_err().to_string();
        assert!(err.starts_with("--deny: bad permission rule `file_write(`"), "{err}");
        assert_eq!(rules.iter().filter(|r| r.level == Level::Cli).count(), 1);
    }

    #[test]
    fn a_bad_rule_in_a_file_names_file_line_and_rule() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".cairn")).unwrap();
        std::fs::write(
            dir.path().join(".cairn/settings.toml"),
            "[permissions]\nallow = [\n  \"bash(ls *)\",\n  \"bsh(git log *)\",\n]\n",
        )
        .unwrap();
        let project = crate::config::load_project_settings(dir.path()).unwrap();
        let err = load_rules(&Config::default(), Path::new("/nowhere/config.toml"), &project).unwrap_err().to_string();
        assert!(
            err.contains("settings.toml:4") && err.contains("`bsh(git log *)`") && err.contains("no tool `bsh`"),
            "{err}"
        );
    }
}
