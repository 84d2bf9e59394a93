//! The client's terminals (`terminal/*`) as `bash`'s: a command of a call the client is shown
//! runs in a terminal of the client's — through cairn's launcher, which confines it — and the
//! call shows that terminal live (told through the pump, after what it already said of the
//! call).

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, SessionId, TerminalExitStatus,
    TerminalOutputRequest, WaitForTerminalExitRequest,
};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use crate::tools::{TerminalCommand, TerminalExit, TerminalOutput, Terminals};

/// A terminal now runs the command of a call: the pump shows it in that call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Opened {
    pub call_id: String,
    pub terminal_id: String,
}

pub(super) struct ClientTerminals {
    pub cx: ConnectionTo<Client>,
    pub session: SessionId,
    pub opened: mpsc::UnboundedSender<Opened>,
}

fn exit_of(status: TerminalExitStatus) -> TerminalExit {
    TerminalExit { code: status.exit_code, signal: status.signal }
}

impl Terminals for ClientTerminals {
    fn create<'a>(&'a self, command: &'a TerminalCommand) -> BoxFuture<'a, Result<String, String>> {
        async move {
            let env = command.env.iter().map(|(name, value)| EnvVariable::new(name, value)).collect();
            let request = CreateTerminalRequest::new(self.session.clone(), command.program.display().to_string())
                .args(command.args.clone())
                .env(env)
                .cwd(command.cwd.clone())
                .output_byte_limit(command.output_limit);
            let created = self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            let terminal_id = created.terminal_id.0.to_string();
            let _ = self.opened.send(Opened { call_id: command.call_id.clone(), terminal_id: terminal_id.clone() });
            Ok(terminal_id)
        }
        .boxed()
    }

    fn wait_for_exit<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>> {
        async move {
            let request = WaitForTerminalExitRequest::new(self.session.clone(), id.to_string());
            let waited = self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(exit_of(waited.exit_status))
        }
        .boxed()
    }

    fn output<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>> {
        async move {
            let request = TerminalOutputRequest::new(self.session.clone(), id.to_string());
            let kept = self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(TerminalOutput { text: kept.output, truncated: kept.truncated, exit: kept.exit_status.map(exit_of) })
        }
        .boxed()
    }

    fn kill<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        async move {
            let request = KillTerminalRequest::new(self.session.clone(), id.to_string());
            self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(())
        }
        .boxed()
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        async move {
            let request = ReleaseTerminalRequest::new(self.session.clone(), id.to_string());
            self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(())
        }
        .boxed()
    }
}
