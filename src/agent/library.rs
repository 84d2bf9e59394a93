//! The project's sessions and memories, and what a session's turns changed, as every front end
//! lists and changes them. The TUI's views (through the agent's queue), a headless `-p /forget
//! 7` (the same queue) and `cairn forget 7` (directly) all end here, so each check and each
//! message exists once.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::store::{MemoryRecord, ProjectId, SessionSummary, Store, ToolDisplay, TurnInfo};

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibraryAnswer {
    Sessions(Result<Vec<SessionSummary>, LibraryError>),
    Memories(Result<Vec<MemoryRecord>, LibraryError>),
    /// A memory was forgotten, pinned or moved (or could not be): what to tell the user.
    MemoryChanged(Result<String, LibraryError>),
    Turns(Result<Vec<TurnInfo>, LibraryError>),
    Diff(Result<SessionDiff, LibraryError>),
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
#[derive(Clone)]
pub struct Library {
    store: Arc<Store>,
    project: ProjectId,
}

impl Library {
    pub fn new(store: Arc<Store>, project: ProjectId) -> Library {
        Library { store, project }
    }

    /// The project's sessions, most recently active first.
    pub fn sessions(&self) -> Result<Vec<SessionSummary>, LibraryError> {
        self.store
            .list_sessions(self.project)
            .map_err(|e| LibraryError::Failed(format!("could not read the sessions: {e}")))
    }

    /// The project's memories and the global ones, newest first.
    pub fn memories(&self) -> Result<Vec<MemoryRecord>, LibraryError> {
        self.store.memories(self.project).map_err(|e| LibraryError::Failed(format!("could not read the memories: {e}")))
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

    pub fn set_global(&self, id: i64, global: bool) -> Result<String, LibraryError> {
        let changed = self.store.set_memory_global(self.project, id, global).map_err(|e| change_failed(id, e))?;
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
