//! The call path on its own, without a worker: real parts (a store, hooks run by `sh`, an MCP
//! server over loopback HTTP, files saved on disk) around tools made for the test.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{Calls, CutLimits, Host};
use crate::agent::approvals::{ApprovalDesk, ApprovalGate};
use crate::agent::events::{AgentEvent, ApprovalDecision, ApprovalKind};
use crate::agent::extensions::Extensions;
use crate::agent::link::{Emitter, Link, TurnControl};
use crate::agent::saved_outputs::SavedOutputs;
use crate::agent::tool_section::ToolSection;
use crate::agent::toolbox::Toolbox;
use crate::agent::workplace::Workplace;
use crate::config::{Config, HookConfig, McpServerConfig, Redactor};
use crate::context::TruncationLimits;
use crate::conversation::{FinishedCall, Image, Mode, ToolCall};
use crate::store::Store;
use crate::tools::permissions::{Effect, Policy, Rules};
use crate::tools::{
    Access, ApprovalPolicy, Prepared, Registry, SandboxPolicy, Tool, ToolContext, ToolError, ToolOutput, Unattended,
};

/// A tool that answers as the test says and counts its runs.
struct Fake {
    name: &'static str,
    access: Access,
    answer: fn(&Value) -> ToolOutput,
    runs: Arc<AtomicUsize>,
    /// The sandboxes `execute_in_sandbox` was given.
    sandboxes: Arc<Mutex<Vec<SandboxPolicy>>>,
    /// Every run waits here first (to see which calls run together).
    meet: Option<Arc<tokio::sync::Barrier>>,
}

impl Fake {
    fn new(name: &'static str, access: Access, answer: fn(&Value) -> ToolOutput) -> Fake {
        Fake { name, access, answer, runs: Arc::default(), sandboxes: Arc::default(), meet: None }
    }
}

impl Tool for Fake {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "A tool of the test."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn access(&self) -> Access {
        self.access
    }

    fn prepare(&self, args: &Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        Ok(Prepared::new(args.get("text").and_then(Value::as_str).unwrap_or(self.name)))
    }

    fn execute<'a>(
        &'a self,
        args: &'a Value,
        _prepared: Prepared,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if let Some(meet) = &self.meet {
                meet.wait().await;
            }
            self.runs.fetch_add(1, Ordering::SeqCst);
            Ok((self.answer)(args))
        })
    }

    fn execute_in_sandbox<'a>(
        &'a self,
        _args: &'a Value,
        _prepared: Prepared,
        _ctx: &'a ToolContext,
        sandbox: &'a SandboxPolicy,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.sandboxes.lock().unwrap().push(sandbox.clone());
        Box::pin(async { Ok(ToolOutput::text("ran outside")) })
    }
}

fn said(args: &Value) -> ToolOutput {
    ToolOutput::text(format!("said: {}", args["text"].as_str().unwrap_or("")))
}

/// `bytes` bytes of numbered lines.
fn big(args: &Value) -> ToolOutput {
    let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
    let mut text = String::new();
    let mut n = 0;
    while text.len() < bytes {
        text.push_str(&format!("line {n:06} of a long build log, as a real one would be\n"));
        n += 1;
    }
    text.truncate(bytes);
    ToolOutput::text(text)
}

fn stopped_by_the_sandbox(_: &Value) -> ToolOutput {
    ToolOutput {
        content: "touch: cannot touch '/etc/x': Permission denied".into(),
        is_error: true,
        exit_code: Some(1),
        sandbox_denial: Some("it wrote outside the project".into()),
        ..Default::default()
    }
}

/// What the agent would keep and tell, kept for the test to look at.
#[derive(Default)]
struct Kept {
    calls: Vec<FinishedCall>,
    cut: u64,
}

impl Host for Kept {
    fn finished(&mut self, call: FinishedCall, _image: Option<Image>) {
        self.calls.push(call);
    }

    fn cut(&mut self, count: u64) {
        self.cut += count;
    }

    fn approved_memory(&self, _by: &str, ctx: &ToolContext) -> ToolContext {
        ctx.clone()
    }

    fn delegate(&self, _call: &ToolCall, _tools: &Toolbox, _ctx: &ToolContext) -> Option<ToolContext> {
        None
    }
}

/// A project and the parts the path borrows.
struct Bench {
    /// The project, and cairn's data folder beside it.
    _dirs: [tempfile::TempDir; 2],
    saved_dir: PathBuf,
    place: Workplace,
    ext: Extensions,
    link: Link,
    tools: Toolbox,
    desk: Arc<ApprovalDesk>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    ctx: ToolContext,
    _mode: watch::Sender<Mode>,
}

/// The limits cairn's defaults give a 200k window.
fn limits() -> CutLimits {
    CutLimits { each: TruncationLimits { max_lines: 2_000, max_bytes: 50_000, head_share: 0.6 }, reply: 100_000 }
}

async fn open_bench(config: Config, tools: Vec<Box<dyn Tool>>, approval: ApprovalPolicy, deny: &[&str]) -> Bench {
    let (project_dir, ctx) = crate::tools::test_support::project();
    let root = ctx.root.clone();
    let data = tempfile::tempdir().unwrap();
    let (tx, events) = mpsc::unbounded_channel();
    let (mode_tx, mode) = watch::channel(Mode::Edit);
    let link = Link::new(Emitter::new(tx), mode, TurnControl::default());
    let trust = crate::trust::ProjectTrust::untrusted_for_tests(&root);
    let ext = Extensions::load(&config, &root, &[], &trust, link.emitter());
    ext.hub.start();
    ext.hub.settled(Duration::from_secs(10), &CancellationToken::new()).await;
    let store = Arc::new(Store::open_in_memory().unwrap());
    let project = store.project(&root).unwrap();
    let budget = config.mcp.tool_budget_tokens;
    let place =
        Workplace::new(store, project, root.clone(), root.clone(), config, data.path().join("truncations"), trust);
    let mut rules = Rules::new();
    for rule in deny {
        rules.add_flag(Effect::Deny, rule).unwrap();
    }
    let desk = Arc::new(ApprovalDesk::default());
    let section = ToolSection::new(Arc::new(Registry::new(tools)), ext.hub.clone(), ext.skills.clone(), budget, 4.0);
    let tools = Toolbox::new(
        section,
        ApprovalGate::new(approval, desk.clone()),
        Policy::new(rules, &root),
        SandboxPolicy::full_access(),
    );
    let saved_dir = place.truncations_dir().to_path_buf();
    Bench { _dirs: [project_dir, data], saved_dir, place, ext, link, tools, desk, events, ctx, _mode: mode_tx }
}

impl Bench {
    /// Run `calls` as one reply's, answering every dialog with `answer`; what the host kept,
    /// the calls refused, and every event in order.
    async fn run(
        &mut self,
        calls: &[ToolCall],
        answer: fn(&ApprovalKind) -> ApprovalDecision,
        cancel: &CancellationToken,
    ) -> (Kept, u32, Vec<AgentEvent>) {
        let saved = SavedOutputs::new(&self.saved_dir, &self.ctx.root, "s1", &Redactor::default());
        let mut path = Calls::new(&mut self.tools, &self.ext, &self.place, &self.link, saved);
        let mut kept = Kept::default();
        let done = CancellationToken::new();
        let run = async {
            let denied = path.run(calls, &self.ctx, cancel, limits(), &mut kept).await;
            done.cancel();
            denied
        };
        let (events, desk) = (&mut self.events, &self.desk);
        let watch = async {
            let mut seen = Vec::new();
            loop {
                tokio::select! {
                    event = events.recv() => {
                        let Some(event) = event else { break };
                        if let AgentEvent::ApprovalRequested(request) = &event {
                            desk.answer(request.id, answer(&request.kind));
                        }
                        seen.push(event);
                    }
                    _ = done.cancelled() => break,
                }
            }
            while let Ok(event) = events.try_recv() {
                seen.push(event);
            }
            seen
        };
        let (denied, seen) = tokio::join!(run, watch);
        (kept, denied, seen)
    }
}

fn approve(_: &ApprovalKind) -> ApprovalDecision {
    ApprovalDecision::Approve
}

fn call(id: &str, tool: &str, args: Value) -> ToolCall {
    ToolCall::new(id, tool, args.to_string())
}

#[tokio::test]
async fn a_tool_call_runs_to_one_record_and_an_unknown_tool_to_a_refusal() {
    let echo = Fake::new("echo", Access::Read, said);
    let runs = echo.runs.clone();
    let mut bench =
        open_bench(Config::default(), vec![Box::new(echo)], ApprovalPolicy::DenyAll(Unattended::Headless), &[]).await;
    let calls = [call("c1", "echo", json!({"text": "hi"})), call("c2", "nope", json!({}))];
    let (kept, denied, events) = bench.run(&calls, approve, &CancellationToken::new()).await;
    assert_eq!((runs.load(Ordering::SeqCst), denied), (1, 0));
    let [ran, unknown] = &kept.calls[..] else { panic!("{:?}", kept.calls) };
    assert_eq!((ran.call_id.as_str(), ran.tool.as_str(), ran.summary.as_str()), ("c1", "echo", "hi"));
    assert_eq!((ran.output.as_str(), ran.content.as_str()), ("said: hi", "said: hi"));
    assert!(!ran.not_run && !ran.is_error);
    assert_eq!(ran.decided_by.as_deref(), Some("mode"), "read inside the project: the mode allows it");
    assert_eq!(ran.result().content, "said: hi", "the message the model reads is made from the record");
    assert!(unknown.not_run && unknown.is_error);
    assert_eq!(unknown.content, "There is no tool named `nope`. The available tools are: echo.");
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStarted { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["c1"], "a call that never runs never starts");
}

#[tokio::test]
async fn consecutive_read_only_calls_run_together_and_an_interrupt_starts_none() {
    let mut echo = Fake::new("echo", Access::Read, said);
    echo.meet = Some(Arc::new(tokio::sync::Barrier::new(2)));
    let runs = echo.runs.clone();
    let mut bench =
        open_bench(Config::default(), vec![Box::new(echo)], ApprovalPolicy::DenyAll(Unattended::Headless), &[]).await;
    let calls = [call("a", "echo", json!({"text": "a"})), call("b", "echo", json!({"text": "b"}))];
    // One at a time, the first would wait at the barrier for ever.
    let cancel = CancellationToken::new();
    let ran = tokio::time::timeout(Duration::from_secs(10), bench.run(&calls, approve, &cancel));
    let (kept, _, _) = ran.await.expect("the two reads ran together");
    assert_eq!(kept.calls.iter().map(|c| c.output.as_str()).collect::<Vec<_>>(), ["said: a", "said: b"]);

    let interrupted = CancellationToken::new();
    interrupted.cancel();
    let (kept, _, _) = bench.run(&calls, approve, &interrupted).await;
    assert_eq!(runs.load(Ordering::SeqCst), 2, "nothing ran after the interrupt");
    assert!(kept.calls.iter().all(|c| c.not_run && c.content.contains("interrupted the turn before this call")));
}

#[tokio::test]
async fn a_denying_pre_tool_use_hook_stops_the_call_before_it_runs() {
    let mut config = Config::default();
    config.hooks.pre_tool_use.push(HookConfig {
        matcher: "echo".into(),
        command: "echo 'not on a Friday' >&2; exit 2".into(),
        ..Default::default()
    });
    let echo = Fake::new("echo", Access::Read, said);
    let runs = echo.runs.clone();
    let mut bench = open_bench(config, vec![Box::new(echo)], ApprovalPolicy::ApproveAll, &[]).await;
    let (kept, denied, events) =
        bench.run(&[call("c1", "echo", json!({"text": "hi"}))], approve, &CancellationToken::new()).await;
    assert_eq!((runs.load(Ordering::SeqCst), denied), (0, 1));
    let refused = &kept.calls[0];
    assert!(refused.not_run);
    assert_eq!(refused.decided_by.as_deref(), Some("hook"));
    assert_eq!(refused.approval.as_deref(), Some("denied by PreToolUse hook `echo 'not on a Friday' >&2; exit 2`"));
    assert!(refused.content.contains("a PreToolUse hook refused it: not on a Friday"), "{}", refused.content);
    // The call's own line says it: no notice says it again.
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Notice { text, .. } if text.contains("Friday"))));
}

#[tokio::test]
async fn a_command_the_sandbox_stopped_runs_outside_only_when_the_user_says_so() {
    fn outside_no(kind: &ApprovalKind) -> ApprovalDecision {
        match kind {
            ApprovalKind::OutsideSandbox { .. } => ApprovalDecision::Deny { reason: None },
            ApprovalKind::Call => ApprovalDecision::Approve,
        }
    }
    let args = json!({"text": "touch /etc/x"});
    let risky = || Fake::new("risky", Access::Execute, stopped_by_the_sandbox);

    // At the screen, the user says yes: the command runs again, with no sandbox at all.
    let tool = risky();
    let sandboxes = tool.sandboxes.clone();
    let mut bench = open_bench(Config::default(), vec![Box::new(tool)], ApprovalPolicy::Ask, &[]).await;
    let (kept, _, events) = bench.run(&[call("c1", "risky", args.clone())], approve, &CancellationToken::new()).await;
    let asked: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalRequested(r) => Some(r.kind.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        [ApprovalKind::Call, ApprovalKind::OutsideSandbox { why: "it wrote outside the project".into() }]
    );
    assert_eq!(*sandboxes.lock().unwrap(), [SandboxPolicy::full_access()]);
    let ran = &kept.calls[0];
    assert_eq!((ran.output.as_str(), ran.is_error), ("ran outside", false));
    assert_eq!(
        ran.approval.as_deref(),
        Some("run outside the sandbox, approved by you (the sandbox stopped it: it wrote outside the project)")
    );

    // The user keeps it inside: nothing runs again, and the model is told.
    let tool = risky();
    let sandboxes = tool.sandboxes.clone();
    let mut bench = open_bench(Config::default(), vec![Box::new(tool)], ApprovalPolicy::Ask, &[]).await;
    let (kept, _, _) = bench.run(&[call("c1", "risky", args.clone())], outside_no, &CancellationToken::new()).await;
    assert!(sandboxes.lock().unwrap().is_empty());
    let kept_in = &kept.calls[0];
    assert!(kept_in.is_error && kept_in.content.ends_with("[the user chose not to run it outside the sandbox]"));
    assert_eq!(kept_in.decided_by.as_deref(), Some("sandbox"));

    // With --yes, the sandbox is never lifted and nobody is asked about it; the model is told
    // why as it is true there (not "headless": the terminal takes --yes too).
    let tool = risky();
    let sandboxes = tool.sandboxes.clone();
    let mut bench = open_bench(Config::default(), vec![Box::new(tool)], ApprovalPolicy::ApproveAll, &[]).await;
    let (kept, _, events) = bench.run(&[call("c1", "risky", args.clone())], approve, &CancellationToken::new()).await;
    assert!(sandboxes.lock().unwrap().is_empty());
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested(_))));
    let stopped = &kept.calls[0];
    assert!(
        stopped.content.contains("cairn runs with --yes, and --yes never runs a command outside the sandbox here"),
        "{}",
        stopped.content
    );
    assert_eq!(
        stopped.approval.as_deref(),
        Some("stopped by the sandbox: it wrote outside the project (--yes never lifts it)")
    );

    // Where no one can be asked, the call is refused before it runs, and the model is told what
    // would let it run there: --yes or --allow headless, the rules and --allow under mcp-serve.
    let unattended = [
        (Unattended::Headless, "cairn is running headless without --yes", "rerun with --yes or an --allow rule"),
        (
            Unattended::McpClient,
            "cairn is serving another agent over MCP",
            "--allow where `cairn mcp-serve` is configured",
        ),
    ];
    for (unattended, situation, remedy) in unattended {
        let tool = risky();
        let runs = tool.runs.clone();
        let mut bench =
            open_bench(Config::default(), vec![Box::new(tool)], ApprovalPolicy::DenyAll(unattended), &[]).await;
        let (kept, denied, _) =
            bench.run(&[call("c1", "risky", args.clone())], approve, &CancellationToken::new()).await;
        assert_eq!((runs.load(Ordering::SeqCst), denied), (0, 1));
        let told = &kept.calls[0].content;
        assert!(told.contains(situation) && told.contains(remedy), "{unattended:?}: {told}");
        if unattended == Unattended::McpClient {
            assert!(!told.contains("--yes") && !told.contains("headless"), "{told}");
        }
    }
}

#[tokio::test]
async fn a_large_output_is_cut_for_the_model_and_saved_whole() {
    let mut bench = open_bench(
        Config::default(),
        vec![Box::new(Fake::new("big", Access::Read, big))],
        ApprovalPolicy::DenyAll(Unattended::Headless),
        &[],
    )
    .await;
    let (kept, _, events) =
        bench.run(&[call("c1", "big", json!({"bytes": 300_000}))], approve, &CancellationToken::new()).await;
    let cut = &kept.calls[0];
    assert_eq!(cut.output.len(), 300_000, "the record keeps the whole output");
    assert!(cut.content.len() < 51_000, "{}", cut.content.len());
    assert!(cut.content.starts_with("line 000000") && cut.content.contains("line 005"), "head and tail kept");
    let saved = saved_path(&cut.content);
    assert!(saved.starts_with(&bench.saved_dir), "{}", saved.display());
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), cut.output);
    assert_eq!(kept.cut, 1);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ContextStage(r) if r.count == 1)));

    // Three such results of one reply pass its cap together: the largest are cut further.
    let calls: Vec<_> = (1..=3).map(|i| call(&format!("d{i}"), "big", json!({"bytes": 80_000}))).collect();
    let (kept, _, _) = bench.run(&calls, approve, &CancellationToken::new()).await;
    let sent: Vec<usize> = kept.calls.iter().map(|c| c.content.len()).collect();
    assert!(sent.iter().sum::<usize>() <= limits().reply, "{sent:?} bytes sent of one reply");
    assert_eq!(sent.iter().filter(|&&n| n < 10_000).count(), 2, "the largest, until the rest fits: {sent:?}");
    for c in &kept.calls {
        assert_eq!(std::fs::read_to_string(saved_path(&c.content)).unwrap(), c.output);
    }
}

/// The file a truncation notice names.
fn saved_path(content: &str) -> PathBuf {
    let start = content.find("full output saved to ").expect("a saved output") + "full output saved to ".len();
    PathBuf::from(content[start..].split(';').next().unwrap())
}

/// A real MCP server on loopback with one tool, `echo`, which is not read-only; counts its
/// calls. Stops with the token.
async fn mcp_server(calls: Arc<AtomicUsize>, stop: CancellationToken) -> String {
    use rmcp::handler::server::ServerHandler;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
    };
    use rmcp::service::{RequestContext, RoleServer};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

    #[derive(Clone)]
    struct Echo(Arc<AtomicUsize>);

    impl ServerHandler for Echo {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let Value::Object(schema) = json!({"type": "object", "properties": {"text": {"type": "string"}}}) else {
                unreachable!("an object")
            };
            Ok(ListToolsResult::with_all_items(vec![McpTool::new("echo", "Echo the text.", Arc::new(schema))]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let text =
                request.arguments.unwrap_or_default().get("text").and_then(Value::as_str).unwrap_or("").to_string();
            Ok(CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))]).into())
        }
    }

    let service: StreamableHttpService<Echo, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Echo(calls.clone())),
        Default::default(),
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
    );
    let router = axum::Router::new().nest_service("/srv", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/srv", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).with_graceful_shutdown(async move { stop.cancelled_owned().await }).await;
    });
    url
}

async fn mcp_bench(approval: ApprovalPolicy, deny: &[&str], budget_tokens: u64) -> (Bench, Arc<AtomicUsize>) {
    let served = Arc::new(AtomicUsize::new(0));
    let stop = CancellationToken::new();
    let url = mcp_server(served.clone(), stop.clone()).await;
    let mut config = Config::default();
    config.mcp.tool_budget_tokens = budget_tokens;
    config.mcp_servers.insert("srv".into(), McpServerConfig { url: Some(url), ..Default::default() });
    config.mcp_servers.insert("off".into(), McpServerConfig { enabled: Some(false), ..Default::default() });
    // Never cancelled: the server stops with the test's runtime.
    drop(stop);
    (open_bench(config, Vec::new(), approval, deny).await, served)
}

#[tokio::test]
async fn an_mcp_call_is_decided_like_a_command_and_runs_on_its_server() {
    let args = json!({"text": "hi"});
    // A deny rule names the server's tool: refused before the server hears of it.
    let (mut bench, served) = mcp_bench(ApprovalPolicy::ApproveAll, &["mcp__srv__echo"], 10_000).await;
    let (kept, denied, _) =
        bench.run(&[call("c1", "mcp__srv__echo", args.clone())], approve, &CancellationToken::new()).await;
    let refused = &kept.calls[0];
    assert_eq!((denied, served.load(Ordering::SeqCst)), (1, 0));
    assert!(refused.not_run && refused.approval.as_deref().is_some_and(|a| a.starts_with("refused by rule:")));
    assert!(refused.decided_by.as_deref().is_some_and(|d| d.contains("mcp__srv__echo")), "{:?}", refused.decided_by);

    // No rule: it asks as a command would (here `--yes` answers), then runs on the server.
    let (mut bench, served) = mcp_bench(ApprovalPolicy::ApproveAll, &[], 10_000).await;
    let (kept, _, _) =
        bench.run(&[call("c1", "mcp__srv__echo", args.clone())], approve, &CancellationToken::new()).await;
    let ran = &kept.calls[0];
    assert_eq!(served.load(Ordering::SeqCst), 1);
    assert_eq!((ran.content.as_str(), ran.decided_by.as_deref()), ("echo: hi", Some("user: --yes")));
    assert_eq!(ran.approval.as_deref(), Some("approved by --yes (asked by mode: edit)"));

    // A server switched off: the call says so rather than "no such tool".
    let (kept, _, _) = bench.run(&[call("c2", "mcp__off__echo", args)], approve, &CancellationToken::new()).await;
    assert!(
        kept.calls[0].content.ends_with("is switched off; the user can switch it on in /mcp."),
        "{}",
        kept.calls[0].content
    );
}

#[tokio::test]
async fn a_tool_call_runs_the_mcp_tool_it_names_as_that_tools_call() {
    // Over the budget, the server's tools sit behind `tool_search` and `tool_call`.
    let (mut bench, served) = mcp_bench(ApprovalPolicy::ApproveAll, &[], 0).await;
    assert!(bench.tools.specs().iter().all(|s| !s.name.starts_with("mcp__")), "not listed themselves");
    let named = call("c1", "tool_call", json!({"name": "mcp__srv__echo", "arguments": {"text": "via tool_call"}}));
    let (kept, _, _) = bench.run(&[named], approve, &CancellationToken::new()).await;
    let ran = &kept.calls[0];
    assert_eq!((ran.call_id.as_str(), ran.tool.as_str()), ("c1", "mcp__srv__echo"));
    assert_eq!((ran.content.as_str(), served.load(Ordering::SeqCst)), ("echo: via tool_call", 1));
}
