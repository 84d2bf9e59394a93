//! One ACP session: the folder's trust settled (asked with the first prompt, or before a
//! stored session is replayed), then an agent whose events a pump turns into updates while the
//! prompts wait for the turns they start.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, EmbeddedResourceResource, RequestPermissionRequest, SessionId,
    SessionModeId, SessionNotification, SessionUpdate, StopReason, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::{Client, Error};
use tokio::sync::{mpsc, oneshot};

use super::approval;
use super::commands::{self, Ask};
use super::editor::ClientEditor;
use super::launch::{Opening, StartAgent};
use super::pump::{Expect, Pump, Shared, Waiter};
use super::terminals::ClientTerminals;
use crate::agent::UserCommand;
use crate::conversation::Mode;
use crate::tools::Editor;
use crate::trust::{TrustCheck, TrustQuestion};

/// What the client offers the session's tools: its files, its terminals.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FileAccess {
    pub reads: bool,
    pub writes: bool,
    pub terminals: bool,
}

pub(super) struct Session {
    pub id: SessionId,
    pub root: PathBuf,
    cx: ConnectionTo<Client>,
    files: FileAccess,
    stage: tokio::sync::Mutex<Stage>,
    shared: Arc<Shared>,
}

enum Stage {
    /// The agent has not started: the folder's trust may wait for the user's answer.
    Unstarted {
        trust: TrustCheck,
        start: StartAgent,
        mode: Mode,
    },
    Running(Running),
    Stopped,
}

struct Running {
    commands: mpsc::UnboundedSender<UserCommand>,
    /// Tells the pump to shut the agent down; it ends once the agent has.
    stop: oneshot::Sender<()>,
    pump: tokio::task::JoinHandle<()>,
}

/// Whether the session can take the prompt.
enum Started {
    Yes,
    /// The user cancelled the trust question.
    Cancelled,
}

impl Session {
    pub(super) fn new(cx: ConnectionTo<Client>, opening: Opening, files: FileAccess) -> Session {
        let Opening { session, root, trust, start } = opening;
        Session {
            id: SessionId::new(session.id),
            root,
            cx,
            files,
            stage: tokio::sync::Mutex::new(Stage::Unstarted { trust, start, mode: session.mode }),
            shared: Arc::new(Shared::default()),
        }
    }

    /// The mode the session is in (or will start in).
    pub(super) async fn mode(&self) -> Mode {
        match &*self.stage.lock().await {
            Stage::Unstarted { mode, .. } => *mode,
            Stage::Running(_) | Stage::Stopped => self.shared.mode(),
        }
    }

    /// Start the agent unless the folder's trust still needs asking: what a new session does
    /// right after the client knows its id.
    pub(super) async fn start_if_settled(&self) -> Result<(), Error> {
        let settled = matches!(&*self.stage.lock().await, Stage::Unstarted { trust: TrustCheck::Settled(_), .. });
        if settled {
            self.ensure_started(false).await?;
        }
        Ok(())
    }

    /// Settle the folder's trust (asking the user if it is open) and start the agent, once;
    /// with `replay`, its stored conversation is sent as updates before this returns.
    async fn ensure_started(&self, replay: bool) -> Result<Started, Error> {
        let mut stage = self.stage.lock().await;
        let (trust, start, mode) = match std::mem::replace(&mut *stage, Stage::Stopped) {
            Stage::Unstarted { trust, start, mode } => (trust, start, mode),
            running @ Stage::Running(_) => {
                *stage = running;
                return Ok(Started::Yes);
            }
            Stage::Stopped => return Err(failed("this session has ended; start a new one")),
        };
        let trust = match trust {
            TrustCheck::Settled(trust) => trust,
            TrustCheck::Ask(question) => match self.ask_trust(&question).await {
                Some(true) => question.trust().map_err(failed)?,
                Some(false) => question.decline(),
                None => {
                    *stage = Stage::Unstarted { trust: TrustCheck::Ask(question), start, mode };
                    return Ok(Started::Cancelled);
                }
            },
        };
        *stage = Stage::Running(self.start(trust, start, mode, replay).await?);
        Ok(Started::Yes)
    }

    /// Ask the user whether to trust the folder, on a pseudo call the client shows: `None`
    /// when they cancelled. A client that cannot be asked is a no (nothing of it runs).
    async fn ask_trust(&self, question: &TrustQuestion) -> Option<bool> {
        let (call, options) = approval::trust_question(question);
        let title = call.fields.title.clone().unwrap_or_default();
        let announce = ToolCall::new(approval::TRUST_CALL, title).kind(ToolKind::Other);
        self.send(SessionUpdate::ToolCall(announce));
        let asked =
            self.cx.send_request(RequestPermissionRequest::new(self.id.clone(), call, options)).block_task().await;
        let (answer, status) = match asked {
            Ok(response)
                if matches!(
                    response.outcome,
                    agent_client_protocol::v1::schema::RequestPermissionOutcome::Cancelled
                ) =>
            {
                (None, ToolCallStatus::Failed)
            }
            Ok(response) if approval::trusted(&response.outcome) => (Some(true), ToolCallStatus::Completed),
            Ok(_) => (Some(false), ToolCallStatus::Failed),
            Err(e) => {
                tracing::warn!(error = %e, "the client could not ask whether to trust the folder");
                (Some(false), ToolCallStatus::Failed)
            }
        };
        let fields = ToolCallUpdateFields::new().status(status);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(approval::TRUST_CALL, fields)));
        answer
    }

    async fn start(
        &self,
        trust: crate::trust::ProjectTrust,
        start: StartAgent,
        mode: Mode,
        replay: bool,
    ) -> Result<Running, Error> {
        let (opened_tx, opened) = mpsc::unbounded_channel();
        let terminals = self.files.terminals.then(|| ClientTerminals {
            cx: self.cx.clone(),
            session: self.id.clone(),
            opened: opened_tx,
        });
        let editor: Option<Arc<dyn Editor>> =
            (self.files.reads || self.files.writes || terminals.is_some()).then(|| {
                Arc::new(ClientEditor {
                    cx: self.cx.clone(),
                    session: self.id.clone(),
                    reads: self.files.reads,
                    writes: self.files.writes,
                    terminals,
                }) as Arc<dyn Editor>
            });
        let (handle, notices) = start(trust, editor).map_err(failed)?;
        let commands = handle.commands.clone();
        if handle.session.mode != mode {
            // Switched while the agent waited for the folder's trust.
            let _ = commands.send(UserCommand::SetMode(mode));
        }
        self.shared.set_mode(mode);
        let (ready_tx, ready_rx) = oneshot::channel();
        let (stop, stopped) = oneshot::channel();
        let pump =
            Pump::new(self.cx.clone(), self.id.clone(), self.root.clone(), self.shared.clone(), replay, ready_tx);
        let pump = pump.showing(opened);
        let pump = tokio::spawn(pump.run(handle, stopped));
        ready_rx.await.map_err(|_| {
            failed("the agent stopped before its session was ready; the log in cairn's data folder says why")
        })?;
        for notice in notices {
            self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!(
                "> cairn: {notice}\n\n"
            )))));
        }
        Ok(Running { commands, stop, pump })
    }

    /// Start (replaying the stored conversation) for `session/load`.
    pub(super) async fn load(&self) -> Result<(), Error> {
        match self.ensure_started(true).await? {
            Started::Yes => Ok(()),
            Started::Cancelled => {
                Err(failed("the folder's trust was not answered; load the session again to be asked"))
            }
        }
    }

    /// Run one prompt to its end.
    pub(super) async fn prompt(&self, blocks: &[ContentBlock]) -> Result<StopReason, Error> {
        let text = prompt_text(blocks, &self.root);
        if text.trim().is_empty() {
            return Err(
                Error::invalid_params().data(serde_json::json!("the prompt holds no text or file cairn can take"))
            );
        }
        if let Started::Cancelled = self.ensure_started(false).await? {
            return Ok(StopReason::Cancelled);
        }
        if let Some(why) = self.shared.failed() {
            return Err(failed(why));
        }
        let commands = match &*self.stage.lock().await {
            Stage::Running(running) => running.commands.clone(),
            Stage::Unstarted { .. } | Stage::Stopped => return Err(failed("this session has ended; start a new one")),
        };
        let (command, expect) = match commands::parse(&text, &self.shared.custom_commands()) {
            Ask::Said(answer) => {
                self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(answer))));
                return Ok(StopReason::EndTurn);
            }
            Ask::Turn(command) => (command, Expect::Turn),
            Ask::Answer(command) => (command, Expect::Answer),
        };
        let (done, answer) = oneshot::channel();
        self.shared.wait(Waiter { expect, done }).map_err(failed)?;
        if commands.send(command).is_err() {
            self.shared.stop_waiting();
            return Err(failed("the agent has stopped; start a new session"));
        }
        match answer.await {
            Ok(Ok(reason)) => Ok(reason),
            Ok(Err(why)) => Err(failed(why)),
            Err(_) => Err(failed("the agent stopped during the turn; the log in cairn's data folder says why")),
        }
    }

    /// `session/cancel`: the running turn stops, keeping what it has (the prompt answers
    /// `cancelled`).
    pub(super) async fn cancel(&self) {
        if let Stage::Running(running) = &*self.stage.lock().await {
            let _ = running.commands.send(UserCommand::Interrupt);
        }
    }

    pub(super) async fn set_mode(&self, mode: Mode) {
        match &mut *self.stage.lock().await {
            Stage::Running(running) => {
                let _ = running.commands.send(UserCommand::SetMode(mode));
            }
            Stage::Unstarted { mode: waiting, .. } => {
                *waiting = mode;
                self.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str()))));
            }
            Stage::Stopped => {}
        }
    }

    /// Stop the agent, letting it commit what it was writing.
    pub(super) async fn shut_down(&self) {
        let stage = std::mem::replace(&mut *self.stage.lock().await, Stage::Stopped);
        if let Stage::Running(Running { stop, pump, .. }) = stage {
            let _ = stop.send(());
            let _ = pump.await;
        }
    }

    fn send(&self, update: SessionUpdate) {
        if let Err(e) = self.cx.send_notification(SessionNotification::new(self.id.clone(), update)) {
            tracing::debug!(error = %e, "an update did not reach the client");
        }
    }
}

/// A JSON-RPC error whose message says what happened.
pub(super) fn failed(why: impl Into<String>) -> Error {
    Error::new(agent_client_protocol::ErrorCode::INTERNAL_ERROR, why.into())
}

/// The prompt as cairn takes it: its text, and each file the user mentioned as an `@path`
/// (read by cairn, so it shows the file as the editor holds it), or, embedded by the client,
/// as the text it sent.
pub(super) fn prompt_text(blocks: &[ContentBlock], root: &Path) -> String {
    let mut out = String::new();
    let mention = |uri: &str| {
        let path = uri.strip_prefix("file://").unwrap_or(uri);
        let path = Path::new(path);
        let shown = path.strip_prefix(root).unwrap_or(path);
        format!("@{}", shown.display())
    };
    for block in blocks {
        let piece = match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::ResourceLink(link) => mention(&link.uri),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(file) => {
                    format!("\n<file uri=\"{}\">\n{}\n</file>\n", file.uri, file.text)
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => mention(&blob.uri),
                _ => continue,
            },
            _ => continue,
        };
        if !out.is_empty() && !out.ends_with(char::is_whitespace) && !piece.starts_with(char::is_whitespace) {
            out.push(' ');
        }
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{ResourceLink, TextContent};

    use super::*;

    #[test]
    fn mentioned_files_become_at_paths() {
        let blocks = [
            ContentBlock::Text(TextContent::new("explain")),
            ContentBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///p/src/lib.rs")),
            ContentBlock::Text(TextContent::new("please")),
        ];
        assert_eq!(prompt_text(&blocks, Path::new("/p")), "explain @src/lib.rs please");
        assert_eq!(prompt_text(&[], Path::new("/p")), "");
    }
}
