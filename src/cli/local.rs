//! The local server on the command line: whether `--local` or `[local]` asks for one, starting
//! it once with its loading shown on stderr, the provider it makes, stopping it at exit, and
//! `cairn doctor`'s lines about local servers.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use super::error::CliError;
use super::startup::{ProviderSetup, Startup};
use crate::local::{LoadProgress, LocalError, LocalServer};

impl From<LocalError> for CliError {
    fn from(e: LocalError) -> Self {
        match e {
            LocalError::SpawnFailed { .. } | LocalError::Exited { .. } | LocalError::LoadTimeout { .. } => {
                CliError::Failed(e.to_string())
            }
            LocalError::NoModel { .. }
            | LocalError::ModelMissing { .. }
            | LocalError::NotGguf { .. }
            | LocalError::Unreadable { .. }
            | LocalError::EmptyFolder { .. }
            | LocalError::Ambiguous { .. }
            | LocalError::NoSuchName { .. }
            | LocalError::ServerMissing { .. } => CliError::Usage(e.to_string()),
        }
    }
}

impl Startup {
    /// `--local`, or `[local] model` with no provider, endpoint or model named elsewhere.
    pub(super) fn wants_local(&self) -> bool {
        let named_elsewhere = self.overrides.provider.is_some()
            || self.overrides.base_url.is_some()
            || self.config.provider.is_some()
            || self.config.base_url.is_some();
        self.local_flag.is_some() || (self.config.local.model.is_some() && !named_elsewhere)
    }

    /// The local server this run uses, started (or found running) the first time it is asked
    /// for; `None` when none is wanted.
    pub async fn local_server(&self) -> Result<Option<Arc<LocalServer>>, CliError> {
        if !self.wants_local() {
            return Ok(None);
        }
        let server = self
            .local
            .get_or_try_init(|| async {
                let model = crate::local::resolve_model(
                    self.local_flag.as_deref(),
                    &self.config.local,
                    &self.paths.config_file,
                )?;
                let mut bar = ProgressLine::new();
                let server =
                    LocalServer::start(&self.config.local, &model, &self.paths.data_dir.join("local"), &mut |p| {
                        bar.show(&p)
                    })
                    .await?;
                Ok::<_, CliError>(Arc::new(server))
            })
            .await?;
        Ok(Some(server.clone()))
    }

    /// `cairn doctor` on a local setup: the server when one is running (kept), never started
    /// for the check; `None` after saying it is not running.
    pub(super) async fn local_doctor(&self, out: &mut String) -> Option<Result<ProviderSetup, CliError>> {
        let model = match crate::local::resolve_model(
            self.local_flag.as_deref(),
            &self.config.local,
            &self.paths.config_file,
        ) {
            Ok(model) => model,
            Err(e) => return Some(Err(e.into())),
        };
        match LocalServer::running(&self.config.local, &model, &self.paths.data_dir.join("local")).await {
            Ok(Some(server)) => {
                // Looked at, not owned: doctor never stops it.
                let _ = self.local.set(Arc::new(server));
                Some(self.provider().await)
            }
            Ok(None) => {
                out.push_str(&format!(
                    "  {:<18} llama-server for {} is not running; cairn --local starts it (the window is known once it runs)\n",
                    "provider",
                    model.display()
                ));
                None
            }
            Err(e) => Some(Err(e.into())),
        }
    }

    /// At exit: the local server stops, unless it is kept.
    pub async fn stop_local_server(&self) {
        if let Some(server) = self.local.get() {
            server.stop().await;
        }
    }
}

/// The model's loading on stderr: a bar redrawn in place on a terminal, a line per tenth
/// elsewhere.
struct ProgressLine {
    terminal: bool,
    model: String,
    shown: Option<u8>,
}

impl ProgressLine {
    fn new() -> ProgressLine {
        ProgressLine { terminal: std::io::stderr().is_terminal(), model: String::new(), shown: None }
    }

    fn show(&mut self, progress: &LoadProgress) {
        let mut err = std::io::stderr().lock();
        let line = match progress {
            LoadProgress::Starting { model } => {
                self.model = model.clone();
                format!("starting llama-server for {model}")
            }
            LoadProgress::Loading { percent } => {
                let tenth = percent / 10;
                if !self.terminal && self.shown.is_some_and(|s| s / 10 == tenth) {
                    return;
                }
                self.shown = Some(*percent);
                let done = usize::from(*percent) / 5;
                format!("loading {} [{}{}] {percent:>3}%", self.model, "#".repeat(done), "-".repeat(20 - done.min(20)))
            }
            LoadProgress::WarmingUp => format!("loading {} [{}] 100%, warming up", self.model, "#".repeat(20)),
            LoadProgress::Ready { window, slots, reused } => {
                let window =
                    window.map(|w| format!("{w}-token window")).unwrap_or_else(|| "window not reported".into());
                let slots = slots.map(|s| format!(", {s} slot{}", if s == 1 { "" } else { "s" })).unwrap_or_default();
                let how = if *reused { "using the llama-server already running" } else { "llama-server ready" };
                let line = format!("{how}: {window}{slots}");
                // The bar's line is replaced by the outcome.
                let _ = if self.terminal {
                    writeln!(err, "\r\x1b[2Kcairn: {line}")
                } else {
                    writeln!(err, "cairn: {line}")
                };
                return;
            }
        };
        // A closed stderr loses the bar, not the server.
        let _ = if self.terminal { write!(err, "\r\x1b[2Kcairn: {line}") } else { writeln!(err, "cairn: {line}") };
        let _ = err.flush();
    }
}

/// `cairn doctor`'s "Local servers": the one cairn runs (configured, running or not) and every
/// server found on its usual port, each with its model and window.
pub(super) async fn doctor_section(startup: &Startup, out: &mut String) -> bool {
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    out.push_str("\nLocal servers\n");
    let mut ok = true;
    if startup.wants_local() {
        let local = &startup.config.local;
        match crate::local::resolve_model(startup.local_flag.as_deref(), local, &startup.paths.config_file) {
            Ok(model) => line(out, "model", format!("{} (GGUF)", model.display())),
            Err(e) => {
                ok = false;
                line(out, "model", e.to_string());
            }
        }
        line(out, "server", local.server.clone());
        let ctx = local
            .ctx
            .map(|c| format!("{c} tokens (ctx in [local])"))
            .unwrap_or_else(|| "llama-server's default".into());
        line(out, "ctx", ctx);
        line(out, "at exit", if local.keep { "kept running (keep = true)".into() } else { "stopped".into() });
    } else {
        line(out, "managed", "none (cairn --local MODEL, or model in [local], runs one)".into());
    }
    let candidates = crate::config::local_candidates();
    let found = crate::llm::survey_local(&candidates, std::time::Duration::from_millis(800)).await;
    for (candidate, answer) in candidates.iter().zip(found) {
        let address = candidate.base_url.trim_end_matches("/v1");
        let text = match answer {
            None => format!("{address}: not running"),
            Some(s) => {
                let window = match s.window {
                    crate::llm::ServedWindow::Reported(w) => format!("{w}-token window"),
                    crate::llm::ServedWindow::OllamaNotLoaded => "window set when it loads the model".into(),
                    crate::llm::ServedWindow::Unknown => "window not reported".into(),
                };
                format!("{address}: {}, {window}", s.model)
            }
        };
        line(out, candidate.name, text);
    }
    ok
}

/// `doctor`'s lines for a local server that is running.
pub(super) fn doctor_server_lines(server: &LocalServer, out: &mut String) {
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    let info = server.info();
    line(out, "local server", format!("{} (pid {})", info.base_url, info.pid.map_or("?".into(), |p| p.to_string())));
    line(out, "local model", info.model.clone());
    let slots = info.slots.map(|s| format!(", {s} slots")).unwrap_or_default();
    line(
        out,
        "served window",
        format!("{}{slots}", info.window.map_or("not reported".into(), |w| format!("{w} tokens per slot"))),
    );
    line(out, "server log", info.log);
}
