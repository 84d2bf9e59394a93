//! The managed llama-server: found again when kept, else started on a free loopback port in its
//! own process group; its loading shown as progress until `/health` answers; its window and
//! slots read from `/props`; watched, and restarted once if it dies; stopped at exit unless
//! `keep` leaves it running for the next cairn.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use super::LocalError;
use super::launch::{Launch, ServerLog, free_port};
use super::record::{self, Record};
use crate::config::{LocalConfig, ModelInfo, ProviderKind, ResolvedProvider, WindowSource};

/// How often `/health` is asked while the model loads.
const HEALTH_POLL: Duration = Duration::from_millis(100);
/// A server that does not stop this long after SIGTERM is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often a server cairn did not start itself (a kept one) is checked for being alive.
const ADOPTED_POLL: Duration = Duration::from_secs(1);

/// How far the server has come, for the progress bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadProgress {
    /// The process started; nothing loaded yet.
    Starting { model: String },
    /// Share of the model's weights loaded, as its log shows.
    Loading { percent: u8 },
    /// Weights loaded; the server is preparing its context and slots.
    WarmingUp,
    /// Answering, with this window per slot.
    Ready { window: Option<u64>, slots: Option<u64>, reused: bool },
}

/// What `doctor`, `/model` and the status say about the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// The GGUF file.
    pub model: String,
    /// Its OpenAI-compatible endpoint.
    pub base_url: String,
    pub pid: Option<u32>,
    /// Tokens of context per slot, from `/props`.
    pub window: Option<u64>,
    /// Requests it serves at once.
    pub slots: Option<u64>,
    /// Left running at exit.
    pub keep: bool,
    /// Times cairn restarted it.
    pub restarts: u32,
    pub log: String,
}

/// A llama-server cairn runs. Stopped at exit by [`LocalServer::stop`] (or, failing that, when
/// dropped) unless it is kept or another cairn runs it.
pub struct LocalServer {
    inner: Arc<Inner>,
}

struct Inner {
    launch: Launch,
    keep: bool,
    record: PathBuf,
    load_timeout: Duration,
    http: reqwest::Client,
    state: Mutex<State>,
    /// Whether the server's process is running.
    alive: watch::Sender<bool>,
}

#[derive(Default)]
struct State {
    pid: Option<u32>,
    /// This cairn stops it at exit.
    owned: bool,
    /// It answered once: a death from now on is reported and restarted.
    ready: bool,
    /// A start is under way: its own error reports a death.
    loading: bool,
    stopping: bool,
    restarts: u32,
    last_exit: String,
    notices: Vec<String>,
    window: Option<u64>,
    slots: Option<u64>,
    log: Option<ServerLog>,
}

impl LocalServer {
    /// The server for `model`: a running one started the same way before (kept, or left by a
    /// cairn that crashed), else a new one, loading with `progress` told how far it is.
    pub async fn start(
        config: &LocalConfig,
        model: &Path,
        dir: &Path,
        progress: &mut (dyn FnMut(LoadProgress) + Send),
    ) -> Result<LocalServer, LocalError> {
        let (launch, record_path, http) = prepare(config, model, dir)?;
        if let Some(found) = find(&launch, &record_path, &http).await {
            let me = std::process::id();
            let theirs = found.owner != me && found.owner != 0 && record::alive(found.owner) && !found.keep;
            let server = LocalServer::new(
                Launch { port: found.port, ..launch },
                config,
                record_path,
                http,
                !config.keep && !theirs,
            );
            server.adopt(found.pid, true).await;
            let (window, slots) = server.inner.shape();
            progress(LoadProgress::Ready { window, slots, reused: true });
            return Ok(server);
        }
        record::remove(&record_path);
        let port = free_port().map_err(|e| LocalError::SpawnFailed {
            server: launch.server.display().to_string(),
            error: format!("no free port on 127.0.0.1: {e}"),
        })?;
        let server = LocalServer::new(Launch { port, ..launch }, config, record_path, http, !config.keep);
        progress(LoadProgress::Starting { model: server.inner.launch.alias.clone() });
        server.inner.clone().load(Some(progress)).await?;
        Ok(server)
    }

    /// The server for `model` if one is running (kept), to look at: it is neither watched nor
    /// stopped.
    pub async fn running(config: &LocalConfig, model: &Path, dir: &Path) -> Result<Option<LocalServer>, LocalError> {
        let (launch, record_path, http) = prepare(config, model, dir)?;
        let Some(found) = find(&launch, &record_path, &http).await else { return Ok(None) };
        let server = LocalServer::new(Launch { port: found.port, ..launch }, config, record_path, http, false);
        server.adopt(found.pid, false).await;
        Ok(Some(server))
    }

    fn new(launch: Launch, config: &LocalConfig, record: PathBuf, http: reqwest::Client, owned: bool) -> LocalServer {
        let state = State { owned, ..State::default() };
        LocalServer {
            inner: Arc::new(Inner {
                launch,
                keep: config.keep,
                record,
                load_timeout: Duration::from_secs(config.load_timeout_secs),
                http,
                state: Mutex::new(state),
                alive: watch::channel(false).0,
            }),
        }
    }

    /// Use a server already running as `pid`; `watch` it from now on (to restart it).
    async fn adopt(&self, pid: u32, watch: bool) {
        let inner = &self.inner;
        let owned = {
            let mut state = inner.lock();
            state.pid = Some(pid);
            state.ready = true;
            state.owned
        };
        inner.alive.send_replace(true);
        inner.read_props().await;
        if owned {
            inner.write_record(pid);
        }
        if watch {
            tokio::spawn(inner.clone().watch_pid(pid));
        }
    }

    /// The OpenAI-compatible endpoint (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        self.inner.launch.base_url()
    }

    /// The name the server lists its model by.
    pub fn model_name(&self) -> &str {
        &self.inner.launch.alias
    }

    /// The provider the server makes: its OpenAI-compatible endpoint and its model.
    pub fn provider(&self) -> ResolvedProvider {
        ResolvedProvider {
            kind: ProviderKind::Openai,
            base_url: self.base_url(),
            api_key: None,
            model: Some(self.model_name().to_string()),
            reason: format!("llama-server that cairn runs on {}", self.inner.launch.model.display()),
        }
    }

    /// The window the server runs the model with is the one to budget for (unless
    /// `--context-window`, `flag_window`, says otherwise), and a local model costs no money.
    pub fn serve_model_info(&self, model: &mut ModelInfo, flag_window: Option<u64>) {
        model.prices = None;
        if flag_window.is_some() {
            return;
        }
        if let Some(window) = self.inner.lock().window {
            model.context_window = window;
            model.window_source = WindowSource::Server;
        }
    }

    pub fn info(&self) -> ServerInfo {
        let state = self.inner.lock();
        ServerInfo {
            model: self.inner.launch.model.display().to_string(),
            base_url: self.base_url(),
            pid: state.pid,
            window: state.window,
            slots: state.slots,
            keep: self.inner.keep,
            restarts: state.restarts,
            log: self.inner.launch.log.display().to_string(),
        }
    }

    /// After a request failed: whether the server had died and runs again, so the request is
    /// worth sending once more. Waits for the watcher to see a death (briefly) and for a
    /// restart under way (at most the load timeout).
    pub async fn recovered(&self) -> bool {
        let inner = &self.inner;
        let mut alive = inner.alive.subscribe();
        let noticed = tokio::time::Instant::now() + Duration::from_secs(2);
        let deadline = tokio::time::Instant::now() + inner.load_timeout;
        loop {
            let (restarts, loading, ready) = {
                let state = inner.lock();
                (state.restarts, state.loading, state.pid.is_some() && state.ready)
            };
            let now = tokio::time::Instant::now();
            match (restarts, loading, ready) {
                // It has not died (or not yet been seen to).
                (0, _, true) if now >= noticed => return false,
                (1.., false, true) => return true,
                // Died again, or the restart failed.
                (1.., false, false) => return false,
                _ if now >= deadline => return false,
                _ => {}
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = alive.changed() => {}
            }
        }
    }

    /// What happened to the server since last asked (it died, it was restarted), to tell the
    /// user.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut self.inner.lock().notices)
    }

    /// Stop the server unless it is kept or another cairn runs it: SIGTERM to its process
    /// group, SIGKILL after a grace period. A kept server's record stays, for the next cairn.
    pub async fn stop(&self) {
        let inner = &self.inner;
        let (pid, owned) = {
            let mut state = inner.lock();
            state.stopping = true;
            (state.pid, state.owned)
        };
        if !owned {
            return;
        }
        if let Some(pid) = pid {
            record::signal_group(pid, libc::SIGTERM);
            if !inner.wait_gone(pid, STOP_GRACE).await {
                tracing::warn!(pid, "llama-server did not stop on SIGTERM; killing it");
                record::signal_group(pid, libc::SIGKILL);
                inner.wait_gone(pid, STOP_GRACE).await;
            }
        }
        inner.lock().pid = None;
        record::remove(&inner.record);
    }
}

impl Drop for LocalServer {
    /// The last resort of an exit that did not call [`LocalServer::stop`] (an error on the
    /// way): nothing is left running that cairn started and does not keep.
    fn drop(&mut self) {
        let state = self.inner.lock();
        if state.owned && !state.stopping {
            if let Some(pid) = state.pid {
                record::signal_group(pid, libc::SIGKILL);
            }
            record::remove(&self.inner.record);
        }
    }
}

/// What starting or finding a server needs: how it is started, where its record is, a client.
fn prepare(config: &LocalConfig, model: &Path, dir: &Path) -> Result<(Launch, PathBuf, reqwest::Client), LocalError> {
    let launch = Launch::new(config, model, 0, dir.join("llama-server.log"))?;
    let record_path = record::path(dir, launch.fingerprint());
    let http = crate::net::build_client("http://127.0.0.1")
        .map_err(|e| LocalError::SpawnFailed { server: launch.server.display().to_string(), error: e.to_string() })?;
    Ok((launch, record_path, http))
}

/// The record of a server started like `launch` that is running and answering. One that is
/// running but does not answer is stopped (when it is surely ours) and forgotten.
async fn find(launch: &Launch, record_path: &Path, http: &reqwest::Client) -> Option<Record> {
    let found = record::read(record_path)?;
    if record::alive(found.pid) && found.model == launch.model {
        match health(http, found.port).await {
            Health::Ready => return Some(found),
            // Another cairn is starting it: this one starts its own.
            Health::Loading => return None,
            Health::Down if record::is_server_on(found.pid, found.port) => {
                record::signal_group(found.pid, libc::SIGKILL)
            }
            Health::Down => {}
        }
    }
    record::remove(record_path);
    None
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Health {
    /// Nothing answers (not started yet, or gone).
    Down,
    /// It answers 503: loading.
    Loading,
    Ready,
}

async fn health(http: &reqwest::Client, port: u16) -> Health {
    let url = format!("http://127.0.0.1:{port}/health");
    match http.get(url).timeout(Duration::from_secs(2)).send().await {
        Ok(r) if r.status().is_success() => Health::Ready,
        Ok(_) => Health::Loading,
        Err(_) => Health::Down,
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn shape(&self) -> (Option<u64>, Option<u64>) {
        let state = self.lock();
        (state.window, state.slots)
    }

    fn notice(&self, text: String) {
        tracing::warn!("{text}");
        self.lock().notices.push(text);
    }

    fn write_record(&self, pid: u32) {
        let owned = self.lock().owned;
        let record = Record {
            pid,
            port: self.launch.port,
            model: self.launch.model.clone(),
            owner: if owned { std::process::id() } else { 0 },
            keep: self.keep,
        };
        record::write(&self.record, &record);
    }

    /// Start the process and wait until it answers, telling `progress` how far it is.
    async fn load(
        self: Arc<Self>,
        mut progress: Option<&mut (dyn FnMut(LoadProgress) + Send)>,
    ) -> Result<(), LocalError> {
        let (child, log) = self.launch.spawn()?;
        let pid = child.id();
        {
            let mut state = self.lock();
            state.pid = pid;
            state.loading = true;
            state.log = Some(log.clone());
            // Started by this cairn (a restart of one another cairn ran included): stopped at
            // its exit unless kept.
            state.owned = !self.keep;
        }
        self.alive.send_replace(true);
        if let Some(pid) = pid {
            self.write_record(pid);
        }
        let mut alive = self.alive.subscribe();
        tokio::spawn(self.clone().watch_child(child));
        if let Err(e) = self.wait_ready(&log, &mut alive, &mut progress).await {
            if let Some(pid) = pid {
                record::signal_group(pid, libc::SIGKILL);
            }
            record::remove(&self.record);
            self.lock().loading = false;
            return Err(e);
        }
        self.read_props().await;
        if progress.is_none() {
            // A restart: said before anyone waiting for it goes on.
            let window = self.shape().0.map(|w| format!(" with a {w}-token window")).unwrap_or_default();
            self.notice(format!("llama-server is running again{window}"));
        }
        {
            let mut state = self.lock();
            state.loading = false;
            state.ready = true;
        }
        if let Some(progress) = progress.as_mut() {
            let (window, slots) = self.shape();
            progress(LoadProgress::Ready { window, slots, reused: false });
        }
        Ok(())
    }

    async fn wait_ready(
        &self,
        log: &ServerLog,
        alive: &mut watch::Receiver<bool>,
        progress: &mut Option<&mut (dyn FnMut(LoadProgress) + Send)>,
    ) -> Result<(), LocalError> {
        let deadline = tokio::time::Instant::now() + self.load_timeout;
        let mut percent = log.progress();
        let size = std::fs::metadata(&self.launch.model).map(|m| m.len()).unwrap_or(0);
        let pid = self.lock().pid;
        if let Some(progress) = progress.as_mut() {
            progress(LoadProgress::Loading { percent: 0 });
        }
        let mut shown = 0u8;
        loop {
            if !*alive.borrow() {
                let status = self.lock().last_exit.clone();
                return Err(LocalError::Exited {
                    model: self.launch.alias.clone(),
                    status,
                    tail: log.tail(),
                    log: self.launch.log.clone(),
                });
            }
            if health(&self.http, self.launch.port).await == Health::Ready {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(LocalError::LoadTimeout {
                    model: self.launch.alias.clone(),
                    secs: self.load_timeout.as_secs(),
                    log: self.launch.log.clone(),
                });
            }
            // The log's dots (llama.cpp before its server reported loading itself), else how much
            // of the model file the process has in memory or has read.
            let read =
                pid.and_then(super::launch::bytes_loaded).map_or(0, |b| (b.saturating_mul(100) / size.max(1)).min(100));
            // Never backwards: mapped memory comes and goes.
            let now = (*percent.borrow_and_update()).max(read as u8).max(shown);
            if now != shown
                && let Some(progress) = progress.as_mut()
            {
                shown = now;
                progress(if now >= 100 { LoadProgress::WarmingUp } else { LoadProgress::Loading { percent: now } });
            }
            tokio::select! {
                _ = tokio::time::sleep(HEALTH_POLL) => {}
                _ = alive.changed() => {}
                _ = percent.changed() => {}
            }
        }
    }

    /// The window of a slot and the number of slots, from `/props`.
    async fn read_props(&self) {
        let url = format!("http://127.0.0.1:{}/props", self.launch.port);
        let props: Option<Value> = match self.http.get(url).timeout(Duration::from_secs(5)).send().await {
            Ok(r) if r.status().is_success() => r.json().await.ok(),
            _ => None,
        };
        let mut state = self.lock();
        state.window = props.as_ref().and_then(crate::llm::context_from_props);
        state.slots = props.as_ref().and_then(|p| p["total_slots"].as_u64());
    }

    /// Boxed: a restart starts a watcher that may restart again.
    fn watch_child(self: Arc<Self>, mut child: tokio::process::Child) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let status = match child.wait().await {
                Ok(status) => describe_exit(status),
                Err(e) => format!("could not be watched: {e}"),
            };
            self.exited(status).await;
        })
    }

    async fn watch_pid(self: Arc<Self>, pid: u32) {
        while record::alive(pid) && self.lock().pid == Some(pid) {
            tokio::time::sleep(ADOPTED_POLL).await;
        }
        if self.lock().pid == Some(pid) {
            self.exited("exited".into()).await;
        }
    }

    /// The process ended: expected when stopping; while loading, the load reports it;
    /// otherwise it is reported, and restarted the first time.
    async fn exited(self: Arc<Self>, status: String) {
        let (restart, problem) = {
            let mut state = self.lock();
            state.pid = None;
            state.last_exit = status.clone();
            let quiet = state.stopping || state.loading || !state.ready;
            let problem = state.log.as_ref().map(ServerLog::last_problem).unwrap_or_default();
            let restart = state.restarts == 0;
            if !quiet && restart {
                state.restarts += 1;
                // The restart starts now: whoever waits for it must not take the gap for a failure.
                state.loading = true;
            }
            drop(state);
            self.alive.send_replace(false);
            if quiet {
                return;
            }
            (restart, problem)
        };
        let log = self.launch.log.display();
        if !restart {
            record::remove(&self.record);
            self.notice(format!(
                "llama-server stopped again ({status}: {problem}); cairn restarts it only once. Start cairn again to load the model anew; the server's log is in {log}"
            ));
            return;
        }
        self.notice(format!("llama-server stopped unexpectedly ({status}: {problem}); restarting it"));
        if let Err(e) = self.clone().load(None).await {
            self.notice(format!("llama-server could not be restarted: {e}"));
        }
    }

    /// Waits until `pid` is gone, at most `limit`.
    async fn wait_gone(&self, pid: u32, limit: Duration) -> bool {
        let mut alive = self.alive.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // A child is gone once its watcher reaped it; a server cairn did not start is gone
            // once its pid is.
            if !*alive.borrow_and_update() || !record::alive(pid) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = alive.changed() => {}
            }
        }
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "exited".into(),
    }
}
