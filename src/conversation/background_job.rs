//! `BackgroundJob`: a command `bash` started with `background: true`, as `/ps`, the status line
//! and the headless JSON show it. Plain data: the tools keep the process, this is its picture.

use serde::Serialize;

/// Where a background command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    /// Something in its process group still runs.
    Running,
    /// It ended by itself with this exit code.
    Exited { code: i32 },
    /// It ended by itself on this signal.
    Killed { signal: i32 },
    /// `/stop`, `bash_stop` or a rewind ended it.
    Stopped,
}

impl JobState {
    pub fn is_running(self) -> bool {
        match self {
            JobState::Running => true,
            JobState::Exited { .. } | JobState::Killed { .. } | JobState::Stopped => false,
        }
    }

    /// `running`, `exited 0`, `killed by signal 9`, `stopped`.
    pub fn label(self) -> String {
        match self {
            JobState::Running => "running".into(),
            JobState::Exited { code } => format!("exited {code}"),
            JobState::Killed { signal } => format!("killed by signal {signal}"),
            JobState::Stopped => "stopped".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackgroundJob {
    /// `/stop N`, `bash_output {"id": N}`: numbered from 1 in this cairn.
    pub id: u32,
    pub command: String,
    #[serde(flatten)]
    pub state: JobState,
    /// The process group (its leader's pid): `kill -- -GROUP` ends it by hand.
    pub group: i32,
    /// When it started (RFC 3339) and how long it ran (or has run), in whole seconds.
    pub started_at: String,
    pub seconds: u64,
    /// The session whose call started it.
    pub session: String,
    /// The file its output goes to, in the data folder (bounded: the oldest part is dropped).
    pub log: String,
    /// Bytes of output so far, all told (some may have been dropped from the file).
    pub bytes: u64,
    /// Its last lines of output, for `/ps`.
    pub last_lines: Vec<String>,
}

/// The jobs as `/ps` lists them: one line each, then its last lines of output, indented. The
/// command and its output are made safe to print on a terminal.
pub fn job_lines(jobs: &[BackgroundJob]) -> Vec<String> {
    let safe = |t: &str| super::strip_terminal_controls(t);
    if jobs.is_empty() {
        return vec!["No background commands. (The model starts one with bash and background: true.)".into()];
    }
    let running = jobs.iter().filter(|j| j.state.is_running()).count();
    let mut lines = vec![format!("Background commands: {running} running of {} (/stop N ends one)", jobs.len())];
    for j in jobs {
        lines.push(format!(
            "  {}  {}  {}  $ {}",
            j.id,
            j.state.label(),
            j.ran_for(),
            safe(&super::clip(&j.command, 100))
        ));
        for line in &j.last_lines {
            lines.push(format!("       {}", safe(&super::clip(line, 110))));
        }
    }
    lines
}

impl BackgroundJob {
    /// `1m 05s`, `3h 02m`: how long, for a list.
    pub fn ran_for(&self) -> String {
        let s = self.seconds;
        match s {
            0..60 => format!("{s}s"),
            60..3600 => format!("{}m {:02}s", s / 60, s % 60),
            _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        }
    }
}
