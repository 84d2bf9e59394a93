//! `cairn acp`: the wiring of the ACP front end. Each session a client opens gets the project
//! around its folder — settings, the folder's trust, the store, the provider — and, once the
//! trust is settled, an agent whose approvals the client answers.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::error::CliError;
use super::startup::Startup;
use crate::acp::{Launcher, Opening, StartAgent};
use crate::agent::SessionChoice;
use crate::store::{NewSession, SessionSummary};
use crate::tools::ApprovalPolicy;
use crate::trust::TrustCheck;

pub async fn run(startup: &Startup, trust: bool) -> Result<ExitCode, CliError> {
    // One llama-server (`--local`) for every session, started before the first.
    startup.local_server().await?;
    let wiring = Wiring { template: Arc::new(startup.for_dir(&startup.cwd)?), trust };
    let served = crate::acp::serve(Arc::new(wiring)).await;
    startup.settle_background();
    startup.stop_local_server().await;
    served.map_err(CliError::Failed)?;
    Ok(ExitCode::SUCCESS)
}

struct Wiring {
    /// The run as started (config, flags); each session's project is found from its folder.
    template: Arc<Startup>,
    /// `--trust`: folders are trusted without asking.
    trust: bool,
}

impl Launcher for Wiring {
    fn open(&self, cwd: PathBuf, load: Option<String>) -> BoxFuture<'static, Result<Opening, String>> {
        let (template, trust_flag) = (self.template.clone(), self.trust);
        Box::pin(async move { open(&template, cwd, load, trust_flag).await.map_err(|e| e.to_string()) })
    }

    fn sessions(&self, cwd: PathBuf) -> Result<(PathBuf, Vec<SessionSummary>), String> {
        let startup = self.template.for_dir(&cwd).map_err(|e| e.to_string())?;
        let (store, project) = startup.open_store().map_err(|e| e.to_string())?;
        let sessions = store.list_sessions(project).map_err(|e| e.to_string())?;
        Ok((startup.root, sessions.into_iter().filter(|s| s.parent.is_none()).collect()))
    }
}

async fn open(template: &Startup, cwd: PathBuf, load: Option<String>, trust_flag: bool) -> Result<Opening, CliError> {
    let startup = template.for_dir(&cwd)?;
    let check = startup.trust_check()?;
    // A bad rule or settings file is named first: it is what to fix, trusted or not.
    startup.permissions(check.provisional())?;
    let trust = match check {
        TrustCheck::Ask(question) if trust_flag => TrustCheck::Settled(question.trust().map_err(CliError::Failed)?),
        other => other,
    };
    let (store, project) = startup.open_store()?;
    let provider = startup.provider().await?;
    let (session, choice) = match load {
        Some(id) => {
            let info = store.resolve_session(project, &id)?;
            store.touch_session(&info.id)?;
            (info.clone(), SessionChoice::Resume(info))
        }
        None => {
            let mode = startup.mode_flag.unwrap_or(startup.config.mode);
            let new = NewSession { provider: provider.resolved.kind, model: &provider.model.name, mode };
            let info = store.draft_session(project, new)?;
            (info.clone(), SessionChoice::Drafted(info))
        }
    };
    let root = startup.root.clone();
    let start: StartAgent = Box::new(move |trust, editor| {
        let permissions = startup.permissions(trust).map_err(|e| e.to_string())?;
        let notices = permissions.notices();
        let mut setup = startup.agent_setup((store, project), provider, choice, permissions, ApprovalPolicy::Ask, None);
        setup.editor = editor;
        let handle = crate::agent::spawn(setup).map_err(|e| e.to_string())?;
        Ok((handle, notices))
    });
    Ok(Opening { session, root, trust, start })
}
