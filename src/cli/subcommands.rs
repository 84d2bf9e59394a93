//! `cairn sessions`, `cairn memories`, `cairn forget`, `cairn export`, `cairn usage`,
//! `cairn doctor`.

use std::io::Write;
use std::process::ExitCode;

use super::error::CliError;
use super::local_time;
use super::startup::Startup;
use crate::agent::Library;
use crate::config::Detected;
use crate::conversation::format_tokens;

/// The library of the project cairn was started in.
fn library(startup: &Startup) -> Result<Library, CliError> {
    let (store, project) = startup.open_store()?;
    Ok(Library::new(store, project))
}

pub fn sessions(startup: &Startup, json: bool) -> Result<ExitCode, CliError> {
    let list = library(startup)?.sessions()?;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&list).map_err(|e| CliError::Failed(e.to_string()))?;
        writeln!(out, "{text}").map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        writeln!(out, "No sessions in {} yet.", startup.root.display()).map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "{:<12}  {:<16}  {:>5}  {:>7}  TITLE", "ID", "LAST ACTIVE", "MSGS", "TOKENS").map_err(io_failed)?;
    for s in list {
        writeln!(
            out,
            "{:<12}  {:<16}  {:>5}  {:>7}  {}",
            s.id,
            local_time(&s.last_active_at),
            s.message_count,
            format_tokens(s.tokens),
            title_of(&s)
        )
        .map_err(io_failed)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A session's title as the list shows it; a subagent's is marked and sits under its parent's.
fn title_of(s: &crate::store::SessionSummary) -> String {
    let title = if s.title.is_empty() { "(untitled)" } else { &s.title };
    match (&s.parent, &s.agent_type) {
        (Some(_), Some(agent)) => format!("  ↳ {agent} agent: {title}"),
        (Some(_), None) => format!("  ↳ subagent: {title}"),
        (None, _) => title.to_string(),
    }
}

pub fn memories(startup: &Startup, json: bool) -> Result<ExitCode, CliError> {
    let list = library(startup)?.memories()?;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&list).map_err(|e| CliError::Failed(e.to_string()))?;
        writeln!(out, "{text}").map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        writeln!(
            out,
            "No memories for {} yet. cairn saves them when you ask it to remember something, and the lasting facts a compaction names.",
            startup.root.display()
        )
        .map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:>5}  {:<10}  {:<8}  {:<3}  {:<10}  {:<8}  TITLE",
        "ID", "TYPE", "CLASS", "PIN", "CREATED", "SESSION"
    )
    .map_err(io_failed)?;
    for m in list {
        writeln!(
            out,
            "{:>5}  {:<10}  {:<8}  {:<3}  {:<10}  {:<8}  {}{}",
            m.id,
            m.kind,
            m.class,
            if m.pinned { "yes" } else { "" },
            m.created_at.get(..10).unwrap_or(""),
            m.session_id.as_deref().and_then(|s| s.get(..8)).unwrap_or("-"),
            m.title,
            crate::agent::provenance_suffix(&m)
        )
        .map_err(io_failed)?;
        if let Some(why) = &m.quarantined {
            let held = if m.pinned {
                "pinned by you, so given to the model despite"
            } else {
                "QUARANTINED, not given to the model until you pin it:"
            };
            writeln!(out, "{:>5}  {held} {why}", "").map_err(io_failed)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn forget(startup: &Startup, id: &str) -> Result<ExitCode, CliError> {
    let forgot = library(startup)?.forget(id)?;
    writeln!(std::io::stdout(), "{forgot}").map_err(io_failed)?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn export ID [--format jsonl|md|html] [--out FILE]`: JSONL (the default) as
/// docs/TRAJECTORY.md gives it, or the conversation as a readable file.
pub fn export(
    startup: &Startup,
    id: &str,
    format: super::args::ExportFormatArg,
    out: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    use super::args::ExportFormatArg;
    let (store, project) = startup.open_store()?;
    let session = store.resolve_session(project, id)?;
    let readable = match format {
        ExportFormatArg::Jsonl => None,
        ExportFormatArg::Md => Some(crate::report::ExportFormat::Markdown),
        ExportFormatArg::Html => Some(crate::report::ExportFormat::Html),
    };
    let text = match readable {
        None => jsonl(&store, &session.id)?,
        Some(format) => {
            let redactor = crate::config::Redactor::from_env(&crate::config::env_var);
            let root = startup.root.display().to_string();
            let transcript = crate::report::gather_transcript(&store, &session, &root, &redactor)?;
            format.render(&transcript)
        }
    };
    match out {
        Some(path) => {
            crate::report::write_file(path, &text)
                .map_err(|e| CliError::Failed(format!("cannot write the export to {}: {e}", path.display())))?;
            writeln!(std::io::stdout(), "{}", path.display()).map_err(io_failed)?;
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes()).map_err(io_failed)?;
            stdout.flush().map_err(io_failed)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session as docs/TRAJECTORY.md JSONL: the static system prompt first, then every message, with
/// tool results in full (not as truncated for the model). Messages a conversation rewind took
/// out of what is sent are kept, marked `"rewound": true` (a replay skips them).
fn jsonl(store: &crate::store::Store, session: &str) -> Result<String, CliError> {
    let mut out = String::new();
    let system = serde_json::json!({"role": "system", "content": crate::prompt::static_prompt()});
    out.push_str(&format!("{system}\n"));
    let rewound = store.rewound_ranges(session)?;
    for stored in store.messages(session)? {
        let m = &stored.message;
        let full = match m.tool_result() {
            Some(r) => store.tool_output(session, &r.call_id)?,
            None => None,
        };
        let mut line = crate::context::trajectory_line(m, full.as_deref(), Some(&stored.created_at));
        if crate::store::is_rewound(&rewound, stored.seq) {
            line["rewound"] = serde_json::Value::Bool(true);
        }
        out.push_str(&format!("{line}\n"));
    }
    Ok(out)
}

pub async fn doctor(startup: &Startup) -> Result<ExitCode, CliError> {
    let mut out = String::new();
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    out.push_str(&format!("cairn {}\n\nPaths\n", env!("CARGO_PKG_VERSION")));
    let config_state = if startup.paths.config_file.exists() { "" } else { " (not present: defaults)" };
    line(&mut out, "config", format!("{}{config_state}", startup.paths.config_file.display()));
    line(&mut out, "data", startup.paths.data_dir.display().to_string());
    line(&mut out, "database", startup.paths.database().display().to_string());
    line(&mut out, "truncations", startup.paths.truncations().display().to_string());
    line(&mut out, "logs", startup.paths.logs().display().to_string());
    line(&mut out, "project root", startup.root.display().to_string());
    let store = crate::store::Store::open(&startup.paths.database());
    match &store {
        Ok(store) => line(&mut out, "schema", format!("version {}", store.schema_version().unwrap_or(0))),
        Err(e) => line(&mut out, "schema", format!("cannot open: {e}")),
    }
    out.push_str(&super::rewind::doctor_section(startup, store.as_ref().ok()));

    let trust = super::runnable::section(startup, &mut out);
    let mut ok = trust.is_some();
    if let Some(trust) = &trust {
        ok &= permissions_report(startup, trust, &mut out);
        instructions_report(startup, trust, &mut out);
    }

    out.push_str("\nProvider\n");
    let env = crate::config::env_var;
    let detected = crate::config::detect_provider(&startup.config, &startup.overrides, &env);
    for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"] {
        let shown = match crate::config::env_var(var) {
            Some(v) if var.ends_with("_KEY") && !v.is_empty() => "set".to_string(),
            Some(v) if !v.is_empty() => v,
            _ => "not set".to_string(),
        };
        line(&mut out, var, shown);
    }
    if let Detected::ProbeLocal(candidates) = &detected
        && !startup.wants_local()
    {
        let names: Vec<_> = candidates.iter().map(|c| format!("{} ({})", c.name, c.base_url)).collect();
        line(&mut out, "detection", format!("nothing configured; probing {}", names.join(", ")));
    }
    let provider =
        if startup.wants_local() { startup.local_doctor(&mut out).await } else { Some(startup.provider().await) };
    match provider {
        None => {}
        Some(Ok(p)) if p.local.is_some() => {
            line(&mut out, "provider", format!("{} ({})", p.resolved.kind.as_str(), p.resolved.reason));
            line(&mut out, "model", p.model.name.clone());
            line(
                &mut out,
                "context window",
                format!("{} tokens ({})", p.model.context_window, window_source_text(p.model.window_source)),
            );
            if let Some(server) = &p.local {
                super::local::doctor_server_lines(server, &mut out);
            }
        }
        Some(Ok(p)) => {
            line(&mut out, "provider", format!("{} ({})", p.resolved.kind.as_str(), p.resolved.reason));
            line(&mut out, "endpoint", p.resolved.base_url.clone());
            line(&mut out, "api key", if p.resolved.api_key.is_some() { "set".into() } else { "none".into() });
            line(&mut out, "model", p.model.name.clone());
            line(
                &mut out,
                "context window",
                format!("{} tokens ({})", p.model.context_window, window_source_text(p.model.window_source)),
            );
            for (key, value) in model_facts(&p.model, startup.config.thinking) {
                line(&mut out, key, value);
            }
            let reach = reachability(&p.resolved.base_url, p.resolved.kind).await;
            line(&mut out, "reachable", reach);
        }
        Some(Err(e)) => {
            ok = false;
            out.push_str(&format!("  {e}\n"));
        }
    }
    ok &= super::local::doctor_section(startup, &mut out).await;

    out.push_str("\nTerminal\n");
    use std::io::IsTerminal;
    line(&mut out, "stdout is a tty", std::io::stdout().is_terminal().to_string());
    line(&mut out, "TERM", std::env::var("TERM").unwrap_or_else(|_| "not set".into()));
    line(&mut out, "COLORTERM", std::env::var("COLORTERM").unwrap_or_else(|_| "not set".into()));
    line(
        &mut out,
        "NO_COLOR",
        if std::env::var_os("NO_COLOR").is_some() { "set: no colours".into() } else { "not set".into() },
    );
    match crossterm::terminal::size() {
        Ok((w, h)) => line(&mut out, "size", format!("{w}×{h}")),
        Err(_) => line(&mut out, "size", "unknown (not a terminal)".into()),
    }
    std::io::stdout().lock().write_all(out.as_bytes()).map_err(io_failed)?;
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The instruction files the prompt holds here, and those skipped with why.
fn instructions_report(startup: &Startup, trust: &crate::trust::ProjectTrust, out: &mut String) {
    let scan = crate::prompt::scan_instruction_files(&startup.root, &startup.cwd, &startup.paths.user_extension_dirs());
    let scan = if trust.is_trusted() { scan } else { scan.untrusted() };
    out.push_str("\nInstruction files\n");
    if scan.files.is_empty() && scan.skipped.is_empty() {
        out.push_str("  none (AGENTS.md or CLAUDE.md in your config folder, and from the project root down to here)\n");
    }
    for file in &scan.files {
        let clipped =
            file.clipped_from.map(|n| format!(" (first {} of {n} bytes)", file.text.len())).unwrap_or_default();
        out.push_str(&format!("  {:<18} in the prompt{clipped}\n", file.path));
    }
    for skipped in &scan.skipped {
        out.push_str(&format!("  {:<18} skipped: {}\n", skipped.path, skipped.reason));
    }
}

/// What the catalog (with config.toml's `[models]`) says of `model` beyond its window, and the
/// thinking cairn will ask of it.
fn model_facts(
    model: &crate::config::ModelInfo,
    thinking: Option<crate::config::ThinkingSetting>,
) -> Vec<(&'static str, String)> {
    use crate::config::ThinkingSupport;
    let prices = match model.prices {
        Some(p) => format!(
            "${} in, ${} out, cache read ${}, write ${} (1 h: ${}) per million tokens",
            p.input, p.output, p.cache_read, p.cache_write, p.cache_write_1h
        ),
        None => "unknown (not in the catalog or [models])".to_string(),
    };
    let asked = match (model.thinking, thinking) {
        (ThinkingSupport::None, Some(_)) => "ignored: the model does not think".to_string(),
        (ThinkingSupport::None, None) => "none".to_string(),
        (_, None) => "the model's default (thinking not set)".to_string(),
        (_, Some(t)) => t.as_string(),
    };
    vec![
        ("max output", format!("{} tokens", model.max_output_tokens)),
        ("prices", prices),
        ("thinking", format!("{} ({})", asked, model.thinking.as_str())),
        ("images", if model.images { "taken".to_string() } else { "not taken: sent as a text note".to_string() }),
    ]
}

/// The sandbox and every permission rule in force, each with its level and where it is
/// written. False when the settings or a rule cannot be read (the error says where).
fn permissions_report(startup: &Startup, trust: &crate::trust::ProjectTrust, out: &mut String) -> bool {
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    out.push_str("\nPermissions\n");
    let permissions = match startup.permissions(trust.clone()) {
        Ok(p) => p,
        Err(e) => {
            out.push_str(&format!("  {e}\n"));
            return false;
        }
    };
    line(out, "sandbox", permissions.sandbox.describe());
    let enforcement = match crate::tools::sandbox::support() {
        crate::tools::sandbox::Support::Available { detail } => detail.clone(),
        crate::tools::sandbox::Support::Unavailable { reason } => format!("unavailable: {reason}"),
    };
    line(out, "enforced by", enforcement);
    line(out, "limits", permissions.sandbox.describe_limits());
    for note in permissions.sandbox.notes.iter().chain(permissions.trust.notes()) {
        line(out, "note", note.clone());
    }
    for (i, rule) in permissions.policy.rules.iter().enumerate() {
        line(out, if i == 0 { "rules" } else { "" }, rule.describe());
    }
    true
}

/// `cairn usage`: cost and tokens per day, and in each day per project and session.
pub fn usage(startup: &Startup, json: bool, days: u32) -> Result<ExitCode, CliError> {
    let library = library(startup)?.with_pricing(crate::config::Pricing::from_config(&startup.config));
    let report = library.usage(days)?;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| CliError::Failed(e.to_string()))?;
        writeln!(out, "{text}").map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    for line in crate::agent::usage_lines(&report, days) {
        writeln!(out, "{line}").map_err(io_failed)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn window_source_text(source: crate::config::WindowSource) -> &'static str {
    use crate::config::WindowSource;
    match source {
        WindowSource::Flag => "from --context-window",
        WindowSource::Config => "from config.toml",
        WindowSource::Catalog => "known model",
        WindowSource::Server => "reported by the server",
        WindowSource::Assumed => "unknown model: assumed; set --context-window",
        WindowSource::AssumedUntilLoaded => "assumed until Ollama loads the model and reports it",
    }
}

async fn reachability(base_url: &str, kind: crate::config::ProviderKind) -> String {
    let url = match kind {
        crate::config::ProviderKind::Anthropic => format!("{base_url}/v1/models"),
        crate::config::ProviderKind::Openai | crate::config::ProviderKind::OpenaiResponses => {
            format!("{base_url}/models")
        }
    };
    let client = match crate::net::build_client(base_url) {
        Ok(c) => c,
        Err(e) => return format!("no: {e}"),
    };
    match client.get(&url).timeout(std::time::Duration::from_secs(5)).send().await {
        Ok(r) => format!("yes (HTTP {} from {url})", r.status().as_u16()),
        Err(e) => format!("no: {e}"),
    }
}

fn io_failed(e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return CliError::OutputClosed;
    }
    CliError::Failed(format!("cannot write output: {e}"))
}
