//! `cairn report [SESSION | --since DATE] [--open] [--out FILE]`: a session's report, or the
//! spend of every project since a day, written as one HTML file whose path is printed.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use super::error::CliError;
use super::startup::Startup;

pub fn run(
    startup: &Startup,
    session: Option<&str>,
    since: Option<&str>,
    open: bool,
    out: Option<&Path>,
) -> Result<ExitCode, CliError> {
    let (store, project) = startup.open_store()?;
    let pricing = crate::config::Pricing::from_config(&startup.config);
    let (html, name) = match since {
        Some(day) => {
            let from = since_rfc3339(day)?;
            let mut spend = crate::report::gather_spend(&store, &from, &pricing)?;
            // The page names the day as the user gave it.
            spend.since = day.to_string();
            (crate::report::render_spend(&spend), format!("spend-since-{day}"))
        }
        None => {
            let info = match session {
                Some(id) => store.resolve_session(project, id)?,
                None => store.latest_session(project)?.ok_or_else(|| {
                    CliError::Usage(format!(
                        "{} has no sessions yet; run cairn there first, or name a session (cairn sessions lists them)",
                        startup.root.display()
                    ))
                })?,
            };
            let root = startup.root.display().to_string();
            let redactor = crate::config::Redactor::from_env(&crate::config::env_var);
            let gathered = crate::report::Gathered {
                store: &store,
                session: &info,
                project_root: &root,
                pricing: &pricing,
                redactor: &redactor,
                chars_per_token: startup.config.context.chars_per_token,
                quarantine: &crate::memory::quarantine,
            };
            let report = crate::report::gather_session(&gathered)?;
            (crate::report::render_session(&report), format!("session-{}", info.id))
        }
    };
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => crate::report::default_path(&startup.paths.data_dir, &name),
    };
    crate::report::write_file(&path, &html)
        .map_err(|e| CliError::Failed(format!("cannot write the report to {}: {e}", path.display())))?;
    writeln!(std::io::stdout(), "{}", path.display()).map_err(|e| CliError::Failed(e.to_string()))?;
    if open {
        open_file(&path)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD` as the start of that day, local time, in RFC 3339 (UTC).
fn since_rfc3339(day: &str) -> Result<String, CliError> {
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| CliError::Usage(format!("--since takes a day as YYYY-MM-DD (e.g. 2026-03-01), not {day:?}")))?;
    let midnight = date.and_hms_opt(0, 0, 0).unwrap_or_default();
    let local = midnight
        .and_local_timezone(chrono::Local)
        .earliest()
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|| midnight.and_utc());
    Ok(local.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// Open `path` with the desktop's viewer (xdg-open, or `open` on macOS), without waiting.
fn open_file(path: &Path) -> Result<(), CliError> {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    std::process::Command::new(opener)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| {
            CliError::Failed(format!(
                "the report is written ({}) but {opener} could not open it: {e}; open the file in a browser",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_must_be_a_date() {
        assert!(since_rfc3339("2026-03-01").is_ok_and(|s| s.ends_with('Z')));
        let e = since_rfc3339("last week").unwrap_err();
        assert!(e.to_string().contains("YYYY-MM-DD"), "{e}");
    }
}
