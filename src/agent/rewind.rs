//! Rewinding a session to before one of its turns: its code (the files put back as the
//! checkpoints recorded them), its conversation (the turn and everything after it taken out of
//! what is sent, the context state repaired to match), or both — code first, so a rewind that
//! cannot touch the files leaves the conversation as it was.
//!
//! One implementation for every front end: the worker runs it for `/rewind` and `/undo` (then
//! reloads the session, the same path a resume takes), and `cairn rewind` runs it directly
//! holding the session's lock.

use std::path::Path;

use serde::Serialize;

use super::library::LibraryError;
use crate::checkpoint::{Overwrite, PathNote, RewindReport, apply_code_rewind, plan_code_rewind};
use crate::config::{CheckpointsConfig, Redactor};
use crate::context::{ContextState, SummaryState, rewind_state};
use crate::store::{Store, StoreError, TurnInfo};

/// What a rewind takes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The files and the conversation.
    Both,
    /// The conversation only: the files stay as they are.
    Conversation,
    /// The files only: the model still sees the whole conversation.
    Code,
}

impl RewindScope {
    pub fn code(self) -> bool {
        match self {
            RewindScope::Both | RewindScope::Code => true,
            RewindScope::Conversation => false,
        }
    }

    pub fn conversation(self) -> bool {
        match self {
            RewindScope::Both | RewindScope::Conversation => true,
            RewindScope::Code => false,
        }
    }

    /// As the picker offers it.
    pub fn label(self) -> &'static str {
        match self {
            RewindScope::Both => "code and conversation",
            RewindScope::Conversation => "conversation only",
            RewindScope::Code => "code only",
        }
    }
}

/// What a code rewind would do, before it is done: shown so the user can confirm conflicts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RewindPreview {
    pub turn: TurnInfo,
    pub scope: RewindScope,
    /// Paths that would be put back as they were.
    pub files: usize,
    /// Changed by someone else since cairn did: skipped unless confirmed.
    pub conflicts: Vec<PathNote>,
    /// Their earlier content is not available: left as they are.
    pub unrestorable: Vec<PathNote>,
}

/// What the conversation part of a rewind did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConversationRewound {
    /// Messages no longer sent (they stay stored, marked rewound).
    pub messages: u64,
    pub first_seq: i64,
    pub last_seq: i64,
    /// The rewound turn's prompt, for the prompt box to offer again.
    pub prompt: String,
}

/// What a rewind did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RewindOutcome {
    pub session_id: String,
    pub turn: TurnInfo,
    pub scope: RewindScope,
    /// `None` when the files were not part of it.
    pub code: Option<RewindReport>,
    /// `None` when the conversation was not part of it.
    pub conversation: Option<ConversationRewound>,
}

impl RewindOutcome {
    /// Lines for a transcript or a terminal.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "rewound to before turn {} ({}): {}",
            self.turn.number,
            quote(&self.turn.prompt),
            self.scope.label()
        )];
        if let Some(code) = &self.code {
            out.extend(code.lines());
        }
        if let Some(c) = &self.conversation {
            out.push(format!(
                "{} message{} no longer sent to the model (kept in the history)",
                c.messages,
                if c.messages == 1 { "" } else { "s" }
            ));
        }
        out
    }

    /// Every file was put back, or the files were not part of it.
    pub fn complete(&self) -> bool {
        self.code.as_ref().is_none_or(RewindReport::complete)
    }
}

fn quote(prompt: &str) -> String {
    if prompt.is_empty() { "an empty prompt".to_string() } else { format!("“{prompt}”") }
}

/// One session's turns, files and conversation, as a rewind reads and changes them.
pub struct Rewinder<'a> {
    pub store: &'a Store,
    pub session: &'a str,
    /// The project root, canonical.
    pub root: &'a Path,
    pub config: &'a CheckpointsConfig,
    /// The key values capture kept out of the store.
    pub secrets: &'a Redactor,
}

impl Rewinder<'_> {
    pub fn turns(&self) -> Result<Vec<TurnInfo>, LibraryError> {
        self.store.turns(self.session).map_err(failed)
    }

    /// The turn numbered `number`, as `/rewind` and `cairn rewind --to` number them.
    pub fn turn_numbered(&self, number: u32) -> Result<TurnInfo, LibraryError> {
        let turns = self.turns()?;
        let count = turns.len();
        turns.into_iter().find(|t| t.number == number).ok_or_else(|| {
            LibraryError::Input(match count {
                0 => format!("session {} has no turns yet; there is nothing to rewind", self.session),
                n => format!(
                    "session {} has no turn {number}; its turns are numbered 1 to {n} (`cairn rewind {}` lists them)",
                    self.session, self.session
                ),
            })
        })
    }

    /// The turn a picker chose (by the seq of its prompt), if it is still in the conversation.
    pub fn turn_at(&self, user_seq: i64) -> Result<TurnInfo, LibraryError> {
        self.turns()?.into_iter().find(|t| t.user_seq == user_seq).ok_or_else(|| {
            LibraryError::Input("that turn is no longer in the conversation (a rewind took it back)".into())
        })
    }

    /// The latest turn whose file changes still stand: what `/undo` takes back.
    pub fn last_turn_with_changes(&self) -> Result<TurnInfo, LibraryError> {
        self.turns()?.into_iter().rev().find(|t| t.files_changed > 0).ok_or_else(|| {
            LibraryError::Input("no turn of this session changed files that are still as cairn left them".into())
        })
    }

    /// What taking back the code of `turn` and every later turn would do.
    pub fn preview(&self, turn: TurnInfo, scope: RewindScope) -> Result<RewindPreview, LibraryError> {
        let (files, conflicts, unrestorable) = if scope.code() {
            let plan = plan_code_rewind(self.store, self.session, self.root, self.config, self.secrets, turn.user_seq)
                .map_err(|e| LibraryError::Failed(format!("could not read the checkpoints: {e}")))?;
            (plan.paths.len(), plan.conflicts(), plan.unrestorable())
        } else {
            (0, Vec::new(), Vec::new())
        };
        Ok(RewindPreview { turn, scope, files, conflicts, unrestorable })
    }

    /// Take `turn` and everything after it back: the code first (conflicts only those
    /// `overwrite` covers), then the conversation.
    pub fn rewind(
        &self,
        turn: TurnInfo,
        scope: RewindScope,
        overwrite: &Overwrite,
    ) -> Result<RewindOutcome, LibraryError> {
        let code = if scope.code() {
            let plan = plan_code_rewind(self.store, self.session, self.root, self.config, self.secrets, turn.user_seq)
                .map_err(|e| LibraryError::Failed(format!("could not read the checkpoints: {e}")))?;
            let report = apply_code_rewind(self.store, self.root, &plan, overwrite)
                .map_err(|e| LibraryError::Failed(format!("could not restore the files: {e}")))?;
            Some(report)
        } else {
            None
        };
        let conversation = if scope.conversation() { Some(self.rewind_conversation(&turn)?) } else { None };
        Ok(RewindOutcome { session_id: self.session.to_string(), turn, scope, code, conversation })
    }

    /// Take the messages from the turn's prompt on out of what is sent, and the context
    /// state's decisions about them with them, in one transaction.
    fn rewind_conversation(&self, turn: &TurnInfo) -> Result<ConversationRewound, LibraryError> {
        let seq = turn.user_seq;
        let state = match self.store.context_state(self.session).map_err(failed)? {
            Some(json) => serde_json::from_str::<ContextState>(&json).unwrap_or_else(|e| {
                tracing::error!(error = %e, session = self.session, "unreadable context state; rewinding from a fresh one");
                ContextState::default()
            }),
            None => ContextState::default(),
        };
        let earlier = self.store.summary_before(self.session, seq).map_err(failed)?.map(|e| SummaryState {
            text: e.summary,
            through_seq: e.through_seq,
            generation: e.generation,
        });
        let live = self.store.live_messages(self.session).map_err(failed)?;
        let messages = live.iter().filter(|m| m.seq >= seq).count() as u64;
        let prompt = live.iter().find(|m| m.seq == seq).map(|m| m.message.text()).unwrap_or_default();
        let stays: Vec<_> = live.into_iter().filter(|m| m.seq < seq).map(|m| (m.seq, m.message)).collect();
        let repaired = rewind_state(&state, seq, earlier, &stays);
        let json = serde_json::to_string(&repaired)
            .map_err(|e| LibraryError::Failed(format!("cannot encode the context state: {e}")))?;
        let range = self.store.rewind_messages(self.session, seq, Some(&json)).map_err(failed)?.ok_or_else(|| {
            LibraryError::Input(format!("session {} has no messages from turn {} on", self.session, turn.number))
        })?;
        Ok(ConversationRewound { messages, first_seq: range.first_seq, last_seq: range.last_seq, prompt })
    }
}

fn failed(e: StoreError) -> LibraryError {
    LibraryError::Failed(format!("could not read or write the session: {e}"))
}

#[cfg(test)]
#[path = "rewind_tests.rs"]
mod tests;
