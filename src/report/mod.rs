//! The session report (`cairn report`, `/report`): where a session's tokens went, as one
//! self-contained HTML file — no network, no script, charts as inline SVG drawn here.
//!
//! `gather` reads a session from the store (and a replay reads its own run, `from_replay`)
//! into a [`SessionReport`]; `page` writes it as HTML with the charts of `charts`, drawn with
//! the primitives of `svg`. Every text that reaches the file passes the secrets' redaction.
//! `export` writes the conversation itself the same way (`cairn export --format md|html`).
//! Must not talk to the model.

mod charts;
mod export;
mod gather;
mod model;
mod page;
mod replay;
mod spend;
mod svg;

pub use export::{ExportFormat, gather_transcript};
pub use gather::{Gathered, gather_session};
pub use model::{BreakMark, Parts, StageMark};
pub use page::{render_session, render_spend};
pub use replay::{ReplaySource, from_replay};
pub use spend::gather_spend;

/// Where a report is written when no path is given: `reports/` in the data folder, named for
/// what it reports and when.
pub fn default_path(data_dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    data_dir.join("reports").join(format!("{safe}-{stamp}.html"))
}

/// Where an exported conversation is written when no path is given: `exports/` in the data
/// folder, named for the session and when.
pub fn export_path(data_dir: &std::path::Path, session: &str, format: ExportFormat) -> std::path::PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let safe: String = session.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    data_dir.join("exports").join(format!("session-{safe}-{stamp}.{}", format.extension()))
}

/// Write `html` to `path` (its folder created), atomically: a reader never sees half a report.
pub fn write_file(path: &std::path::Path, html: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    let tmp = std::path::PathBuf::from(part);
    std::fs::write(&tmp, html)?;
    std::fs::rename(&tmp, path)
}
