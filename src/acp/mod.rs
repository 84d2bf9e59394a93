//! `cairn acp`: cairn as an Agent Client Protocol agent on stdin/stdout, for editors (Zed,
//! JetBrains IDEs, Neovim, Emacs). The same agent as the terminal interface, driven through
//! `UserCommand`s and shown through `session/update`s: the folder's trust asked first, then the
//! prompts with their streamed answers, thinking, tool calls (diffs, locations, status) and task
//! list; approvals as permission requests; files through the editor when it offers them.
//! Protocol types and the JSON-RPC connection are the `agent-client-protocol` SDK's.

mod approval;
mod calls;
mod commands;
mod diff;
mod editor;
mod launch;
mod pump;
mod replay;
mod session;
mod terminals;
mod updates;

pub use launch::{Launcher, Opening, StartAgent};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification, ClientCapabilities,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SessionId, SessionInfo, SessionListCapabilities, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::conversation::Mode;
use session::{FileAccess, Session, failed};

/// Serve ACP on stdin/stdout until the client closes stdin; then every session's agent is
/// stopped (what it was writing committed). The error says why the connection broke.
pub async fn serve(launcher: Arc<dyn Launcher>) -> Result<(), String> {
    let server = Arc::new(Server { launcher, client: Mutex::default(), sessions: Mutex::default() });
    let transport = ByteStreams::new(tokio::io::stdout().compat_write(), tokio::io::stdin().compat());
    let (s1, s2, s3, s4, s5, s6, s7) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
    );
    let served = Agent
        .v1()
        .name("cairn")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| responder.respond(s1.initialize(request)),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_: AuthenticateRequest, responder, _cx| responder.respond(AuthenticateResponse::new()),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let server = s2.clone();
                cx.clone().spawn(async move {
                    match server.open(&cx, request.cwd, None).await {
                        Ok(session) => {
                            let modes = commands::modes(session.mode().await);
                            responder.respond(NewSessionResponse::new(session.id.clone()).modes(modes))?;
                            // Started once the client knows the session (its updates are for it);
                            // a folder whose trust is open waits for the first prompt to ask.
                            if let Err(e) = session.start_if_settled().await {
                                tracing::warn!(error = %e, "the session did not start");
                            }
                            Ok(())
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let server = s3.clone();
                cx.clone().spawn(async move {
                    let loaded = async {
                        let session = server.open(&cx, request.cwd, Some(request.session_id.0.to_string())).await?;
                        session.load().await?;
                        Ok::<_, Error>(session)
                    };
                    match loaded.await {
                        Ok(session) => {
                            let modes = commands::modes(session.mode().await);
                            responder.respond(LoadSessionResponse::new().modes(modes))
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, _cx| responder.respond(s4.list(request)?),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let session = s5.session(&request.session_id)?;
                cx.spawn(async move {
                    match session.prompt(&request.prompt).await {
                        Ok(reason) => responder.respond(PromptResponse::new(reason)),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                let session = s6.session(&request.session_id)?;
                let Some(mode) = Mode::parse(&request.mode_id.0) else {
                    return responder.respond_with_error(failed(format!(
                        "there is no mode {:?}; cairn's modes are edit, plan and ask",
                        request.mode_id.0
                    )));
                };
                session.set_mode(mode).await;
                responder.respond(SetSessionModeResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(session) = s7.session(&notification.session_id) {
                    session.cancel().await;
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    server.shut_down().await;
    served.map_err(|e| format!("the ACP connection failed: {e}"))
}

struct Server {
    launcher: Arc<dyn Launcher>,
    /// What the client said it can do (`initialize`).
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
}

impl Server {
    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        *self.client.lock().unwrap_or_else(|p| p.into_inner()) = request.client_capabilities;
        let version = request.protocol_version.min(ProtocolVersion::V1);
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            // Mentioned files come as links: cairn reads them (as the editor holds them).
            .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
            .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
        InitializeResponse::new(version)
            .agent_capabilities(capabilities)
            .agent_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")).title("cairn"))
    }

    /// A session in the project around `cwd`, new or the stored one `load`.
    async fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: std::path::PathBuf,
        load: Option<String>,
    ) -> Result<Arc<Session>, Error> {
        let opening = self.launcher.open(cwd, load).await.map_err(failed)?;
        let files = {
            let client = self.client.lock().unwrap_or_else(|p| p.into_inner());
            FileAccess {
                reads: client.fs.read_text_file,
                writes: client.fs.write_text_file,
                terminals: client.terminal,
            }
        };
        let session = Arc::new(Session::new(cx.clone(), opening, files));
        let replaced =
            self.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(session.id.clone(), session.clone());
        if let Some(old) = replaced {
            // Loaded again: the agent that had it open lets go first.
            old.shut_down().await;
        }
        Ok(session)
    }

    fn session(&self, id: &SessionId) -> Result<Arc<Session>, Error> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned().ok_or_else(|| {
            failed(format!("there is no open session {id}; open it with session/load or start one with session/new"))
        })
    }

    fn list(&self, request: ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
        let cwd = match request.cwd {
            Some(cwd) => cwd,
            None => std::env::current_dir().map_err(|e| failed(format!("cannot read the current folder: {e}")))?,
        };
        let (root, stored) = self.launcher.sessions(cwd).map_err(failed)?;
        let sessions = stored
            .into_iter()
            .map(|s| {
                let title = if s.title.is_empty() { s.last_message } else { s.title };
                SessionInfo::new(s.id, root.clone()).title(title).updated_at(s.last_active_at)
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions))
    }

    async fn shut_down(&self) {
        let sessions: Vec<Arc<Session>> =
            self.sessions.lock().unwrap_or_else(|p| p.into_inner()).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.shut_down().await;
        }
    }
}
