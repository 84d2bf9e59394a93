//! Everything cairn resolves before it can work: paths, config, logging, the project, the
//! store and the provider.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use super::args::{Cli, CommonArgs};
use super::error::CliError;
use crate::agent::{AgentSetup, SessionChoice};
use crate::config::{
    self, Config, Detected, ModelInfo, Paths, ProjectSettings, ProviderKind, ProviderOverrides, ResolvedProvider,
    SandboxConfig, WindowSource,
};
use crate::llm::{AnthropicClient, OpenAiClient, OpenAiResponsesClient, Provider, ServedWindow};
use crate::prompt::AgentTypes;
use crate::store::{ProjectId, Store};
use crate::tools::bash::Bash;
use crate::tools::permissions::{self, Effect, Policy};
use crate::tools::sandbox::{self, SandboxMode};
use crate::tools::task::Task;
use crate::tools::todo::Todo;
use crate::tools::{ApprovalPolicy, Registry, SandboxPolicy, Unattended};
use crate::trust::{NotTrusted, ProjectTrust, TrustCheck};

pub struct Startup {
    pub paths: Paths,
    pub config: Config,
    pub overrides: ProviderOverrides,
    pub mode_flag: Option<crate::conversation::Mode>,
    /// Where cairn was started (or -C).
    pub cwd: PathBuf,
    /// The project root: the nearest folder with `.git`, else `cwd`. Canonical.
    pub root: PathBuf,
    /// `--allow`, `--deny`, `--sandbox`.
    allow: Vec<String>,
    deny: Vec<String>,
    sandbox_flag: Option<SandboxMode>,
    /// `--local MODEL`.
    pub(super) local_flag: Option<String>,
    /// The local server, once started (see `cli::local`).
    pub(super) local: tokio::sync::OnceCell<Arc<crate::local::LocalServer>>,
    _log_guard: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// What this run's tool calls are held to.
pub struct Permissions {
    /// The rules of every level: user config, `.cairn/settings.toml`,
    /// `.cairn/settings.local.toml`, `--allow`/`--deny`, and built-in.
    pub policy: Policy,
    pub sandbox: SandboxPolicy,
    /// The folder's trust these were made for; in an untrusted folder it notes what of its
    /// settings was held back, for the session to say.
    pub trust: ProjectTrust,
}

impl Permissions {
    /// What to tell the user once at start: the sandbox cannot be enforced here, or a setting
    /// of the committed project file was not applied. (What an untrusted folder's files did
    /// not get, the session says when it starts: [`ProjectTrust::note`].)
    pub fn notices(&self) -> Vec<String> {
        let mut out: Vec<String> = sandbox::take_unavailable_notice(&self.sandbox).into_iter().collect();
        out.extend(self.sandbox.notes.iter().cloned());
        out
    }
}

/// A provider ready to use.
#[derive(Clone)]
pub struct ProviderSetup {
    pub resolved: ResolvedProvider,
    pub client: Arc<dyn Provider>,
    pub model: ModelInfo,
    /// The llama-server cairn runs, for `--local`.
    pub local: Option<Arc<crate::local::LocalServer>>,
    /// The server's own tokenizer, when it is a llama-server.
    pub tokenizer: Option<crate::local::Tokenizer>,
}

impl Startup {
    pub fn load(common: &CommonArgs) -> Result<Startup, CliError> {
        let paths = Paths::from_env().map_err(CliError::Usage)?;
        let mut config = config::load(&paths.config_file)?;
        if let Some(thinking) = common.thinking {
            config.thinking = Some(thinking);
        }
        let log_guard = init_logging(&paths.logs());
        let start = match &common.dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|e| CliError::Usage(format!("cannot read the current directory: {e}")))?,
        };
        let cwd = project_dir(&start)?;
        let root = find_project_root(&cwd);
        let overrides = ProviderOverrides {
            provider: common.provider,
            model: common.model.clone(),
            base_url: common.base_url.clone(),
            context_window: common.context_window,
        };
        tracing::info!(root = %root.display(), version = env!("CARGO_PKG_VERSION"), "cairn starting");
        Ok(Startup {
            paths,
            config,
            overrides,
            mode_flag: common.mode,
            cwd,
            root,
            allow: common.allow.clone(),
            deny: common.deny.clone(),
            sandbox_flag: common.sandbox,
            local_flag: common.local.clone(),
            local: tokio::sync::OnceCell::new(),
            _log_guard: log_guard,
        })
    }

    /// This run (its paths, config and flags) for the project around `dir`: a session an ACP
    /// client opens in a folder of its choosing.
    pub fn for_dir(&self, dir: &Path) -> Result<Startup, CliError> {
        let cwd = project_dir(dir)?;
        Ok(Startup {
            paths: self.paths.clone(),
            config: self.config.clone(),
            overrides: self.overrides.clone(),
            mode_flag: self.mode_flag,
            root: find_project_root(&cwd),
            cwd,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            sandbox_flag: self.sandbox_flag,
            local_flag: self.local_flag.clone(),
            // The server this run started, shared (start it first: an empty cell is copied empty).
            local: self.local.clone(),
            _log_guard: None,
        })
    }

    /// The one trust check of the folder (every front end makes it before an agent starts).
    pub fn trust_check(&self) -> Result<TrustCheck, CliError> {
        Ok(crate::trust::check(&self.config, &self.paths.config_file, &self.root, &self.cwd)?)
    }

    /// The permission rules and the sandbox, from the files and the flags; in a folder the user
    /// has not trusted, without the project's allow rules and sandbox widening. A settings file
    /// that cannot be read, or a rule that cannot be parsed, stops cairn with the file, the line
    /// and what to fix (exit 2).
    pub fn permissions(&self, mut trust: ProjectTrust) -> Result<Permissions, CliError> {
        let mut settings = config::load_project_settings(&self.root)?;
        let bad_rule = |e: permissions::RuleError| CliError::Usage(e.to_string());
        // Every rule is parsed, so a bad one is reported whether or not it applies.
        permissions::load_rules(&self.config, &self.paths.config_file, &settings).map_err(bad_rule)?;
        if !trust.is_trusted() {
            trust.note(hold_back_widening(&mut settings, &self.config.sandbox));
        }
        let mut rules = permissions::load_rules(&self.config, &self.paths.config_file, &settings).map_err(bad_rule)?;
        for rule in &self.allow {
            rules.add_flag(Effect::Allow, rule).map_err(bad_rule)?;
        }
        for rule in &self.deny {
            rules.add_flag(Effect::Deny, rule).map_err(bad_rule)?;
        }
        let sandbox = SandboxPolicy::resolve(&self.config.sandbox, &settings, self.sandbox_flag);
        Ok(Permissions { policy: Policy::new(rules, &self.root), sandbox, trust })
    }

    pub fn open_store(&self) -> Result<(Arc<Store>, ProjectId), CliError> {
        let store = Store::open(&self.paths.database())?;
        let project = store.project(&self.root)?;
        Ok((Arc::new(store), project))
    }

    /// Decide the provider (probing local servers when nothing is configured), the model and
    /// its window, and build the client.
    pub async fn provider(&self) -> Result<ProviderSetup, CliError> {
        let env = crate::config::env_var;
        let local = self.local_server().await?;
        let detected = match &local {
            Some(server) => Detected::Provider(server.provider()),
            None => config::detect_provider(&self.config, &self.overrides, &env),
        };
        let resolved = match detected {
            Detected::Provider(p) => p,
            Detected::ProbeLocal(candidates) => {
                match crate::llm::probe_local(&candidates, std::time::Duration::from_millis(400)).await {
                    Some(found) => config::resolve_provider(&found, &self.overrides, &self.config),
                    None => return Err(CliError::Usage(self.no_provider_message())),
                }
            }
        };
        if resolved.api_key.is_none() && resolved.base_url == resolved.kind.default_base_url() {
            return Err(CliError::Usage(format!(
                "{} is not set. Export it (export {}=…) or choose another provider; `cairn doctor` shows what cairn sees.",
                resolved.kind.key_var(),
                resolved.kind.key_var()
            )));
        }
        let model_name = match &resolved.model {
            Some(m) => m.clone(),
            None => {
                crate::llm::discover_model(&resolved.base_url, resolved.api_key.as_ref())
                    .await
                    .map_err(CliError::Usage)?
                    .model
            }
        };
        let mut model = config::model_info(&self.config, &self.overrides, &model_name);
        if let Some(server) = &local {
            server.serve_model_info(&mut model, self.overrides.context_window);
        }
        let setup_failed = |e: crate::llm::ClientSetupError| CliError::Usage(e.to_string());
        let client: Arc<dyn Provider> = match resolved.kind {
            ProviderKind::Anthropic => Arc::new(
                AnthropicClient::new(&resolved.base_url, resolved.api_key.clone(), &self.config.retry)
                    .map_err(setup_failed)?,
            ),
            ProviderKind::Openai => Arc::new(
                OpenAiClient::new(&resolved.base_url, resolved.api_key.clone(), &self.config.retry)
                    .map_err(setup_failed)?
                    .with_cache_control(self.config.cache_control),
            ),
            ProviderKind::OpenaiResponses => Arc::new(
                OpenAiResponsesClient::new(&resolved.base_url, resolved.api_key.clone(), &self.config.retry)
                    .map_err(setup_failed)?,
            ),
        };
        if model.window_source == WindowSource::Assumed {
            match client.served_window(&model.name).await {
                ServedWindow::Reported(w) => {
                    model.context_window = w;
                    model.window_source = WindowSource::Server;
                }
                ServedWindow::OllamaNotLoaded => model.window_source = WindowSource::AssumedUntilLoaded,
                ServedWindow::Unknown => {}
            }
        }
        tracing::info!(provider = resolved.kind.as_str(), base_url = %resolved.base_url, model = %model.name, window = model.context_window, "provider resolved");
        // A server that reported its window may be a llama-server, whose tokenizer counts exactly.
        let tokenizer = match (resolved.kind, model.window_source) {
            (ProviderKind::Openai, WindowSource::Server) => {
                let timeout = std::time::Duration::from_millis(self.config.local.tokenize_timeout_ms);
                crate::local::Tokenizer::detect(&resolved.base_url, timeout).await
            }
            _ => None,
        };
        Ok(ProviderSetup { resolved, client, model, local, tokenizer })
    }

    pub fn no_provider_message(&self) -> String {
        format!(
            "no model provider is configured. Set one of:\n  ANTHROPIC_API_KEY=…              Anthropic (Claude)\n  OPENAI_API_KEY=…                 OpenAI\n  OPENAI_BASE_URL=http://HOST/v1   any OpenAI-compatible server (OpenRouter, vLLM, LM Studio, …)\nor start Ollama (127.0.0.1:11434), llama-server (127.0.0.1:8080), LM Studio (127.0.0.1:1234) or vLLM (127.0.0.1:8000), which cairn finds by itself,\nor run a GGUF model on a llama-server cairn starts: cairn --local MODEL.gguf.\nprovider, model and base_url can also go in {}. `cairn doctor` shows what cairn sees.",
            self.paths.config_file.display()
        )
    }

    /// Everything the agent needs, for a new or resumed session.
    pub fn agent_setup(
        &self,
        (store, project): (Arc<Store>, ProjectId),
        provider: ProviderSetup,
        session: SessionChoice,
        permissions: Permissions,
        approval: ApprovalPolicy,
        max_turns: Option<u32>,
    ) -> AgentSetup {
        let mode = self
            .mode_flag
            .or(match &session {
                SessionChoice::Resume(info) => Some(info.mode),
                SessionChoice::New | SessionChoice::Drafted(_) => None,
            })
            .unwrap_or(self.config.mode);
        let agent_types = self.agent_types(&permissions.trust);
        AgentSetup {
            store,
            project,
            root: self.root.clone(),
            cwd: self.cwd.clone(),
            config: self.config.clone(),
            provider: provider.client,
            provider_kind: provider.resolved.kind,
            model: provider.model,
            window_override: self.overrides.context_window,
            registry: Arc::new(self.registry(&permissions.sandbox, &agent_types)),
            permissions: permissions.policy,
            sandbox: permissions.sandbox,
            approval,
            max_turns,
            mode,
            session,
            redactor: crate::config::Redactor::from_env(&crate::config::env_var),
            truncations_dir: self.paths.truncations(),
            user_dirs: self.paths.user_extension_dirs(),
            agent_types: Arc::new(agent_types),
            model_lister: Some(model_lister(&provider.resolved)),
            local_server: provider.local,
            tokenizer: provider.tokenizer,
            trust: permissions.trust,
            editor: None,
        }
    }

    /// The agent types: built-in, the user's (`agents/` beside config.toml), the project's (in
    /// a trusted folder).
    pub fn agent_types(&self, trust: &ProjectTrust) -> AgentTypes {
        let project = trust.is_trusted().then_some(self.root.as_path());
        AgentTypes::load(project, self.paths.config_file.parent().map(|d| d.join("agents")).as_deref())
    }

    /// The tools: the built-ins (`bash` in `sandbox`), `task` with these types, and `todo`.
    fn registry(&self, sandbox: &SandboxPolicy, agent_types: &AgentTypes) -> Registry {
        let mut registry = Registry::builtin_with(Bash::sandboxed(sandbox.clone()));
        registry.push(Box::new(Task::new(agent_types)));
        registry.push(Box::new(Todo::new(self.config.todo.max_items)));
        registry
    }

    /// `--session ID` or `--resume`, checked before anything starts.
    pub fn session_choice(&self, store: &Store, project: ProjectId, cli: &Cli) -> Result<SessionChoice, CliError> {
        if let Some(id) = &cli.session {
            return Ok(SessionChoice::Resume(store.resolve_session(project, id)?));
        }
        if cli.resume {
            return match store.latest_conversation(project)? {
                Some(info) => Ok(SessionChoice::Resume(info)),
                None => Err(CliError::Usage(format!(
                    "there is no session to resume in {}; start one without --resume",
                    self.root.display()
                ))),
            };
        }
        Ok(SessionChoice::New)
    }

    pub async fn headless(&self, cli: &Cli, prompt: String) -> Result<ExitCode, CliError> {
        let check = self.trust_check()?;
        // A bad rule or settings file is named first: it is what to fix, trusted or not.
        self.permissions(check.provisional())?;
        let trust = check.without_asking(cli.trust).map_err(|e| match e {
            NotTrusted::Refused(why) => CliError::Usage(why),
            NotTrusted::NotRecorded(why) => CliError::Failed(why),
        })?;
        let permissions = self.permissions(trust)?;
        for notice in permissions.notices() {
            eprintln!("cairn: {notice}");
        }
        let (store, project) = self.open_store()?;
        let session = self.session_choice(&store, project, cli)?;
        let provider = self.provider().await?;
        let approval = if cli.yes { ApprovalPolicy::ApproveAll } else { ApprovalPolicy::DenyAll(Unattended::Headless) };
        let setup = self.agent_setup((store, project), provider, session, permissions, approval, Some(cli.max_turns));
        let handle = crate::agent::spawn(setup)?;
        let outcome = crate::headless::run(handle, prompt, cli.output_format.into()).await;
        self.settle_background();
        self.stop_local_server().await;
        Ok(outcome?)
    }

    /// At exit: end the MCP servers' process groups; say what background commands and what
    /// `bash` calls left running, and end it unless `tools.bash_keep_background` keeps it.
    pub fn settle_background(&self) {
        use std::io::Write;
        crate::mcp::end_servers();
        let keep = self.config.tools.bash_keep_background;
        let background = crate::tools::background::settle_at_exit(keep);
        for line in background.into_iter().chain(crate::tools::leftover::settle_at_exit(keep)) {
            // The command is the model's text: no escape sequence of it reaches the terminal.
            // A closed terminal (SIGHUP) loses the line, not the ending of the processes.
            let _ = writeln!(std::io::stderr(), "cairn: {}", crate::conversation::strip_terminal_controls(&line));
        }
    }
}

/// An untrusted folder's settings as they may apply: no allow rule of the project's, and the
/// project-local `[sandbox]` only where it tightens, as the committed file's. Returns what was
/// held back, to say so.
fn hold_back_widening(settings: &mut ProjectSettings, user: &SandboxConfig) -> Vec<String> {
    let mut held = Vec::new();
    let not_trusted = "the folder is not trusted (cairn --trust trusts it)";
    for (file, path) in [(&mut settings.shared, &settings.shared_path), (&mut settings.local, &settings.local_path)] {
        let allow = std::mem::take(&mut file.permissions.allow);
        if !allow.is_empty() {
            let rules: Vec<&str> = allow.iter().map(|r| r.text.as_str()).collect();
            held.push(format!("{}: allow {} not applied: {not_trusted}", path.display(), rules.join(", ")));
        }
    }
    let local = &mut settings.local.sandbox;
    let path = settings.local_path.display();
    if let Some(mode) = local.mode
        && mode > user.mode.unwrap_or_default()
    {
        local.mode = None;
        held.push(format!("{path}: sandbox mode {} not applied: {not_trusted}", mode.label()));
    }
    if local.network == Some(true) && user.network != Some(true) {
        local.network = None;
        held.push(format!("{path}: sandbox network = true not applied: {not_trusted}"));
    }
    if !local.writable_roots.is_empty() {
        held.push(format!("{path}: sandbox writable_roots {:?} not applied: {not_trusted}", local.writable_roots));
        local.writable_roots.clear();
    }
    held
}

/// Asks the resolved provider for its models (`/model`).
fn model_lister(resolved: &ResolvedProvider) -> crate::agent::ModelLister {
    let (kind, base, key) = (resolved.kind, resolved.base_url.clone(), resolved.api_key.clone());
    Arc::new(move || {
        let (base, key) = (base.clone(), key.clone());
        Box::pin(async move { crate::llm::list_models(kind, &base, key.as_ref()).await })
    })
}

/// `start` as the canonical folder cairn works from, or what is wrong with it.
fn project_dir(start: &Path) -> Result<PathBuf, CliError> {
    let cwd = start.canonicalize().map_err(|e| {
        CliError::Usage(format!(
            "project directory {} is not usable: {e}; pass an existing folder with -C",
            start.display()
        ))
    })?;
    if !cwd.is_dir() {
        return Err(CliError::Usage(format!("{} is not a folder; pass a project folder with -C", cwd.display())));
    }
    Ok(cwd)
}

/// The nearest ancestor of `dir` (itself included) holding `.git`, else `dir`.
pub fn find_project_root(dir: &Path) -> PathBuf {
    dir.ancestors().find(|d| d.join(".git").exists()).unwrap_or(dir).to_path_buf()
}

/// Log to a daily file under the data folder; never to the terminal, which the TUI owns.
/// Logging is a convenience: if the folder cannot be created, cairn runs without it.
fn init_logging(dir: &Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    std::fs::create_dir_all(dir).ok()?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("cairn")
        .filename_suffix("log")
        .max_log_files(7)
        .build(dir)
        .ok()?;
    // The default buffer preallocates 128,000 lines (4 MB); cairn logs a few lines a request.
    let (writer, guard) =
        tracing_appender::non_blocking::NonBlockingBuilder::default().buffered_lines_limit(1_024).finish(appender);
    let wanted = std::env::var("CAIRN_LOG").unwrap_or_else(|_| "info".into());
    // The HTTP and TLS stacks log headers at their finest levels; they stay at info whatever
    // CAIRN_LOG asks, so a key in a header can never reach the log.
    let filter = tracing_subscriber::EnvFilter::try_new(format!(
        "{wanted},hyper=info,hyper_util=info,h2=info,reqwest=info,rustls=info"
    ))
    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).try_init().ok()?;
    Some(guard)
}
