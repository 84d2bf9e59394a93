//! A real MCP server on the official SDK (`rmcp`), for cairn's client to talk to: over
//! streamable HTTP on loopback inside the test process ([`HttpServers`]), or over stdio as a
//! child process — the integration-test binary itself, re-run on one ignored test
//! (`mcp::stdio_server`) that speaks MCP on stdin and fd 3 (libtest prints its own lines on
//! stdout, which the launch line sends to stderr).
//!
//! Its tools: `echo` (read-only), `big` (a result of `bytes` bytes), `crash` (the server dies
//! mid-call), and `filler_NN` tools with wordy schemas to make a large tool set.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The environment variable that turns the ignored test into the stdio server.
pub const STDIO_ENV: &str = "CAIRN_TEST_MCP_STDIO";
/// How many `filler_NN` tools the stdio server lists.
pub const FILLER_ENV: &str = "CAIRN_TEST_MCP_FILLER";

#[derive(Clone)]
pub struct TestServer {
    /// How many `filler_NN` tools to list besides the core ones.
    pub filler: usize,
    /// What `crash` does: stops the server.
    pub crash: Arc<dyn Fn() + Send + Sync>,
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas here are objects"),
    }
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Echo the text back.",
                schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "big",
                "Return `bytes` bytes of numbered lines.",
                schema(json!({"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]})),
            ),
            Tool::new("crash", "Stop the server in the middle of the call.", schema(json!({"type": "object"}))),
            Tool::new("picture", "Return a small PNG.", schema(json!({"type": "object"})))
                .with_annotations(ToolAnnotations::new().read_only(true)),
        ];
        for i in 0..self.filler {
            let properties: serde_json::Map<String, Value> = (0..6)
                .map(|p| {
                    (
                        format!("field_{p}"),
                        json!({"type": "string", "description": format!("Field {p} of filler tool {i}: a long explanation of what this value means, which formats it takes, and what the server does with it when it is empty.")}),
                    )
                })
                .collect();
            tools.push(Tool::new(
                format!("filler_{i:02}"),
                format!("Filler tool number {i}: looks up records of kind {i} in the test server's catalogue and returns them as a table."),
                schema(json!({"type": "object", "properties": properties})),
            ));
        }
        tools
    }
}

/// `big`'s text: numbered lines until `bytes`.
pub fn big_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 64);
    let mut n = 0;
    while out.len() < bytes {
        out.push_str(&format!("line {n:07} of the big result, padded to be a realistic line of text\n"));
        n += 1;
    }
    out.truncate(bytes);
    out
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![Content::text(format!(
                "echo: {}",
                args.get("text").and_then(Value::as_str).unwrap_or("")
            ))]),
            "big" => {
                let bytes = args.get("bytes").and_then(Value::as_u64).unwrap_or(1000) as usize;
                CallToolResult::success(vec![Content::text(big_text(bytes))])
            }
            "picture" => {
                use base64::Engine;
                let mut png = std::io::Cursor::new(Vec::new());
                image::RgbImage::from_pixel(8, 6, image::Rgb([200, 30, 30]))
                    .write_to(&mut png, image::ImageFormat::Png)
                    .unwrap();
                let data = base64::engine::general_purpose::STANDARD.encode(png.into_inner());
                CallToolResult::success(vec![Content::text("a red rectangle"), Content::image(data, "image/png")])
            }
            "crash" => {
                (self.crash)();
                // The server is going away; this answer may never arrive.
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                CallToolResult::error(vec![Content::text("still alive")])
            }
            name if name.starts_with("filler_") => {
                CallToolResult::success(vec![Content::text(format!("{name} ran with {}", Value::Object(args)))])
            }
            other => return Err(ErrorData::invalid_params(Cow::Owned(format!("no tool {other}")), None)),
        };
        Ok(result.into())
    }
}

/// Serve MCP on stdin and fd 3 until stdin closes; `crash` exits the process.
pub fn serve_stdio() {
    use std::os::fd::FromRawFd;
    let filler = std::env::var(FILLER_ENV).ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        use rmcp::ServiceExt;
        // SAFETY: the launch line (`3>&1`) opens fd 3 as the pipe to cairn; nothing else in
        // this process owns it.
        let out = tokio::fs::File::from_std(unsafe { std::fs::File::from_raw_fd(3) });
        let server = TestServer { filler, crash: Arc::new(|| std::process::exit(3)) };
        let running = server.serve((tokio::io::stdin(), out)).await.expect("the MCP handshake");
        let _ = running.waiting().await;
    });
}

/// The `[mcp_servers.NAME]` table that starts the stdio server.
pub fn stdio_config(name: &str, filler: usize) -> String {
    let exe = std::env::current_exe().unwrap();
    format!(
        "[mcp_servers.{name}]\ncommand = \"sh\"\nargs = [\"-c\", 'exec \"$0\" --ignored --exact mcp::stdio_server --nocapture --test-threads=1 3>&1 1>&2', \"{}\"]\nenv = {{ {STDIO_ENV} = \"1\", {FILLER_ENV} = \"{filler}\" }}\n",
        exe.display()
    )
}

/// MCP servers over streamable HTTP on one loopback port, at `/NAME` each; dropped, they stop.
pub struct HttpServers {
    pub addr: std::net::SocketAddr,
    /// Every `Authorization` header the servers were sent.
    pub authorizations: Arc<std::sync::Mutex<Vec<String>>>,
    stop: CancellationToken,
}

impl Drop for HttpServers {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl HttpServers {
    /// One server per `(name, filler)`. `crash` on any of them stops them all.
    pub async fn start(servers: &[(&str, usize)]) -> HttpServers {
        let stop = CancellationToken::new();
        let mut router = axum::Router::new();
        for (name, filler) in servers {
            let (filler, crash_stop) = (*filler, stop.clone());
            let crash: Arc<dyn Fn() + Send + Sync> = Arc::new(move || crash_stop.cancel());
            let service: StreamableHttpService<TestServer, LocalSessionManager> = StreamableHttpService::new(
                move || Ok(TestServer { filler, crash: crash.clone() }),
                Default::default(),
                StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
            );
            router = router.nest_service(&format!("/{name}"), service);
        }
        let authorizations = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = authorizations.clone();
        let router = router.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                if let Some(value) = request.headers().get("authorization").and_then(|v| v.to_str().ok()) {
                    seen.lock().unwrap().push(value.to_string());
                }
                next.run(request)
            },
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let until = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { until.cancelled_owned().await })
                .await;
        });
        HttpServers { addr, authorizations, stop }
    }

    /// The `[mcp_servers.NAME]` table for the server at `/NAME`.
    pub fn config(&self, name: &str) -> String {
        format!("[mcp_servers.{name}]\nurl = \"http://{}/{name}\"\n", self.addr)
    }
}
