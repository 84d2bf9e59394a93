//! `cairn context replay FILE`: a recorded session through the context pipeline, reported.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use super::args::ReplaySummaries;
use super::error::CliError;
use super::startup::Startup;
use crate::config::{ModelInfo, lookup_model};
use crate::context::{
    DumpedRequest, ExtractiveSummarizer, ReplayOptions, ReplayReport, ScriptedSummarizer, Summarizer, Trajectory,
    USAGE_CHARS_PER_TOKEN, parse_trajectory, thousands, trajectory_line,
};
use crate::conversation::{Message, SystemBlock, ToolSpec};
use crate::llm::{ChatRequest, RetryPolicy, ToolChoice};

pub struct Args<'a> {
    pub file: &'a Path,
    pub window: Option<u64>,
    pub json: bool,
    pub dump: Option<&'a Path>,
    /// `None`: the configured model, else the extractive summariser.
    pub summaries: Option<ReplaySummaries>,
    /// Tokens of the tool definitions; `None`: costsim's figure.
    pub tool_tokens: Option<u64>,
    /// Where to write the replay's session report (HTML).
    pub report: Option<&'a Path>,
}

fn write_jsonl(path: &Path, system: &str, messages: &[Message], reply: Option<&str>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "{}", serde_json::json!({"role": "system", "content": system}))?;
    for m in messages {
        writeln!(out, "{}", trajectory_line(m, None, None))?;
    }
    if let Some(reply) = reply {
        writeln!(out, "{}", serde_json::json!({"role": "assistant", "content": reply}))?;
    }
    out.flush()
}

/// The request a replayed session's summary calls follow: its recorded system prompt, a tool
/// for each name its calls use (the recording keeps no schemas) and the configured breakpoints.
fn in_place_template(trajectory: &Trajectory, model: &str, ttl: crate::config::CacheTtl) -> ChatRequest {
    let mut names: Vec<String> =
        trajectory.messages.iter().flat_map(|m| m.tool_calls().map(|c| c.name.clone())).collect();
    names.sort();
    names.dedup();
    let tools = names
        .into_iter()
        .map(|name| ToolSpec {
            description: format!("The recorded session's `{name}` tool."),
            name,
            input_schema: serde_json::json!({"type": "object"}),
        })
        .collect();
    let system = trajectory.system.clone().filter(|s| !s.is_empty());
    ChatRequest {
        model: model.to_string(),
        system: system.map(|text| SystemBlock { text, cache_breakpoint: true }).into_iter().collect(),
        messages: Vec::new(),
        tools,
        tool_choice: ToolChoice::Auto,
        max_tokens: 0,
        cache: Some(ttl),
        tail: None,
        reasoning: None,
        images: false,
    }
}

pub async fn run(startup: &Startup, args: Args<'_>) -> Result<ExitCode, CliError> {
    let text = std::fs::read_to_string(args.file)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", args.file.display())))?;
    let trajectory = parse_trajectory(&text);
    if trajectory.messages.is_empty() {
        return Err(CliError::Usage(format!(
            "{} holds no messages ({} lines could not be read); give a session in the JSONL format of `cairn export`",
            args.file.display(),
            trajectory.skipped_lines
        )));
    }
    if trajectory.rewound > 0 {
        eprintln!(
            "cairn: {} message(s) a rewind took out of the conversation are skipped, as resuming the session skips them",
            trajectory.rewound
        );
    }
    // The model whose window and prices apply: the configured one, else cairn's default.
    let model_name = startup
        .overrides
        .model
        .clone()
        .or_else(|| startup.config.model.clone())
        .unwrap_or_else(|| "claude-sonnet-4-5".into());
    let mut model: ModelInfo = lookup_model(&model_name, &startup.config.models);
    if let Some(w) = startup.overrides.context_window.or(startup.config.context_window) {
        model.context_window = w;
    }
    let window = args.window.unwrap_or(model.context_window);
    let extractive = |why: &str| -> (Box<dyn Summarizer>, String) {
        (Box::new(ExtractiveSummarizer { window }), format!("the offline extractive summariser ({why})"))
    };
    let (summarizer, summaries_by): (Box<dyn Summarizer>, String) = match args.summaries {
        Some(ReplaySummaries::Extractive) => extractive("--summaries extractive"),
        Some(ReplaySummaries::Scripted) => (
            Box::new(ScriptedSummarizer { window, chars_per_token: USAGE_CHARS_PER_TOKEN }),
            "a scripted summariser that fills the length asked for (--summaries scripted)".into(),
        ),
        Some(ReplaySummaries::Model) | None => match startup.provider().await {
            Ok(p) => {
                let by = format!("{} via {}", p.model.name, p.resolved.kind.as_str());
                // A replay is not a session: its calls are not recorded as anyone's usage.
                let aux = crate::agent::AuxModel {
                    provider: p.client,
                    model: p.model.name.clone(),
                    window: window.min(p.model.context_window),
                    retry: RetryPolicy::from_config(&startup.config.retry),
                    cancel: tokio_util::sync::CancellationToken::new(),
                    recorder: None,
                };
                // The session's own model reads the conversation in place, as in a session:
                // the recorded system prompt, and the tools the recorded calls name.
                let template = in_place_template(&trajectory, &p.model.name, startup.config.cache.ttl);
                (Box::new(crate::agent::SessionSummarizer { aux, template: Some(template) }), by)
            }
            Err(e) if args.summaries == Some(ReplaySummaries::Model) => {
                return Err(CliError::Usage(format!("--summaries model needs a provider: {e}")));
            }
            Err(_) => extractive("no provider is configured"),
        },
    };
    let spill_dir = match args.dump {
        Some(dir) => dir.join("truncations"),
        None => std::env::temp_dir().join(format!("cairn-replay-{}", std::process::id())),
    };
    if let Some(dir) = args.dump {
        std::fs::create_dir_all(dir).map_err(|e| CliError::Usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut spill = |call: &str, content: &str| -> Result<String, String> {
        std::fs::create_dir_all(&spill_dir).map_err(|e| e.to_string())?;
        let safe: String =
            call.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let path = spill_dir.join(format!("replay-{safe}.txt"));
        std::fs::write(&path, content).map_err(|e| e.to_string())?;
        Ok(path.display().to_string())
    };
    let mut dump_error: Option<String> = None;
    let mut dump = |d: DumpedRequest| {
        let Some(dir) = args.dump else { return };
        let name = match d.aux {
            Some(n) => format!("{:04}-aux-{n}.jsonl", d.index),
            None => format!("{:04}.jsonl", d.index),
        };
        if let Err(e) = write_jsonl(&dir.join(&name), &d.system, &d.messages, d.reply.as_deref()) {
            dump_error.get_or_insert(format!("cannot write {name}: {e}"));
        }
    };
    let mut options = ReplayOptions::new(window, startup.config.context.clone(), model.prices);
    if let Some(tokens) = args.tool_tokens {
        options.tool_schema_tokens = tokens;
    }
    let report = crate::context::replay(&trajectory, &options, summarizer.as_ref(), &mut spill, &mut dump).await;
    if args.dump.is_none() {
        let _ = std::fs::remove_dir_all(&spill_dir);
    }
    if let Some(e) = dump_error {
        return Err(CliError::Failed(e));
    }
    if let Some(path) = args.report {
        let name = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let source = crate::report::ReplaySource {
            name: &name,
            model: &model.name,
            budget: crate::context::ContextBudget::new(window, &startup.config.context),
            chars_per_token: startup.config.context.chars_per_token,
        };
        let redactor = crate::config::Redactor::from_env(&crate::config::env_var);
        let html = crate::report::render_session(&crate::report::from_replay(&report, &trajectory, &source, &redactor));
        crate::report::write_file(path, &html)
            .map_err(|e| CliError::Failed(format!("cannot write the report to {}: {e}", path.display())))?;
        eprintln!("cairn: replay report written to {}", path.display());
    }
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_string_pretty(&report)
            .map_err(|e| e.to_string())
            .and_then(|j| writeln!(out, "{j}").map_err(|e| e.to_string()))
    } else {
        write!(out, "{}", render(&report, args.file, &model.name, &summaries_by)).map_err(|e| e.to_string())
    };
    written.map_err(|e| CliError::Failed(format!("cannot write the report: {e}")))?;
    Ok(if report.totals.violations == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn render(report: &ReplayReport, file: &Path, model: &str, summaries_by: &str) -> String {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = format!(
        "replay of {name}: {} messages, {} lines skipped, {} orphaned results\nwindow {} tokens; summaries by {summaries_by}; usage as a provider counting {} characters a token reports it\n\n",
        report.messages, report.skipped_lines, report.orphans, report.window, USAGE_CHARS_PER_TOKEN
    );
    out.push_str("    #  msgs   tokens  level     cache  stages\n");
    for r in &report.requests {
        let cache = (r.cache_read_tokens * 100).checked_div(r.tokens).unwrap_or(0);
        let stages: Vec<&str> = r.stages.iter().map(|s| s.detail.as_str()).collect();
        let mut line = format!(
            "{:>5}  {:>4}  {:>7}  {:<8}  {:>4}%  {}",
            r.index,
            r.messages,
            thousands(r.tokens),
            r.level.as_str(),
            cache,
            stages.join("; ")
        );
        for v in &r.violations {
            line.push_str(&format!("\n       VIOLATION: {v}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for a in report.aux.iter().filter(|a| !a.violations.is_empty()) {
        for v in &a.violations {
            out.push_str(&format!("  before #{}: VIOLATION: {v}\n", a.before));
        }
    }
    let t = &report.totals;
    let cost = match t.cost {
        Some(c) => format!(", cost ${c:.2} at {model} prices"),
        None => format!(", no prices known for {model}"),
    };
    out.push_str(&format!(
        "\ntotals: {} requests, {} tokens sent (largest {}), {:.0} % read from cache{cost}\n",
        t.requests,
        thousands(t.tokens_sent),
        thousands(t.largest_request),
        t.cache_read_share * 100.0
    ));
    out.push_str(&format!(
        "stages: {} truncations, {} dedup replacements, {} pruned results, {} compactions ({} failed), {} trimmed messages; {} auxiliary requests ({} tokens in, {} out)\n",
        t.truncations,
        t.dedup_replacements,
        t.pruned_results,
        t.compactions,
        t.compaction_failures,
        t.trimmed_messages,
        t.aux_requests,
        thousands(t.aux_input_tokens),
        thousands(t.aux_output_tokens)
    ));
    out.push_str(&format!("invariant violations: {}\n", t.violations));
    out
}
