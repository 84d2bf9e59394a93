//! The thin adapter over `rmcp`: connect to one server (a child process on stdio, or
//! streamable HTTP), list its tools, call one. Everything of rmcp's API stays in this file, so
//! an SDK update touches nothing else.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService, RunningServiceCancellationToken, ServiceExt};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio_util::sync::CancellationToken;

use super::expand::expand;
use crate::config::McpServerConfig;

/// Builds the HTTP client for a server URL (cairn's one TLS set-up, given by the caller).
pub type HttpClientFactory = Arc<dyn Fn(&str) -> Result<reqwest::Client, String> + Send + Sync>;

/// One tool a server offers, as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolInfo {
    /// The server's own name for it.
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: serde_json::Value,
    /// The server says the tool changes nothing (`readOnlyHint`).
    pub read_only: bool,
}

/// What a call returned, as text (images and binary resources described), and the first image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpOutput {
    pub text: String,
    pub is_error: bool,
    /// Images the server returned (each also described in `text`).
    pub images: usize,
    /// The first of them, decoded, for the model to see where it can.
    pub first_image: Option<Vec<u8>>,
}

/// Why a server or a call failed, in words for the user and the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The server could not be started or reached, or its connection is gone.
    #[error("{0}")]
    Connection(String),
    /// The server answered the call with a protocol error.
    #[error("{0}")]
    Call(String),
    #[error("the call took longer than {0} ms and was abandoned")]
    Timeout(u64),
    #[error("interrupted")]
    Cancelled,
}

/// A live connection to a server.
pub struct Connection {
    peer: rmcp::service::Peer<RoleClient>,
    stop: Option<RunningServiceCancellationToken>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
    }
}

/// What [`connect`] returns: the connection, its tools, and a future that resolves when the
/// connection ends (the server exited or the transport broke) with why.
pub struct Connected {
    pub connection: Connection,
    pub tools: Vec<McpToolInfo>,
    pub closed: futures_util::future::BoxFuture<'static, String>,
}

/// A project's server that names a variable it may not read is not started at all: the
/// value would reach its process, its URL or its headers.
fn refuse_unlisted_variables(server: &McpServerConfig) -> Result<(), McpError> {
    let texts = server
        .command
        .iter()
        .chain(&server.args)
        .chain(server.env.values())
        .chain(&server.url)
        .chain(server.headers.values());
    for name in texts.flat_map(|t| super::expand::variables(t)) {
        if server.may_read(&name) {
            continue;
        }
        let why = if crate::config::KEY_VARS.contains(&name.as_str()) {
            "a provider key never leaves cairn".to_string()
        } else {
            format!(
                "a project's server reads only the variables your config.toml lists in [mcp] project_variables; add {name} there to let it"
            )
        };
        return Err(McpError::Connection(format!(
            "not started: it names ${{{name}}} in the project's settings, which is not expanded for it ({why})"
        )));
    }
    Ok(())
}

fn client_info() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
}

/// Start (stdio) or reach (HTTP) the server, shake hands and list its tools.
pub async fn connect(
    server: &McpServerConfig,
    root: &Path,
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
    http: &HttpClientFactory,
) -> Result<Connected, McpError> {
    refuse_unlisted_variables(server)?;
    let running = match (&server.command, &server.url) {
        (Some(command), _) => {
            let mut cmd = tokio::process::Command::new(expand(command, env).map_err(McpError::Connection)?);
            for arg in &server.args {
                cmd.arg(expand(arg, env).map_err(McpError::Connection)?);
            }
            for (key, value) in &server.env {
                cmd.env(key, expand(value, env).map_err(McpError::Connection)?);
            }
            let cwd = server.cwd.as_deref().map_or_else(|| root.to_path_buf(), |c| root.join(c));
            cmd.current_dir(cwd);
            let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
            // Its own process group, killed whole when the connection ends, so a server's
            // helpers never outlive cairn.
            #[cfg(unix)]
            wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
            wrapped.wrap(process_wrap::tokio::KillOnDrop);
            // The server's own log lines would scribble over the full-screen interface.
            let (transport, _) = TokioChildProcess::builder(wrapped)
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| McpError::Connection(format!("cannot start `{command}`: {e}")))?;
            client_info().serve(transport).await.map_err(|e| McpError::Connection(handshake_failed(&e.to_string())))?
        }
        (None, Some(url)) => {
            let url = expand(url, env).map_err(McpError::Connection)?;
            let mut headers = HashMap::new();
            for (name, value) in &server.headers {
                let value = expand(value, env).map_err(McpError::Connection)?;
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| McpError::Connection(format!("header `{name}` is not a valid name: {e}")))?;
                let mut value = reqwest::header::HeaderValue::from_str(&value)
                    .map_err(|_| McpError::Connection(format!("the value of header `{name}` is not valid")))?;
                value.set_sensitive(true);
                headers.insert(name, value);
            }
            let client = http(&url).map_err(McpError::Connection)?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers);
            // Room for a large result: capping it is the agent's job, after it arrives whole.
            config.max_json_response_size = 64 << 20;
            config.max_sse_event_size = 64 << 20;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            client_info().serve(transport).await.map_err(|e| McpError::Connection(handshake_failed(&e.to_string())))?
        }
        (None, None) => return Err(McpError::Connection("has neither `command` nor `url`".into())),
    };
    let tools = running
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| McpError::Connection(format!("listing its tools failed: {e}")))?
        .into_iter()
        .map(tool_info)
        .collect();
    let peer = running.peer().clone();
    let stop = running.cancellation_token();
    let closed = Box::pin(closed(running));
    Ok(Connected { connection: Connection { peer, stop: Some(stop) }, tools, closed })
}

async fn closed(running: RunningService<RoleClient, ClientConfig>) -> String {
    match running.waiting().await {
        Ok(reason) => format!("the connection ended ({reason:?})"),
        Err(e) => format!("the connection ended ({e})"),
    }
}

fn handshake_failed(error: &str) -> String {
    format!("the MCP handshake failed: {error}")
}

fn tool_info(tool: rmcp::model::Tool) -> McpToolInfo {
    McpToolInfo {
        name: tool.name.to_string(),
        description: tool.description.as_deref().unwrap_or("").to_string(),
        input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
        read_only: tool.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false),
    }
}

impl Connection {
    pub fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Call `tool` with `arguments` (a JSON object), giving up after `timeout` or on `cancel`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<McpOutput, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let serde_json::Value::Object(map) = arguments {
            params = params.with_arguments(map);
        }
        let call = self.peer.call_tool(params);
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(McpError::Cancelled),
            _ = tokio::time::sleep(timeout) => return Err(McpError::Timeout(timeout.as_millis() as u64)),
            result = call => result,
        };
        match result {
            Ok(result) => Ok(render(result)),
            Err(rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)) => {
                Err(McpError::Connection("the server's connection is gone".into()))
            }
            Err(e) => Err(McpError::Call(e.to_string())),
        }
    }
}

/// A call's result as text: text blocks as they are, text resources with their URI, images
/// and binary contents described; structured content when there is nothing else.
fn render(result: rmcp::model::CallToolResult) -> McpOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut images = 0;
    let mut first_image = None;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => {
                images += 1;
                if first_image.is_none() {
                    use base64::Engine;
                    first_image = base64::engine::general_purpose::STANDARD.decode(i.data.as_bytes()).ok();
                }
                parts.push(format!("[image: {}, about {} bytes]", i.mime_type, i.data.len() / 4 * 3));
            }
            ContentBlock::Audio(a) => parts.push(format!("[audio: {}, not shown]", a.mime_type)),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("[resource {uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => parts.push(format!(
                    "[resource {uri}: {}, about {} bytes of binary content, not shown]",
                    mime_type.as_deref().unwrap_or("binary"),
                    blob.len() / 4 * 3
                )),
                _ => parts.push("[a resource of a kind cairn cannot show]".into()),
            },
            ContentBlock::ResourceLink(link) => {
                let about = link.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
                parts.push(format!("[resource link {} ({}){about}]", link.uri, link.name));
            }
            // A content kind this version of cairn does not know: say so rather than drop it.
            _ => parts.push("[content of a kind cairn cannot show]".into()),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string()));
    }
    McpOutput { text: parts.join("\n"), is_error: result.is_error.unwrap_or(false), images, first_image }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_render_as_text_with_images_and_resources_described() {
        let result = rmcp::model::CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("aGVsbG8gd29ybGQh", "image/png"),
            ContentBlock::Resource(rmcp::model::EmbeddedResource::new(ResourceContents::text("body", "file:///a.txt"))),
        ]);
        let out = render(result);
        assert!(out.text.starts_with("hello\n[image: image/png, about 12 bytes]"), "{}", out.text);
        assert_eq!(out.first_image.as_deref(), Some(&b"hello world!"[..]));
        assert!(out.text.contains("[resource file:///a.txt]\nbody"), "{}", out.text);
        assert_eq!(out.images, 1);
        assert!(!out.is_error);
    }
}
