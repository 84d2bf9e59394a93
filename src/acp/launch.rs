//! What the ACP front end needs from the wiring to open sessions on request: a session of the
//! project around a folder (new, or a stored one), the folder's trust to settle, and then the
//! agent — started only once the trust is settled, so nothing of an untrusted project runs.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::agent::AgentHandle;
use crate::store::{SessionInfo, SessionSummary};
use crate::tools::Editor;
use crate::trust::{ProjectTrust, TrustCheck};

/// Starts the agent of an [`Opening`], the folder's trust settled, its file tools going through
/// the editor when the client offers one; with what to tell the user at once (the sandbox cannot
/// be enforced here, a setting was not applied).
pub type StartAgent =
    Box<dyn FnOnce(ProjectTrust, Option<Arc<dyn Editor>>) -> Result<(AgentHandle, Vec<String>), String> + Send>;

/// A session about to start: its id is known (a new one drafted), the folder checked.
pub struct Opening {
    pub session: SessionInfo,
    /// The project root (the nearest folder with `.git` above the client's cwd).
    pub root: PathBuf,
    /// The folder's trust: settled, or a question for the user.
    pub trust: TrustCheck,
    pub start: StartAgent,
}

/// The wiring's side (`cli`): settings, the store, the provider, the agent.
pub trait Launcher: Send + Sync {
    /// A session in the project around `cwd`: a new one (drafted, so its id can be given out
    /// before it starts) or the stored session `load`. The error says what is wrong and what
    /// to do (a bad settings file, no provider, an unknown session).
    fn open(&self, cwd: PathBuf, load: Option<String>) -> BoxFuture<'static, Result<Opening, String>>;

    /// The project root around `cwd` and its stored sessions (not subagents'), newest first.
    fn sessions(&self, cwd: PathBuf) -> Result<(PathBuf, Vec<SessionSummary>), String>;
}
