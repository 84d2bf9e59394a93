//! `cairn rewind` and `cairn diff`: the same rewind and diffs as `/rewind` and `/diff`, run
//! directly on a session no other cairn has open.

use std::io::Write;
use std::process::ExitCode;

use super::error::CliError;
use super::local_time;
use super::startup::Startup;
use crate::agent::{DiffTarget, Library, RewindScope, Rewinder};
use crate::checkpoint::Overwrite;
use crate::store::StoreError;

/// `cairn rewind ID`: the session's turns, as `--to` numbers them.
pub fn list(startup: &Startup, id: &str, json: bool) -> Result<ExitCode, CliError> {
    let (store, project) = startup.open_store()?;
    let session = store.resolve_session(project, id)?;
    let turns = Library::new(store, project).turns(&session.id)?;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&turns).map_err(|e| CliError::Failed(e.to_string()))?;
        writeln!(out, "{text}").map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    if turns.is_empty() {
        writeln!(out, "Session {} has no turns yet.", session.id).map_err(io_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "{:>4}  {:<16}  {:>5}  PROMPT", "TURN", "WHEN", "FILES").map_err(io_failed)?;
    for t in &turns {
        let prompt = if t.prompt.is_empty() { "(no text)" } else { &t.prompt };
        writeln!(out, "{:>4}  {:<16}  {:>5}  {prompt}", t.number, local_time(&t.created_at), t.files_changed)
            .map_err(io_failed)?;
    }
    writeln!(out, "\nRewind with: cairn rewind {} --to TURN [--code|--conversation|--both]", session.id)
        .map_err(io_failed)?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn rewind ID --to N`: exit 0 when everything was put back, 1 when files were left as
/// they are (conflicts, contents not kept), with the report saying which and why.
pub fn rewind(
    startup: &Startup,
    id: &str,
    turn: u32,
    scope: RewindScope,
    force: bool,
    json: bool,
) -> Result<ExitCode, CliError> {
    let (store, project) = startup.open_store()?;
    let session = store.resolve_session(project, id)?;
    // The session must not change under the rewind: a cairn working in it is told to do it.
    let _lock = store.lock_session(&session.id).map_err(|e| match e {
        StoreError::SessionBusy { id, holder } => CliError::Failed(format!(
            "session {id} is open in another cairn ({holder}); rewind it there with /rewind, or quit it first"
        )),
        other => other.into(),
    })?;
    // The same key values the agent kept out of the store, so files are read as it read them.
    let secrets = crate::config::Redactor::from_env(&crate::config::env_var);
    let rewinder = Rewinder {
        store: &store,
        session: &session.id,
        root: &startup.root,
        config: &startup.config.checkpoints,
        secrets: &secrets,
    };
    let chosen = rewinder.turn_numbered(turn)?;
    let overwrite = if force { Overwrite::All } else { Overwrite::Nothing };
    let outcome = rewinder.rewind(chosen, scope, &overwrite)?;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&outcome).map_err(|e| CliError::Failed(e.to_string()))?;
        writeln!(out, "{text}").map_err(io_failed)?;
    } else {
        for line in outcome.lines() {
            writeln!(out, "{line}").map_err(io_failed)?;
        }
        if outcome.code.as_ref().is_some_and(|c| !c.conflicts.is_empty()) {
            writeln!(
                out,
                "Conflicting files were left as they are; run again with --force to overwrite them with what they held before turn {turn}."
            )
            .map_err(io_failed)?;
        }
    }
    Ok(if outcome.complete() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `cairn diff ID [--turn N]`.
pub fn diff(startup: &Startup, id: &str, turn: Option<u32>) -> Result<ExitCode, CliError> {
    let (store, project) = startup.open_store()?;
    let session = store.resolve_session(project, id)?;
    let target = turn.map_or(DiffTarget::Session, DiffTarget::Turn);
    let diff = Library::new(store, project).diff(&session.id, target)?;
    let mut out = std::io::stdout().lock();
    if diff.diff.is_empty() {
        writeln!(out, "No file changes in {}.", diff.title).map_err(io_failed)?;
    } else {
        out.write_all(diff.diff.as_bytes()).map_err(io_failed)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn doctor`'s checkpoint lines: whether they are on, the space they take against the
/// cap, and what is kept.
pub fn doctor_section(startup: &Startup, store: Option<&crate::store::Store>) -> String {
    let c = &startup.config.checkpoints;
    let mut out = String::from("\nCheckpoints\n");
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    line(&mut out, "enabled", if c.enabled { "yes".into() } else { "no (checkpoints.enabled = false)".into() });
    let Some(store) = store else {
        line(&mut out, "space", "unknown: the database cannot be opened".into());
        return out;
    };
    match store.checkpoint_space() {
        Ok(space) => {
            let mb = |b: u64| format!("{:.1} MB", b as f64 / (1024.0 * 1024.0));
            let used = space.stored_bytes as f64 / c.max_store_bytes().max(1) as f64 * 100.0;
            line(
                &mut out,
                "space",
                format!(
                    "{} stored of the {} MB cap ({used:.0} %), holding {} of file contents",
                    mb(space.stored_bytes),
                    c.max_store_mb,
                    mb(space.content_bytes)
                ),
            );
            line(
                &mut out,
                "contents",
                format!("{} kept, {} dropped by the cap (oldest first)", space.blobs_kept, space.blobs_dropped),
            );
            line(
                &mut out,
                "recorded",
                format!(
                    "{} checkpoints, {} file changes; {} files of project trees kept current",
                    space.checkpoints, space.changes, space.manifest_entries
                ),
            );
        }
        Err(e) => line(&mut out, "space", format!("cannot read: {e}")),
    }
    out
}

fn io_failed(e: std::io::Error) -> CliError {
    CliError::Failed(format!("cannot write output: {e}"))
}
