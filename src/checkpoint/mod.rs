//! Per-turn checkpoints of every change cairn makes to the project's files, with or without
//! git: capture around `file_write`/`file_edit` (the named paths) and `bash` (a stat scan of the
//! tree before and after), restore to before a turn with conflict checks, and diffs.
//!
//! Layer 3, beside `tools`: uses `store` for the SQL and `config` for the settings, never the
//! tools themselves. The decisions (what changed, what to restore) are pure (`scan` comparisons,
//! `plan`); reading and writing files is kept to `observe`, `capture` and `restore`.

mod beneath;
mod capture;
mod diff;
mod observe;
mod plan;
mod restore;
mod scan;
mod stamp;
mod walk;
mod watch;

pub use capture::{CallGuard, CallKind, ChangedPath, CheckpointError, Checkpointer, WarmUp};
pub use diff::{session_diff, turn_diff};
pub use observe::{KeepRules, still_holds};
pub use plan::{Action, PathNote, PathPlan, RewindPlan, Verdict, plan};
pub use restore::{Overwrite, RewindReport, apply_code_rewind, plan_code_rewind};
pub use scan::{Content, Delta, Entry, Tree};
pub use stamp::Stamp;
pub use walk::{ScanError, ScanLimits, Track};

use crate::store::{Store, TurnInfo};

/// The turn numbered `number` (1-based, as `/rewind` lists them) of the session.
pub fn find_turn(store: &Store, session: &str, number: u32) -> Result<TurnInfo, CheckpointError> {
    let turns = store.turns(session)?;
    let count = turns.len();
    turns.into_iter().find(|t| t.number == number).ok_or_else(|| {
        CheckpointError::Io(match count {
            0 => format!("session {session} has no turns yet; nothing to rewind"),
            n => format!("session {session} has no turn {number}; its turns are numbered 1 to {n}"),
        })
    })
}

// The agent holds the checkpointer behind a mutex and calls it from blocking tasks.
const _: fn() = || {
    fn sendable<T: Send + 'static>() {}
    sendable::<Checkpointer>();
    sendable::<CallGuard>();
};
