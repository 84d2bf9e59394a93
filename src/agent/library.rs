//! The project's sessions and memories, and what a session's turns changed, as every front end
//! lists and changes them. The TUI's views (through the agent's queue), a headless `-p /forget
//! 7` (the same queue) and `cairn forget 7` (directly) all end here, so each check and each
//! message exists once.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::spend::add_cost;
use crate::config::Pricing;
use crate::conversation::Usage;
use crate::store::{DailyUsage, MemoryRecord, ProjectId, SessionSummary, Store, ToolDisplay, TurnInfo};

/// The approval a memory made global by hand (`g` in `/memories`) carries.
const MADE_GLOBAL_BY_HAND: &str = "you, in /memories";

/// Where a memory came from, for `/memories`: the session that saved it and, for a global
/// one, who approved that it is seen by every project.
pub fn memory_origin(m: &MemoryRecord) -> String {
    let from = match &m.session_id {
        Some(id) => format!("from session {}", id.get(..8).unwrap_or(id)),
        // Its session was deleted (or it predates sessions).
        None => "from an unknown session".to_string(),
    };
    format!("{from}{}", provenance_suffix(m))
}

/// `cairn memories`' note after a global memory's title: who approved it being global.
pub fn provenance_suffix(m: &MemoryRecord) -> String {
    match (m.global, &m.approved_by) {
        (true, Some(by)) => format!(" (global, approved by {by})"),
        // Made global before cairn kept who approved it.
        (true, None) => " (global, approval not recorded)".to_string(),
        (false, _) => String::new(),
    }
}

/// What a front end asks of the library (inside [`super::UserCommand::Library`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibraryRequest {
    /// `/sessions`, `cairn sessions`.
    Sessions,
    /// `/memories`, `cairn memories`.
    Memories,
    /// `/forget ID`, `cairn forget ID`, `d d` in the memories view: the id as typed.
    Forget(String),
    Pin {
        id: i64,
        pinned: bool,
    },
    /// Make a memory global (every project sees it) or this project's own.
    SetGlobal {
        id: i64,
        global: bool,
    },
    /// The session's turns, for the `/rewind` picker.
    Turns {
        session: String,
    },
    /// `/diff`, `cairn diff`: what the session, or one of its turns, changed.
    Diff {
        session: String,
        target: DiffTarget,
    },
    /// `/usage`, `cairn usage`: cost and tokens per day, project and session.
    Usage {
        days: u32,
    },
    /// The whole stored output of a call (the scrollable output view).
    ToolOutput {
        session: String,
        call_id: String,
    },
}

/// Which changes `/diff` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffTarget {
    /// Everything the session changed that still stands.
    Session,
    /// The latest turn that changed files.
    LastTurn,
    /// The turn with this number, as `/rewind` lists them.
    Turn(u32),
}

/// A diff and what it covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionDiff {
    /// "the session", "turn 3 (“fix the parser”)".
    pub title: String,
    /// A unified diff; empty when nothing changed.
    pub diff: String,
}

/// The library's answer (inside [`super::AgentEvent::Library`]).
#[derive(Clone, Debug, PartialEq)]
pub enum LibraryAnswer {
    Sessions(Result<Vec<SessionSummary>, LibraryError>),
    Memories(Result<Vec<MemoryRecord>, LibraryError>),
    /// A memory was forgotten, pinned or moved (or could not be): what to tell the user.
    MemoryChanged(Result<String, LibraryError>),
    Turns(Result<Vec<TurnInfo>, LibraryError>),
    Diff(Result<SessionDiff, LibraryError>),
    Usage(Result<UsageReport, LibraryError>),
    ToolOutput {
        call_id: String,
        output: Result<String, LibraryError>,
    },
}

/// Tokens and money, as `cairn usage` and `/usage` report them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spent {
    /// Dollars at the catalog's prices; `null` when no request had a price.
    pub cost_usd: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub requests: u64,
}

impl Spent {
    fn add(&mut self, usage: &Usage, requests: u64, cost: Option<f64>) {
        self.cost_usd = add_cost(self.cost_usd, cost);
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_read_input_tokens += usage.cache_read_input_tokens;
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens;
        self.requests += requests;
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UsageSession {
    pub id: String,
    pub title: String,
    pub project: String,
    #[serde(flatten)]
    pub spent: Spent,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UsageProject {
    pub root: String,
    pub sessions: u64,
    #[serde(flatten)]
    pub spent: Spent,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UsageDay {
    /// `YYYY-MM-DD`, local time.
    pub date: String,
    #[serde(flatten)]
    pub spent: Spent,
    pub projects: Vec<UsageProject>,
    pub sessions: Vec<UsageSession>,
}

/// Cost and tokens per day (newest first), and in each day per project and per session.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct UsageReport {
    pub days: Vec<UsageDay>,
}

impl UsageReport {
    /// Sum `rows` (per day, session and model) up to sessions, projects and days, pricing
    /// each model's part.
    pub fn from_rows(rows: &[DailyUsage], pricing: &Pricing) -> UsageReport {
        let mut days: Vec<UsageDay> = Vec::new();
        for row in rows {
            let cost = pricing.cost(&row.model, &row.usage);
            if days.last().is_none_or(|d| d.date != row.date) {
                days.push(UsageDay {
                    date: row.date.clone(),
                    spent: Spent::default(),
                    projects: Vec::new(),
                    sessions: Vec::new(),
                });
            }
            let Some(day) = days.last_mut() else { continue };
            day.spent.add(&row.usage, row.requests, cost);
            let session = match day.sessions.iter_mut().position(|s| s.id == row.session_id) {
                Some(i) => &mut day.sessions[i],
                None => {
                    day.sessions.push(UsageSession {
                        id: row.session_id.clone(),
                        title: row.title.clone(),
                        project: row.project_root.clone(),
                        spent: Spent::default(),
                    });
                    let Some(last) = day.sessions.last_mut() else { continue };
                    last
                }
            };
            let new_session = session.spent.requests == 0;
            session.spent.add(&row.usage, row.requests, cost);
            let project = match day.projects.iter_mut().position(|p| p.root == row.project_root) {
                Some(i) => &mut day.projects[i],
                None => {
                    day.projects.push(UsageProject {
                        root: row.project_root.clone(),
                        sessions: 0,
                        spent: Spent::default(),
                    });
                    let Some(last) = day.projects.last_mut() else { continue };
                    last
                }
            };
            project.sessions += u64::from(new_session);
            project.spent.add(&row.usage, row.requests, cost);
        }
        UsageReport { days }
    }
}

/// Why a request failed, in words for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LibraryError {
    /// What was asked for is malformed or not there: bad input (exit 2 on the command line).
    #[error("{0}")]
    Input(String),
    /// The database failed (exit 1).
    #[error("{0}")]
    Failed(String),
}

/// One project's sessions and memories in the store.
/// The report in words, one line each: a day, its projects, their sessions.
pub fn usage_lines(report: &UsageReport, days: u32) -> Vec<String> {
    use crate::conversation::format_tokens;
    let money = |s: &Spent| s.cost_usd.map(crate::config::format_usd).unwrap_or_else(|| "—".into());
    let tokens = |s: &Spent| {
        let prompt = s.input_tokens + s.cache_read_input_tokens + s.cache_creation_input_tokens;
        let cached = crate::conversation::percent_of(s.cache_read_input_tokens, prompt);
        format!("{} in · {} out · {cached}% cached", format_tokens(prompt), format_tokens(s.output_tokens))
    };
    if report.days.is_empty() {
        return vec![format!("No usage in the last {days} days.")];
    }
    let mut out = vec![format!("The last {days} days at the catalog's prices (— where a model has none)")];
    for day in &report.days {
        out.push(String::new());
        let requests = day.spent.requests;
        out.push(format!(
            "{}  {:>9}  {} · {requests} request{}",
            day.date,
            money(&day.spent),
            tokens(&day.spent),
            if requests == 1 { "" } else { "s" }
        ));
        for project in &day.projects {
            let n = project.sessions;
            out.push(format!(
                "  {:>9}  {} ({n} session{})",
                money(&project.spent),
                project.root,
                if n == 1 { "" } else { "s" }
            ));
            for session in day.sessions.iter().filter(|s| s.project == project.root) {
                let title = if session.title.is_empty() { "(untitled)" } else { &session.title };
                out.push(format!("    {:>9}  {}  {title}", money(&session.spent), session.id));
            }
        }
    }
    out
}

#[derive(Clone)]
pub struct Library {
    store: Arc<Store>,
    project: ProjectId,
    pricing: Pricing,
}

impl Library {
    pub fn new(store: Arc<Store>, project: ProjectId) -> Library {
        Library { store, project, pricing: Pricing::default() }
    }

    /// Price usage with the config's overrides and cache lifetime (the catalog alone without).
    pub fn with_pricing(mut self, pricing: Pricing) -> Library {
        self.pricing = pricing;
        self
    }

    /// Cost and tokens of every project over the last `days` days, per day, project and
    /// session.
    pub fn usage(&self, days: u32) -> Result<UsageReport, LibraryError> {
        let since = chrono::Utc::now() - chrono::Duration::days(i64::from(days.max(1)));
        let rows = self
            .store
            .daily_usage(&since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .map_err(|e| LibraryError::Failed(format!("could not read the usage: {e}")))?;
        Ok(UsageReport::from_rows(&rows, &self.pricing))
    }

    /// The whole stored output of `call_id` in `session` (a session of this project).
    pub fn tool_output(&self, session: &str, call_id: &str) -> Result<String, LibraryError> {
        let missing = || {
            LibraryError::Input("that call's output is not stored (it never ran, or the session is not saved)".into())
        };
        let session = self.store.resolve_session(self.project, session).map_err(|_| missing())?;
        match self.store.tool_output(&session.id, call_id) {
            Ok(Some(output)) => Ok(output),
            Ok(None) => Err(missing()),
            Err(e) => Err(LibraryError::Failed(format!("could not read the output: {e}"))),
        }
    }

    /// The project's sessions, most recently active first.
    pub fn sessions(&self) -> Result<Vec<SessionSummary>, LibraryError> {
        self.store
            .list_sessions(self.project)
            .map_err(|e| LibraryError::Failed(format!("could not read the sessions: {e}")))
    }

    /// The project's memories and the global ones, newest first.
    pub fn memories(&self) -> Result<Vec<MemoryRecord>, LibraryError> {
        self.store
            .memories(self.project)
            .map(crate::memory::with_quarantine)
            .map_err(|e| LibraryError::Failed(format!("could not read the memories: {e}")))
    }

    /// Delete the memory `id` names (`7` or `#7`); the answer says which memory it was.
    pub fn forget(&self, id: &str) -> Result<String, LibraryError> {
        let id = parse_id(id)?;
        let failed = |e: crate::store::StoreError| LibraryError::Failed(format!("could not delete memory #{id}: {e}"));
        let memory = self.store.memory(self.project, id).map_err(failed)?.ok_or_else(|| no_memory(id))?;
        if !self.store.delete_memory(self.project, id).map_err(failed)? {
            return Err(no_memory(id));
        }
        Ok(format!("Forgot memory #{id}: {}", memory.title))
    }

    pub fn pin(&self, id: i64, pinned: bool) -> Result<String, LibraryError> {
        let changed = self.store.set_memory_pinned(self.project, id, pinned).map_err(|e| change_failed(id, e))?;
        if !changed {
            return Err(no_memory(id));
        }
        Ok(format!("memory #{id} {}", if pinned { "pinned" } else { "unpinned" }))
    }

    /// Make a memory global (recording that the user did it) or this project's own.
    pub fn set_global(&self, id: i64, global: bool) -> Result<String, LibraryError> {
        // The user made it global by hand: that is their approval.
        let changed = self
            .store
            .set_memory_global(self.project, id, global, Some(MADE_GLOBAL_BY_HAND))
            .map_err(|e| change_failed(id, e))?;
        if !changed {
            return Err(no_memory(id));
        }
        Ok(if global {
            format!("memory #{id} is now global: every project sees it")
        } else {
            format!("memory #{id} now belongs to this project only")
        })
    }

    /// The session's turns still in the conversation, with the files each changed.
    pub fn turns(&self, session: &str) -> Result<Vec<TurnInfo>, LibraryError> {
        self.store.turns(session).map_err(|e| LibraryError::Failed(format!("could not read the turns: {e}")))
    }

    /// What the session (or one turn) changed, as a unified diff from its checkpoints.
    pub fn diff(&self, session: &str, target: DiffTarget) -> Result<SessionDiff, LibraryError> {
        let failed = |e: crate::store::StoreError| LibraryError::Failed(format!("could not read the checkpoints: {e}"));
        let turn = match target {
            DiffTarget::Session => {
                let diff = crate::checkpoint::session_diff(&self.store, session).map_err(failed)?;
                return Ok(SessionDiff { title: "this session".into(), diff });
            }
            DiffTarget::LastTurn => {
                let turns = self.turns(session)?;
                turns
                    .iter()
                    .rev()
                    .find(|t| t.files_changed + t.files_reverted > 0)
                    .or(turns.last())
                    .cloned()
                    .ok_or_else(|| {
                        LibraryError::Input(format!("session {session} has no turns yet; there is nothing to show"))
                    })?
            }
            DiffTarget::Turn(n) => {
                let turns = self.turns(session)?;
                let count = turns.len();
                turns.into_iter().find(|t| t.number == n).ok_or_else(|| {
                    LibraryError::Input(match count {
                        0 => format!("session {session} has no turns yet; there is nothing to show"),
                        c => format!("session {session} has no turn {n}; its turns are numbered 1 to {c}"),
                    })
                })?
            }
        };
        let diff = crate::checkpoint::turn_diff(&self.store, session, turn.user_seq).map_err(failed)?;
        Ok(SessionDiff { title: format!("turn {} (“{}”)", turn.number, turn.prompt), diff })
    }

    pub fn answer(&self, request: LibraryRequest) -> LibraryAnswer {
        match request {
            LibraryRequest::Sessions => LibraryAnswer::Sessions(self.sessions()),
            LibraryRequest::Memories => LibraryAnswer::Memories(self.memories()),
            LibraryRequest::Forget(id) => LibraryAnswer::MemoryChanged(self.forget(&id)),
            LibraryRequest::Pin { id, pinned } => LibraryAnswer::MemoryChanged(self.pin(id, pinned)),
            LibraryRequest::SetGlobal { id, global } => LibraryAnswer::MemoryChanged(self.set_global(id, global)),
            LibraryRequest::Turns { session } => LibraryAnswer::Turns(self.turns(&session)),
            LibraryRequest::Diff { session, target } => LibraryAnswer::Diff(self.diff(&session, target)),
            LibraryRequest::Usage { days } => LibraryAnswer::Usage(self.usage(days)),
            LibraryRequest::ToolOutput { session, call_id } => {
                let output = self.tool_output(&session, &call_id);
                LibraryAnswer::ToolOutput { call_id, output }
            }
        }
    }

    /// Diffs, durations and whether calls ran, for every call of a session: what a transcript
    /// shows of a loaded history besides the results. Empty when unreadable (the results
    /// still show).
    pub(super) fn tool_display(&self, session: &str) -> HashMap<String, ToolDisplay> {
        self.store.tool_display(session).unwrap_or_else(|e| {
            tracing::error!(error = %e, session, "cannot read the tool calls' display records");
            HashMap::new()
        })
    }
}

fn parse_id(id: &str) -> Result<i64, LibraryError> {
    id.trim().trim_start_matches('#').parse().map_err(|_| {
        LibraryError::Input(format!(
            "a memory id is a number, as /memories and `cairn memories` show it; {:?} is not one",
            id.trim()
        ))
    })
}

fn no_memory(id: i64) -> LibraryError {
    LibraryError::Input(format!("there is no memory #{id} in this project; /memories and `cairn memories` list them"))
}

fn change_failed(id: i64, e: crate::store::StoreError) -> LibraryError {
    LibraryError::Failed(format!("could not change memory #{id}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewMemory;

    fn library() -> (Library, Arc<Store>, ProjectId) {
        let store = Arc::new(Store::open_in_memory().unwrap());
        let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
        (Library::new(store.clone(), project), store, project)
    }

    fn remember(store: &Store, project: ProjectId, title: &str) -> i64 {
        store
            .create_memory(NewMemory {
                project: Some(project),
                kind: crate::conversation::MemoryKind::Decision,
                class: crate::conversation::RetentionClass::Durable,
                title,
                content: "the user prefers tabs",
                session_id: None,
                expires_at: None,
                approved_by: None,
            })
            .unwrap()
            .id
    }

    #[test]
    fn forget_takes_an_id_with_or_without_hash_and_names_what_it_deleted() {
        let (library, store, project) = library();
        let id = remember(&store, project, "use tabs");
        assert_eq!(library.forget(&format!("#{id}")), Ok(format!("Forgot memory #{id}: use tabs")));
        assert_eq!(store.memory(project, id).unwrap(), None);
        let again = library.forget(&id.to_string()).unwrap_err();
        assert!(matches!(&again, LibraryError::Input(m) if m.contains(&format!("no memory #{id}"))), "{again}");
        let bad = library.forget("tabs").unwrap_err();
        assert!(matches!(&bad, LibraryError::Input(m) if m.contains("\"tabs\" is not one")), "{bad}");
    }

    #[test]
    fn another_projects_memory_is_not_there_to_forget_pin_or_move() {
        let (library, store, _) = library();
        let other = store.project(std::path::Path::new("/tmp/other")).unwrap();
        let id = remember(&store, other, "theirs");
        for answer in [library.forget(&id.to_string()), library.pin(id, true), library.set_global(id, true)] {
            assert!(matches!(answer, Err(LibraryError::Input(_))), "{answer:?}");
        }
        assert!(store.memory(other, id).unwrap().is_some_and(|m| !m.pinned && !m.global));
    }

    #[test]
    fn usage_adds_up_per_day_project_and_session_at_catalog_prices() {
        let (library, store, project) = library();
        let new = || crate::store::NewSession {
            provider: crate::config::ProviderKind::Anthropic,
            model: "m",
            mode: crate::conversation::Mode::Edit,
        };
        let a = store.create_session(project, new()).unwrap();
        let b = store.create_session(project, new()).unwrap();
        let million = Usage { input_tokens: 1_000_000, ..Usage::default() };
        store.record_usage(&a.id, None, "turn", "claude-sonnet-4-5", &million).unwrap();
        store.record_usage(&a.id, None, "compaction", "claude-haiku-4-5", &million).unwrap();
        store.record_usage(&b.id, None, "turn", "llama3.2", &million).unwrap();
        let report = library.usage(1).unwrap();
        assert_eq!(report.days.len(), 1);
        let day = &report.days[0];
        assert_eq!(day.spent.cost_usd, Some(4.0), "sonnet input $3 + haiku input $1; llama has no price");
        assert_eq!((day.spent.requests, day.sessions.len(), day.projects.len()), (3, 2, 1));
        assert_eq!(day.projects[0].sessions, 2);
        assert_eq!(day.sessions.iter().find(|s| s.id == b.id).unwrap().spent.cost_usd, None);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["days"][0]["cost_usd"], 4.0);
        assert_eq!(json["days"][0]["sessions"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn pinning_and_scope_changes_say_what_they_did() {
        let (library, store, project) = library();
        let id = remember(&store, project, "use tabs");
        assert_eq!(library.pin(id, true), Ok(format!("memory #{id} pinned")));
        assert!(store.memory(project, id).unwrap().unwrap().pinned);
        let global = library.answer(LibraryRequest::SetGlobal { id, global: true });
        assert_eq!(
            global,
            LibraryAnswer::MemoryChanged(Ok(format!("memory #{id} is now global: every project sees it")))
        );
        let other = store.project(std::path::Path::new("/tmp/other")).unwrap();
        assert!(store.memory(other, id).unwrap().is_some(), "every project sees it");
        assert!(
            matches!(library.answer(LibraryRequest::Memories), LibraryAnswer::Memories(Ok(list)) if list.len() == 1)
        );
    }
}
