//! The session the agent works in: its record, its stored history and the context pipeline
//! over it, and their persistence. Every message is redacted, committed, then handed to the
//! pipeline, so what is stored and what is sent stay the same.
//!
//! A new session is a draft until its first message: only then is it written, so launching
//! cairn and leaving without typing stores nothing, and `--resume` never finds an empty one.

use std::collections::HashSet;
use std::sync::Arc;

use super::events::{AgentEvent, NoticeLevel};
use super::link::Emitter;
use crate::config::{ContextConfig, ProviderKind, Redactor};
use crate::context::{ContextState, Pipeline};
use crate::conversation::{Block, FinishedCall, Message, Mode, Role, Usage};
use crate::store::{SessionInfo, SessionLock, Store, StoreError};

pub(super) struct SessionState {
    store: Arc<Store>,
    info: SessionInfo,
    /// The stored history and everything that turns it into the sent view.
    pipeline: Pipeline,
    /// The seq the next stored message gets if the store cannot give one.
    last_seq: i64,
    /// Key values to keep out of everything stored.
    redactor: Redactor,
    events: Emitter,
    /// Set once a store write failed, so the warning is shown once, not per message.
    store_failed: bool,
    /// A store write failed during this turn: the turn fails with it (nothing is lost quietly).
    failure: Option<String>,
    /// This process's claim on the session: a second cairn opening it is refused. Shared when
    /// the same session is loaded again, since the lock belongs to the process.
    /// `None` for a drafted session, which nobody else can know of until it is stored.
    lock: Option<Arc<SessionLock>>,
    /// Written to the store (a new session is not, until its first message).
    stored: bool,
    /// When each loaded message was stored, for the transcript's recap; taken once.
    loaded_times: Vec<String>,
    /// The loaded messages whole, for the front ends to render; taken once (the pipeline
    /// releases the bodies of what a summary stands for).
    loaded_history: Vec<Arc<Message>>,
}

impl SessionState {
    /// Read a session's messages (those not rewound) and context state into a fresh pipeline.
    pub(super) fn load(
        store: Arc<Store>,
        info: SessionInfo,
        config: &ContextConfig,
        redactor: Redactor,
        events: Emitter,
        held: Option<&SessionState>,
    ) -> Result<SessionState, StoreError> {
        let exists = store.session(&info.id)?.is_some();
        // What a conversation rewind took out is not sent; the next message still numbers
        // after every stored one.
        let stored = if exists { store.live_messages(&info.id)? } else { Vec::new() };
        let last_seq = if exists { store.last_seq(&info.id)? } else { 0 };
        let loaded_times = stored.iter().map(|m| m.created_at.clone()).collect();
        let lock = match held {
            Some(current) if current.info.id == info.id => current.lock.clone(),
            Some(_) | None if exists => Some(Arc::new(store.lock_session(&info.id)?)),
            Some(_) | None => None,
        };
        let state = match store.context_state(&info.id)? {
            Some(json) => serde_json::from_str::<ContextState>(&json).unwrap_or_else(|e| {
                tracing::error!(error = %e, session = %info.id, "unreadable context state; rebuilding from the history");
                ContextState::default()
            }),
            None => ContextState::default(),
        };
        let messages: Vec<(i64, Arc<Message>)> = stored.into_iter().map(|m| (m.seq, Arc::new(m.message))).collect();
        let loaded_history = messages.iter().map(|(_, m)| m.clone()).collect();
        let pipeline = Pipeline::restore(config.clone(), state, messages);
        Ok(SessionState {
            store,
            info,
            pipeline,
            last_seq,
            redactor,
            events,
            store_failed: false,
            stored: exists,
            failure: None,
            lock,
            loaded_times,
            loaded_history,
        })
    }

    /// When each loaded message was stored (empty after the first call).
    pub(super) fn take_loaded_times(&mut self) -> Vec<String> {
        std::mem::take(&mut self.loaded_times)
    }

    /// Write a drafted session, just before its first message. Reported once to the front
    /// end, which can now offer to resume it.
    fn ensure_stored(&mut self) -> Result<(), StoreError> {
        if self.stored {
            return Ok(());
        }
        if !self.store.insert_session(&self.info)? {
            // Someone took the drafted id meanwhile (astronomically unlikely): draft another.
            let fresh = self.store.draft_session(
                self.info.project,
                crate::store::NewSession {
                    provider: self.info.provider,
                    model: &self.info.model,
                    mode: self.info.mode,
                },
            )?;
            self.info.id = fresh.id;
            if !self.store.insert_session(&self.info)? {
                return Err(StoreError::Corrupt("could not allocate a unique session id".into()));
            }
        }
        self.stored = true;
        // Nobody else could know a drafted id, so the lock is taken once the row exists.
        if self.lock.is_none() {
            self.lock = Some(Arc::new(self.store.lock_session(&self.info.id)?));
        }
        if let Ok(Some(written)) = self.store.session(&self.info.id) {
            self.info = written;
        }
        self.events.emit(AgentEvent::SessionStored(self.info.clone()));
        Ok(())
    }

    pub(super) fn info(&self) -> &SessionInfo {
        &self.info
    }

    pub(super) fn id(&self) -> &str {
        &self.info.id
    }

    pub(super) fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    pub(super) fn pipeline_mut(&mut self) -> &mut Pipeline {
        &mut self.pipeline
    }

    /// The seq of the last stored message.
    pub(super) fn last_seq(&self) -> i64 {
        self.last_seq
    }

    pub(super) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Every message of the session as loaded, for front ends to render; taken once, when
    /// the session is announced.
    pub(super) fn take_history(&mut self) -> Vec<Arc<Message>> {
        std::mem::take(&mut self.loaded_history)
    }

    /// Seqs of the messages the model sees verbatim.
    pub(super) fn visible_seqs(&self) -> HashSet<i64> {
        let state = self.pipeline.state();
        self.pipeline.ledger().entries().iter().map(|e| e.seq).filter(|&s| state.is_visible(s)).collect()
    }

    /// Commit a message with key values redacted, then hand it to the pipeline. A failed commit
    /// is reported once and the session goes on in memory: losing the ability to save is bad,
    /// losing the user's turn is worse. Returns the stored row id.
    pub(super) fn persist(&mut self, mut message: Message, record: Option<&FinishedCall>) -> Option<i64> {
        self.redact_message(&mut message);
        // The record stays as it is for the front ends; what is stored has its key values out.
        let record = record.map(|r| {
            let mut stored = r.clone();
            self.redactor.redact_in_place(&mut stored.arguments);
            self.redactor.redact_in_place(&mut stored.output);
            // The summary and the approval line quote the arguments (`$ curl -H …`).
            self.redactor.redact_in_place(&mut stored.summary);
            for text in [&mut stored.diff, &mut stored.approval].into_iter().flatten() {
                self.redactor.redact_in_place(text);
            }
            stored
        });
        let stored = self.ensure_stored().and_then(|()| match &record {
            Some(r) => self.store.append_tool_message(&self.info.id, &message, r),
            None => self.store.append_message(&self.info.id, &message),
        });
        let (seq, id) = match stored {
            Ok(s) => (s.seq, Some(s.id)),
            Err(e) => {
                self.store_error(&e);
                (self.last_seq + 1, None)
            }
        };
        if message.role == Role::User && self.info.title.is_empty() {
            self.title_by(&message.text());
        }
        self.last_seq = seq;
        self.pipeline.append(seq, message);
        id
    }

    /// An untitled session takes the first line of its first prompt as its title.
    fn title_by(&mut self, prompt: &str) {
        let title = session_title(prompt);
        if title.is_empty() {
            return;
        }
        match self.store.set_session_title(&self.info.id, &title) {
            Ok(()) => self.info.title = title,
            Err(e) => self.store_error(&e),
        }
    }

    fn redact_message(&self, message: &mut Message) {
        message.content.retain_mut(|block| match block {
            Block::Text { text } => {
                self.redactor.redact_in_place(text);
                true
            }
            Block::ToolCall(call) => {
                self.redactor.redact_in_place(&mut call.arguments);
                true
            }
            Block::ToolResult(result) => {
                self.redactor.redact_in_place(&mut result.content);
                true
            }
            // Thinking is signed: redacted, it would be refused when sent back. Thinking that
            // holds a key is dropped instead (its turn goes on without it).
            Block::Thinking(thinking) => {
                let mut text = thinking.text.clone();
                self.redactor.redact_in_place(&mut text);
                let clean = text == thinking.text;
                if !clean {
                    tracing::warn!("dropped a thinking block that quoted a key");
                }
                clean
            }
            Block::Image(_) => true,
        });
    }

    /// Persist the context state after a stage changed it (a draft has none to keep).
    pub(super) fn save_state(&mut self) {
        if !self.stored {
            return;
        }
        let json = match serde_json::to_string(self.pipeline.state()) {
            Ok(json) => json,
            Err(e) => {
                tracing::error!(error = %e, "cannot encode the context state");
                return;
            }
        };
        if let Err(e) = self.store.save_context_state(&self.info.id, &json) {
            self.store_error(&e);
        }
    }

    /// Record a request's usage under `purpose`, against the message it produced.
    /// Store a request's usage; the row's id, to hang its figures on.
    pub(super) fn record_usage(
        &mut self,
        message_id: Option<i64>,
        purpose: &str,
        model: &str,
        usage: &Usage,
    ) -> Option<i64> {
        match self
            .ensure_stored()
            .and_then(|()| self.store.record_usage(&self.info.id, message_id, purpose, model, usage))
        {
            Ok(id) => Some(id),
            Err(e) => {
                self.store_error(&e);
                None
            }
        }
    }

    /// An agent request's usage, with the rough tokens of the system prompt and tools it
    /// carried; the row's id, to hang its figures on.
    pub(super) fn record_request(
        &mut self,
        message_id: Option<i64>,
        model: &str,
        usage: &Usage,
        overhead: u64,
    ) -> Option<i64> {
        match self
            .ensure_stored()
            .and_then(|()| self.store.record_request(&self.info.id, message_id, model, usage, overhead))
        {
            Ok(id) => Some(id),
            Err(e) => {
                self.store_error(&e);
                None
            }
        }
    }

    /// What a request carried, beside its usage row (see [`crate::store::RequestFigures`]).
    pub(super) fn record_figures(&mut self, usage_id: i64, figures: &crate::store::RequestFigures) {
        if let Err(e) = self.store.record_request_figures(usage_id, figures) {
            // The report loses one point; the session goes on.
            tracing::warn!(error = %e, "could not store a request's figures");
        }
    }

    /// Keep the mode and model with the session, so a resume starts where it was left.
    pub(super) fn save_settings(&mut self, mode: Mode, provider: ProviderKind, model: &str) {
        if !self.stored {
            // Written with the session at its first message.
            self.info.mode = mode;
            self.info.provider = provider;
            self.info.model = model.to_string();
            return;
        }
        let result = self
            .store
            .set_session_mode(&self.info.id, mode)
            .and_then(|()| self.store.set_session_model(&self.info.id, provider, model));
        match result {
            Ok(()) => {
                self.info.mode = mode;
                self.info.provider = provider;
                self.info.model = model.to_string();
            }
            Err(e) => self.store_error(&e),
        }
    }

    /// A turn starts with no store failure on record.
    pub(super) fn clear_failure(&mut self) {
        self.failure = None;
    }

    /// The first store write that failed since the turn started, taken.
    pub(super) fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    pub(super) fn has_failed(&self) -> bool {
        self.failure.is_some()
    }

    pub(super) fn store_error(&mut self, e: &StoreError) {
        tracing::error!(error = %e, "store write failed");
        self.failure.get_or_insert_with(|| e.to_string());
        if !self.store_failed {
            self.store_failed = true;
            self.events.notice(
                NoticeLevel::Error,
                format!("could not save to the database ({e}); the session continues but may not be resumable"),
            );
        }
    }
}

/// A session's title: the first non-blank line of its first prompt, cut to 60 characters.
fn session_title(prompt: &str) -> String {
    crate::conversation::clip(prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_session_is_titled_by_the_first_line_of_its_first_prompt() {
        assert_eq!(
            super::session_title("\n  Fix the failing test in tests/api.rs\nplease"),
            "Fix the failing test in tests/api.rs"
        );
        assert_eq!(super::session_title("   \n\n"), "");
        let long = super::session_title(&"word ".repeat(30));
        assert!(long.ends_with('…') && long.chars().count() <= 61, "{long}");
    }
}
