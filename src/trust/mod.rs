//! Folder trust: nothing a project's files configure runs, and none of its instructions reach
//! the model, until the user trusts the folder.
//!
//! [`check`] is the one check every front end makes before it starts an agent: it lists what
//! the project's files would run or tell the model ([`Inventory`]) and compares what runs with
//! the user's record of the folder (`[trust."PATH"]` in their `config.toml`: a digest of each
//! thing that runs). The answer is a [`ProjectTrust`] — the only way to get one — which the agent
//! setup requires: hooks, MCP servers, custom commands, skills, agent types, instruction files,
//! allow rules and sandbox widening of the project are loaded only when it says trusted. A front
//! end only shows the [`TrustQuestion`] and passes the user's answer on (the interface's dialog,
//! headless `--trust`), so a new front end gets trust without logic of its own.
//!
//! Reads the project's and the user's files and writes the user's config; runs nothing.

mod folders;
mod items;
mod settings;

pub use items::{Item, Origin};
// Named by the tests; elsewhere an item's kind is only read through its label.
#[cfg(test)]
pub use items::Kind;

use std::path::{Path, PathBuf};

use crate::config::{Config, ConfigError, TrustEntry};
use settings::SettingsText;

/// What a folder's files configure that runs or instructs, runnable things first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    pub items: Vec<Item>,
}

impl Inventory {
    /// The project's: its two settings files, its command, skill and agent folders, and the
    /// instruction files that apply in `cwd`. A settings file that cannot be read is an error
    /// (the same one starting cairn would give).
    pub fn project(root: &Path, cwd: &Path) -> Result<Inventory, ConfigError> {
        let settings = crate::config::load_project_settings(root)?;
        let mut items = Vec::new();
        let files = [
            (".cairn/settings.toml", &settings.shared_path, &settings.shared, None),
            (".cairn/settings.local.toml", &settings.local_path, &settings.local, Some(&settings.local.sandbox)),
        ];
        for (file, path, parsed, sandbox) in files {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            items.extend(
                SettingsText {
                    file,
                    text: &text,
                    origin: Origin::Project,
                    hooks: &parsed.hooks,
                    servers: &parsed.mcp_servers,
                    allow: &parsed.permissions.allow,
                    sandbox,
                }
                .items(),
            );
        }
        let dirs = |name: &str| [root.join(".cairn").join(name), root.join(".claude").join(name)];
        items.extend(folders::command_items(&dirs("commands"), Some(root), Origin::Project));
        items.extend(folders::skill_items(&dirs("skills"), Some(root), Origin::Project));
        items.extend(folders::agent_type_items(Some(root), None, Origin::Project));
        items.extend(folders::instruction_items(root, cwd));
        Ok(Inventory::sorted(items))
    }

    /// The user's own, always in force: `config.toml`'s hooks, servers and allow rules, and the
    /// commands, skills and agent types of the user's folders.
    pub fn user(config: &Config, config_file: &Path, user_dirs: &[PathBuf]) -> Inventory {
        let text = std::fs::read_to_string(config_file).unwrap_or_default();
        let file = config_file.display().to_string();
        let mut items = SettingsText {
            file: &file,
            text: &text,
            origin: Origin::User,
            hooks: &config.hooks,
            servers: &config.mcp_servers,
            allow: &config.permissions.allow,
            sandbox: None,
        }
        .items();
        let dirs = |name: &str| user_dirs.iter().map(|d| d.join(name)).collect::<Vec<_>>();
        items.extend(folders::command_items(&dirs("commands"), None, Origin::User));
        items.extend(folders::skill_items(&dirs("skills"), None, Origin::User));
        let agents = config_file.parent().map(|d| d.join("agents"));
        items.extend(folders::agent_type_items(None, agents.as_deref(), Origin::User));
        Inventory::sorted(items)
    }

    fn sorted(mut items: Vec<Item>) -> Inventory {
        items.sort_by_key(|i| (!i.runs(), i.kind));
        Inventory { items }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Something in it runs (or runs unasked), not only instructs.
    pub fn runs_anything(&self) -> bool {
        self.items.iter().any(Item::runs)
    }

    /// The record of trusting exactly this.
    fn record(&self) -> TrustEntry {
        TrustEntry {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            items: self.items.iter().filter_map(|i| Some((i.id.clone(), i.digest.clone()?))).collect(),
        }
    }
}

/// Whether the project's files are in force for this run. Only [`check`] and a
/// [`TrustQuestion`]'s answer make one.
#[derive(Clone, Debug)]
pub struct ProjectTrust {
    trusted: bool,
    root: PathBuf,
    config_file: PathBuf,
    /// What to tell the user when the session starts: what of the folder's was left out.
    notes: Vec<String>,
}

impl ProjectTrust {
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Said when the session starts (by the agent, so every front end shows it).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// More to say at the start: what of the folder's settings was held back.
    pub fn note(&mut self, notes: impl IntoIterator<Item = String>) {
        self.notes.extend(notes);
    }

    /// A folder nobody has trusted, for the tests of what an untrusted folder leaves out.
    #[cfg(test)]
    pub fn untrusted_for_tests(root: &Path) -> ProjectTrust {
        ProjectTrust {
            trusted: false,
            root: root.to_path_buf(),
            config_file: root.join("no-config.toml"),
            notes: Vec::new(),
        }
    }

    /// What cairn itself just wrote to the project's settings at the user's word (a rule approved
    /// for the project, servers `/mcp import` copied) joins the folder's record, so the next start
    /// does not ask about the user's own act. Only in a trusted folder; only the items `wrote`
    /// picks (what anything else changed meanwhile is still asked about).
    pub fn adopt(&self, wrote: impl Fn(&Item) -> bool) -> Result<(), String> {
        if !self.trusted {
            return Ok(());
        }
        let inventory = Inventory::project(&self.root, &self.root).map_err(|e| e.to_string())?;
        let mut entry = crate::config::read_trust(&self.config_file, &self.root)
            .unwrap_or_else(|| TrustEntry { at: Inventory::default().record().at, items: Default::default() });
        let before = entry.clone();
        for item in inventory.items.iter().filter(|i| wrote(i)) {
            if let Some(digest) = &item.digest {
                entry.items.insert(item.id.clone(), digest.clone());
            }
        }
        if entry == before {
            return Ok(());
        }
        crate::config::record_trust(&self.config_file, &self.root, &entry)
    }
}

/// What runs that the user has not trusted as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub item: Item,
    /// Not there when the folder was trusted (else: there, but different).
    pub new: bool,
}

/// The question a front end puts to the user: trust this folder?
#[derive(Clone, Debug)]
pub struct TrustQuestion {
    /// Everything the folder's files configure.
    pub inventory: Inventory,
    /// Empty the first time; else what runs that is new or changed since the user trusted it.
    pub changes: Vec<Change>,
    /// When the user trusted it before, if they did.
    pub trusted_at: Option<String>,
    root: PathBuf,
    config_file: PathBuf,
}

impl TrustQuestion {
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user says yes: recorded in their config, and everything is in force.
    pub fn trust(self) -> Result<ProjectTrust, String> {
        crate::config::record_trust(&self.config_file, &self.root, &self.inventory.record())
            .map_err(|e| format!("could not record that you trust {}: {e}", self.root.display()))?;
        Ok(ProjectTrust { trusted: true, root: self.root, config_file: self.config_file, notes: Vec::new() })
    }

    /// Untrusted, while the question waits (to check the files before a screen opens).
    pub fn undecided(&self) -> ProjectTrust {
        ProjectTrust {
            trusted: false,
            root: self.root.clone(),
            config_file: self.config_file.clone(),
            notes: Vec::new(),
        }
    }

    /// The user says no (or cannot be asked): nothing of the project's is in force, and the
    /// session starts by saying so.
    pub fn decline(self) -> ProjectTrust {
        let notes = vec![self.left_out()];
        ProjectTrust { trusted: false, root: self.root, config_file: self.config_file, notes }
    }

    /// Something would run if the folder were trusted: headless refuses to start without
    /// `--trust` then.
    pub fn runs_anything(&self) -> bool {
        self.inventory.runs_anything()
    }

    /// Why a headless run does not start, what would have run, and what to do.
    pub fn refusal(&self) -> String {
        let root = self.root.display();
        let mut out = match &self.trusted_at {
            Some(_) => format!("what {root} would run changed since you trusted it; nothing was run:\n"),
            None => format!("{root} is not a trusted folder, and its files would run commands; nothing was run:\n"),
        };
        for line in self.lines() {
            out.push_str(&format!("  {line}\n"));
        }
        out.push_str(&format!(
            "trust it with --trust (recorded in {}), or open it in cairn and answer the question",
            self.config_file.display()
        ));
        out
    }

    /// The changes (`new: …`, `changed: …`), or on a first question every item that runs.
    pub fn lines(&self) -> Vec<String> {
        if self.changes.is_empty() {
            return self.inventory.items.iter().filter(|i| i.runs()).map(Item::describe).collect();
        }
        self.changes
            .iter()
            .map(|c| format!("{}: {}", if c.new { "new" } else { "changed" }, c.item.describe()))
            .collect()
    }

    /// Said once when a run goes on without the folder's instructions.
    pub fn left_out(&self) -> String {
        let names: Vec<String> =
            self.inventory.items.iter().map(|i| format!("{} {}", i.kind.label(), i.file)).collect();
        format!(
            "{} is not a trusted folder: its files are not read ({}); pass --trust to trust it",
            self.root.display(),
            names.join(", ")
        )
    }
}

/// The one check: settled (nothing to ask, or trusted as it is), or a question for the user.
pub enum TrustCheck {
    Settled(ProjectTrust),
    Ask(TrustQuestion),
}

/// Why a front end that cannot ask does not start.
#[derive(Debug)]
pub enum NotTrusted {
    /// The folder's files would run something and the user has not trusted them (as they are
    /// now): what would have run, and what to do.
    Refused(String),
    /// `--trust` was given, but the answer could not be written.
    NotRecorded(String),
}

impl TrustCheck {
    /// The folder's trust while the question (if any) waits: untrusted unless settled.
    pub fn provisional(&self) -> ProjectTrust {
        match self {
            TrustCheck::Settled(trust) => trust.clone(),
            TrustCheck::Ask(question) => question.undecided(),
        }
    }

    /// The answer where nobody can be asked (headless): `--trust` trusts the folder; without it
    /// a folder whose files would run something does not start, and one that only instructs
    /// goes on without its files (and says so when the session starts).
    pub fn without_asking(self, trust_flag: bool) -> Result<ProjectTrust, NotTrusted> {
        match self {
            TrustCheck::Settled(trust) => Ok(trust),
            TrustCheck::Ask(question) if trust_flag => question.trust().map_err(NotTrusted::NotRecorded),
            TrustCheck::Ask(question) if question.runs_anything() => Err(NotTrusted::Refused(question.refusal())),
            TrustCheck::Ask(question) => Ok(question.decline()),
        }
    }
}

/// Check the folder `root` (seen from `cwd`) against the user's record in `config` (read from
/// `config_file`, where an answer is written).
pub fn check(config: &Config, config_file: &Path, root: &Path, cwd: &Path) -> Result<TrustCheck, ConfigError> {
    let inventory = Inventory::project(root, cwd)?;
    let settled = |trusted| ProjectTrust {
        trusted,
        root: root.to_path_buf(),
        config_file: config_file.to_path_buf(),
        notes: Vec::new(),
    };
    let record = config.trust.get(&root.display().to_string());
    let question = |changes, trusted_at| TrustQuestion {
        inventory: inventory.clone(),
        changes,
        trusted_at,
        root: root.to_path_buf(),
        config_file: config_file.to_path_buf(),
    };
    let Some(record) = record else {
        if inventory.is_empty() {
            return Ok(TrustCheck::Settled(settled(true)));
        }
        return Ok(TrustCheck::Ask(question(Vec::new(), None)));
    };
    let changes: Vec<Change> = inventory
        .items
        .iter()
        .filter_map(|item| {
            let digest = item.digest.as_ref()?;
            match record.items.get(&item.id) {
                Some(known) if known == digest => None,
                Some(_) => Some(Change { item: item.clone(), new: false }),
                None => Some(Change { item: item.clone(), new: true }),
            }
        })
        .collect();
    if changes.is_empty() {
        return Ok(TrustCheck::Settled(settled(true)));
    }
    Ok(TrustCheck::Ask(question(changes, Some(record.at.clone()))))
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
