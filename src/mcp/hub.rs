//! Every configured server and its state: started in the background at launch, reported once
//! when it fails or dies, tried again on demand (a call to one of its tools, `/mcp`), switched
//! on and off by the user. Nothing here waits on a server while holding a lock, and nothing a
//! turn does waits on a server that has failed: a failed server answers at once.
//!
//! A server's tools, once listed, stay known while it is down, so the tool list the model sees
//! does not change (and the prompt cache holds) when a server dies and comes back.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::client::{Connection, HttpClientFactory, McpError, McpOutput, McpToolInfo, connect};
use crate::config::{McpConfig, McpServerConfig};

/// Reads an environment variable (a parameter, so tests need not touch the process's own).
pub type EnvReader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Tells the user about a server, once per event (the agent turns these into notices).
pub type Reporter = Arc<dyn Fn(McpReport) + Send + Sync>;

/// Something about a server the user should hear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpReport {
    Connected {
        server: String,
        tools: usize,
    },
    Failed {
        server: String,
        error: String,
    },
    /// It was up and its connection ended.
    Died {
        server: String,
        error: String,
    },
}

/// A server's state, as `/mcp` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Ready,
    Failed { error: String },
    Disabled,
}

impl ServerState {
    pub fn label(&self) -> &'static str {
        match self {
            ServerState::Starting => "starting",
            ServerState::Ready => "connected",
            ServerState::Failed { .. } => "failed",
            ServerState::Disabled => "off",
        }
    }
}

/// One server as the outside sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerView {
    pub name: String,
    /// `stdio: npx -y server` or `http: https://host/mcp` (variables unexpanded).
    pub transport: String,
    pub state: ServerState,
    /// The tools of its last listing (kept while it is down).
    pub tools: Vec<McpToolInfo>,
}

struct Slot {
    config: McpServerConfig,
    state: ServerState,
    tools: Option<Vec<McpToolInfo>>,
    connection: Option<Arc<Connection>>,
    /// Which connection attempt is current, so a stale attempt's result is ignored.
    attempt: u64,
    started: Instant,
    /// The last failure was reported; the next one is not, until the server comes back.
    reported: bool,
}

struct Inner {
    config: McpConfig,
    root: PathBuf,
    http: HttpClientFactory,
    env: EnvReader,
    report: Reporter,
    slots: Mutex<BTreeMap<String, Slot>>,
    /// Bumped whenever the set of known tools changes.
    generation: AtomicU64,
    /// Bumped on every state change, for waiters.
    changed: watch::Sender<u64>,
}

/// The servers of a session (cheap to clone: all clones share them).
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

impl McpHub {
    /// The hub for `servers`, none started yet ([`McpHub::start`] starts the enabled ones).
    pub fn new(
        config: McpConfig,
        servers: BTreeMap<String, McpServerConfig>,
        root: PathBuf,
        http: HttpClientFactory,
        env: EnvReader,
        report: Reporter,
    ) -> McpHub {
        let now = Instant::now();
        let slots = servers
            .into_iter()
            .map(|(name, config)| {
                let state = if config.is_enabled() { ServerState::Starting } else { ServerState::Disabled };
                (name, Slot { config, state, tools: None, connection: None, attempt: 0, started: now, reported: false })
            })
            .collect();
        let (changed, _) = watch::channel(0);
        McpHub {
            inner: Arc::new(Inner {
                config,
                root,
                http,
                env,
                report,
                slots: Mutex::new(slots),
                generation: AtomicU64::new(0),
                changed,
            }),
        }
    }

    fn slots(&self) -> MutexGuard<'_, BTreeMap<String, Slot>> {
        self.inner.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start every enabled server in the background. Returns at once (needs a tokio runtime).
    pub fn start(&self) {
        let names: Vec<String> =
            self.slots().iter().filter(|(_, s)| s.config.is_enabled()).map(|(n, _)| n.clone()).collect();
        for name in names {
            self.spawn_connect(&name);
        }
    }

    /// Changes whenever the set of known tools does.
    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::SeqCst)
    }

    /// Resolves once the set of known tools is no longer that of generation `seen`.
    pub async fn tools_changed_since(&self, seen: u64) {
        // Subscribed before looking, so a change between the two is not missed.
        let mut changes = self.inner.changed.subscribe();
        while self.generation() == seen {
            if changes.changed().await.is_err() {
                // The hub is gone: no change will come.
                std::future::pending::<()>().await;
            }
        }
    }

    fn bump(&self, tools_changed: bool) {
        if tools_changed {
            self.inner.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.changed.send_modify(|n| *n += 1);
    }

    /// Begin a connection attempt for `name` in the background; the result lands in its slot.
    fn spawn_connect(&self, name: &str) {
        let (config, attempt) = {
            let mut slots = self.slots();
            let Some(slot) = slots.get_mut(name) else { return };
            slot.attempt += 1;
            slot.state = ServerState::Starting;
            slot.started = Instant::now();
            (slot.config.clone(), slot.attempt)
        };
        self.bump(false);
        let hub = self.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            let timeout = Duration::from_millis(hub.inner.config.startup_timeout_ms);
            let env = hub.inner.env.clone();
            let result =
                match tokio::time::timeout(timeout, connect(&config, &hub.inner.root, &*env, &hub.inner.http)).await {
                    Ok(result) => result,
                    Err(_) => Err(McpError::Connection(format!(
                        "it did not start and list its tools within {} ms (mcp.startup_timeout_ms)",
                        timeout.as_millis()
                    ))),
                };
            hub.settle(&name, attempt, result);
        });
    }

    /// Record the outcome of connection attempt `attempt` of `name`.
    fn settle(&self, name: &str, attempt: u64, result: Result<super::client::Connected, McpError>) {
        let report = {
            let mut slots = self.slots();
            let Some(slot) = slots.get_mut(name) else { return };
            if slot.attempt != attempt || slot.state == ServerState::Disabled {
                // Switched off or restarted meanwhile: this attempt's connection just drops.
                return;
            }
            match result {
                Ok(connected) => {
                    let tools_changed = slot.tools.as_ref() != Some(&connected.tools);
                    let count = connected.tools.len();
                    slot.tools = Some(connected.tools);
                    slot.connection = Some(Arc::new(connected.connection));
                    slot.state = ServerState::Ready;
                    slot.reported = false;
                    let hub = self.clone();
                    let server = name.to_string();
                    let closed = connected.closed;
                    tokio::spawn(async move {
                        let why = closed.await;
                        hub.connection_ended(&server, attempt, why);
                    });
                    drop(slots);
                    self.bump(tools_changed);
                    McpReport::Connected { server: name.to_string(), tools: count }
                }
                Err(e) => {
                    slot.state = ServerState::Failed { error: e.to_string() };
                    slot.connection = None;
                    let first = !slot.reported;
                    slot.reported = true;
                    drop(slots);
                    self.bump(false);
                    if !first {
                        return;
                    }
                    McpReport::Failed { server: name.to_string(), error: e.to_string() }
                }
            }
        };
        (self.inner.report)(report);
    }

    fn connection_ended(&self, name: &str, attempt: u64, why: String) {
        {
            let mut slots = self.slots();
            let Some(slot) = slots.get_mut(name) else { return };
            if slot.attempt != attempt || slot.state != ServerState::Ready {
                return;
            }
            slot.connection = None;
            slot.state = ServerState::Failed { error: format!("it stopped: {why}") };
            slot.started = Instant::now();
            slot.reported = true;
        }
        self.bump(false);
        (self.inner.report)(McpReport::Died { server: name.to_string(), error: why });
    }

    /// Wait until no server is starting, `deadline` passes or `cancel` fires.
    pub async fn settled(&self, deadline: Duration, cancel: &CancellationToken) {
        let mut changes = self.inner.changed.subscribe();
        let until = tokio::time::Instant::now() + deadline;
        loop {
            if !self.slots().values().any(|s| s.state == ServerState::Starting) {
                return;
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep_until(until) => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
        }
    }

    /// Every server, by name.
    pub fn servers(&self) -> Vec<ServerView> {
        self.slots()
            .iter()
            .map(|(name, s)| ServerView {
                name: name.clone(),
                transport: match (&s.config.command, &s.config.url) {
                    (Some(c), _) => format!(
                        "stdio: {}",
                        std::iter::once(c).chain(&s.config.args).cloned().collect::<Vec<_>>().join(" ")
                    ),
                    (None, Some(u)) => format!("http: {u}"),
                    (None, None) => "unconfigured".into(),
                },
                state: s.state.clone(),
                tools: s.tools.clone().unwrap_or_default(),
            })
            .collect()
    }

    /// The tools of every switched-on server whose tools are known, by server name then in the
    /// server's order: the order the model sees them in, stable from request to request.
    pub fn tools(&self) -> Vec<(String, McpToolInfo)> {
        self.slots()
            .iter()
            .filter(|(_, s)| s.state != ServerState::Disabled)
            .flat_map(|(name, s)| s.tools.iter().flatten().map(move |t| (name.clone(), t.clone())))
            .collect()
    }

    /// Switch a server on (it starts connecting) or off (its connection ends). Errors name
    /// the servers there are.
    pub fn set_enabled(&self, name: &str, on: bool) -> Result<(), String> {
        {
            let mut slots = self.slots();
            let known: Vec<String> = slots.keys().cloned().collect();
            let Some(slot) = slots.get_mut(name) else {
                return Err(unknown_server(name, &known));
            };
            if !on {
                slot.state = ServerState::Disabled;
                slot.connection = None;
                slot.attempt += 1;
                drop(slots);
                self.bump(true);
                return Ok(());
            }
            if slot.state != ServerState::Disabled {
                return Ok(());
            }
        }
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        self.spawn_connect(name);
        Ok(())
    }

    /// Add a server (an import from `.mcp.json`) and start it; false when the name is taken.
    pub fn add(&self, name: &str, config: McpServerConfig) -> bool {
        {
            let mut slots = self.slots();
            if slots.contains_key(name) {
                return false;
            }
            let enabled = config.is_enabled();
            let state = if enabled { ServerState::Starting } else { ServerState::Disabled };
            slots.insert(
                name.to_string(),
                Slot {
                    config,
                    state,
                    tools: None,
                    connection: None,
                    attempt: 0,
                    started: Instant::now(),
                    reported: false,
                },
            );
            if !enabled {
                return true;
            }
        }
        self.spawn_connect(name);
        true
    }

    /// Try a failed server again now (`/mcp`).
    pub fn retry(&self, name: &str) -> Result<(), String> {
        let state = {
            let slots = self.slots();
            let known: Vec<String> = slots.keys().cloned().collect();
            slots.get(name).map(|s| s.state.clone()).ok_or_else(|| unknown_server(name, &known))?
        };
        match state {
            ServerState::Failed { .. } => {
                self.spawn_connect(name);
                Ok(())
            }
            ServerState::Disabled => Err(format!("{name} is switched off; switch it on first")),
            ServerState::Starting | ServerState::Ready => Ok(()),
        }
    }

    /// Call `tool` of `server`. A server that failed or died is tried again first when its
    /// last attempt is older than `mcp.retry_after_ms`; otherwise the call fails at once.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<McpOutput, McpError> {
        let timeout = Duration::from_millis(self.inner.config.call_timeout_ms);
        let connection = self.connection_for(server, cancel).await?;
        let result = connection.call(tool, arguments, timeout, cancel).await;
        if let Err(McpError::Connection(_)) = &result {
            self.lost(server, &connection);
        }
        result
    }

    /// The live connection of `server`, reconnecting on demand.
    async fn connection_for(&self, server: &str, cancel: &CancellationToken) -> Result<Arc<Connection>, McpError> {
        let retry_after = Duration::from_millis(self.inner.config.retry_after_ms);
        let state = {
            let slots = self.slots();
            let known: Vec<String> = slots.keys().cloned().collect();
            let slot = slots.get(server).ok_or_else(|| McpError::Connection(unknown_server(server, &known)))?;
            match (&slot.state, &slot.connection) {
                (ServerState::Ready, Some(c)) if !c.is_closed() => return Ok(c.clone()),
                (ServerState::Disabled, _) => {
                    return Err(McpError::Connection(format!(
                        "the MCP server `{server}` is switched off; the user can switch it on in /mcp"
                    )));
                }
                (ServerState::Failed { error }, _) if slot.started.elapsed() < retry_after => {
                    return Err(McpError::Connection(format!(
                        "the MCP server `{server}` is not available ({error}); it is tried again on a call after {} s",
                        retry_after.as_secs()
                    )));
                }
                (state, _) => state.clone(),
            }
        };
        if state != ServerState::Starting {
            self.spawn_connect(server);
        }
        let deadline = Duration::from_millis(self.inner.config.startup_timeout_ms);
        self.settled(deadline, cancel).await;
        if cancel.is_cancelled() {
            return Err(McpError::Cancelled);
        }
        let slots = self.slots();
        match slots.get(server).map(|s| (&s.state, &s.connection)) {
            Some((ServerState::Ready, Some(c))) => Ok(c.clone()),
            Some((ServerState::Failed { error }, _)) => {
                Err(McpError::Connection(format!("the MCP server `{server}` could not be restarted: {error}")))
            }
            Some(_) | None => Err(McpError::Connection(format!("the MCP server `{server}` is not available"))),
        }
    }

    /// A call found the connection gone: mark the server down (reported once).
    fn lost(&self, server: &str, connection: &Arc<Connection>) {
        let attempt = {
            let slots = self.slots();
            match slots.get(server) {
                Some(s) if s.connection.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) => s.attempt,
                _ => return,
            }
        };
        self.connection_ended(server, attempt, "its connection broke during a call".into());
    }
}

fn unknown_server(name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("there is no MCP server `{name}`: none is configured")
    } else {
        format!("there is no MCP server `{name}`; the servers are {}", known.join(", "))
    }
}
