//! The client's files (`fs/read_text_file`, `fs/write_text_file`) as the file tools' editor:
//! reads see the editor's buffers, unsaved changes included, and edits land in them. When the
//! client offers terminals, they are the editor's too (`terminals`).

use std::path::Path;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::terminals::ClientTerminals;
use crate::tools::{Editor, Terminals};

pub(super) struct ClientEditor {
    pub cx: ConnectionTo<Client>,
    pub session: SessionId,
    pub reads: bool,
    pub writes: bool,
    pub terminals: Option<ClientTerminals>,
}

impl Editor for ClientEditor {
    fn reads_files(&self) -> bool {
        self.reads
    }

    fn writes_files(&self) -> bool {
        self.writes
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        async move {
            let request = ReadTextFileRequest::new(self.session.clone(), path);
            let read = self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(read.content)
        }
        .boxed()
    }

    fn write_file<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>> {
        async move {
            let request = WriteTextFileRequest::new(self.session.clone(), path, text);
            self.cx.send_request(request).block_task().await.map_err(|e| e.to_string())?;
            Ok(())
        }
        .boxed()
    }

    fn terminals(&self) -> Option<&dyn Terminals> {
        self.terminals.as_ref().map(|t| t as &dyn Terminals)
    }
}
