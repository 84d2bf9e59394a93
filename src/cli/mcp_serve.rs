//! `cairn mcp-serve`: the wiring of the MCP server. The folder's trust is settled before
//! anything starts, as headless settles it (`--trust`, or a folder with nothing that runs);
//! then each tool call gets an agent on its session.

use std::process::ExitCode;
use std::sync::Arc;

use super::error::CliError;
use super::startup::Startup;
use crate::agent::SessionChoice;
use crate::mcp_serve::{StartAgent, Target};
use crate::trust::NotTrusted;

pub async fn run(startup: &Startup, trust: bool) -> Result<ExitCode, CliError> {
    let check = startup.trust_check()?;
    // A bad rule or settings file is named first: it is what to fix, trusted or not.
    startup.permissions(check.provisional())?;
    let trust = check.without_asking(trust).map_err(|e| match e {
        NotTrusted::Refused(why) => CliError::Usage(why),
        NotTrusted::NotRecorded(why) => CliError::Failed(why),
    })?;
    for notice in startup.permissions(trust.clone())?.notices() {
        eprintln!("cairn: {notice}");
    }
    // A missing key or an unreachable provider stops cairn here, not at the first call.
    let provider = startup.provider().await?;
    let session_startup = Arc::new(startup.for_dir(&startup.cwd)?);
    let start: StartAgent = Arc::new(move |target, approval| {
        let startup = &session_startup;
        let (store, project) = startup.open_store().map_err(|e| e.to_string())?;
        let session = match target {
            Target::New => SessionChoice::New,
            Target::Session(id) => {
                SessionChoice::Resume(store.resolve_session(project, &id).map_err(|e| e.to_string())?)
            }
            Target::Latest => match store.latest_conversation(project).map_err(|e| e.to_string())? {
                Some(info) => SessionChoice::Resume(info),
                None => {
                    return Err(format!(
                        "there is no session in {} yet; start one with `prompt`",
                        startup.root.display()
                    ));
                }
            },
        };
        let permissions = startup.permissions(trust.clone()).map_err(|e| e.to_string())?;
        let setup = startup.agent_setup((store, project), provider.clone(), session, permissions, approval, None);
        crate::agent::spawn(setup).map_err(|e| e.to_string())
    });
    let served = crate::mcp_serve::serve(start).await;
    startup.settle_background();
    startup.stop_local_server().await;
    served.map_err(CliError::Failed)?;
    Ok(ExitCode::SUCCESS)
}
