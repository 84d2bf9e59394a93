//! The session's task list (the `todo` tool's): kept with the session so a resume has it,
//! reported to the front ends as it changes, and sent to the model after the last cache
//! breakpoint of every request — outside the history, so compaction never loses it and a change
//! never costs a cached prefix.

use std::sync::{Arc, Mutex};

use super::events::AgentEvent;
use super::link::Emitter;
use crate::config::Redactor;
use crate::conversation::TaskList;
use crate::store::Store;

#[derive(Clone)]
pub(super) struct SessionTaskList {
    list: Arc<Mutex<TaskList>>,
    store: Arc<Store>,
    session: String,
    redactor: Redactor,
    events: Emitter,
}

impl SessionTaskList {
    /// The list `session` was left with (empty when it has none, or it cannot be read).
    pub(super) fn load(store: Arc<Store>, session: &str, redactor: Redactor, events: Emitter) -> SessionTaskList {
        let list = match store.session_task_list(session) {
            Ok(Some(json)) => serde_json::from_str(&json).unwrap_or_else(|e| {
                tracing::error!(error = %e, session, "unreadable task list; starting without one");
                TaskList::default()
            }),
            Ok(None) => TaskList::default(),
            Err(e) => {
                tracing::error!(error = %e, session, "cannot read the task list");
                TaskList::default()
            }
        };
        SessionTaskList { list: Arc::new(Mutex::new(list)), store, session: session.to_string(), redactor, events }
    }

    pub(super) fn get(&self) -> TaskList {
        self.list.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What follows the last cache breakpoint of the next request.
    pub(super) fn tail(&self) -> Option<String> {
        crate::prompt::task_list_tail(&self.list.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl crate::tools::TaskBoard for SessionTaskList {
    fn replace(&self, mut list: TaskList) -> Result<String, String> {
        for item in &mut list.items {
            self.redactor.redact_in_place(&mut item.text);
        }
        let json = serde_json::to_string(&list).map_err(|e| format!("the list could not be encoded: {e}"))?;
        self.store
            .set_session_task_list(&self.session, &json)
            .map_err(|e| format!("the list could not be saved ({e}); it is unchanged"))?;
        let answer = format!("Task list updated: {}.", list.describe_counts());
        *self.list.lock().unwrap_or_else(|p| p.into_inner()) = list.clone();
        self.events.emit(AgentEvent::TaskList(list));
        Ok(answer)
    }
}
