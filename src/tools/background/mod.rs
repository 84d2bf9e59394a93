//! Background commands: what `bash` with `background: true` starts and returns from at once —
//! a dev server, a watcher. Each runs as a foreground command would (its own session and
//! process group, the same sandbox) with its output kept on disk in the data folder, bounded,
//! and a watchdog that ends its group if cairn dies (`guard`). `/ps` lists them, `/stop N`,
//! `bash_stop` and a rewind of the turn that started one end it, `bash_output` reads it; at
//! exit every one still running is ended unless `tools.bash_keep_background` keeps it.
//!
//! `Jobs` is an agent's list (ids from 1); every running job is also on one process-wide list,
//! so cairn's exit reaches it whatever agent started it.

mod guard;
mod job;
mod log;

pub use job::Job;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::sandbox::Confinement;
use crate::config::Redactor;
use crate::conversation::BackgroundJob;

/// Every running job of this process, for the exit.
static LIVE: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());

/// Between SIGTERM and SIGKILL at exit: short, since the user is waiting for cairn to end.
const EXIT_GRACE: Duration = Duration::from_millis(500);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Told how many jobs run whenever that may have changed.
pub type OnChange = Arc<dyn Fn(usize) + Send + Sync>;

/// An agent's background commands.
pub struct Jobs {
    list: Mutex<Vec<Arc<Job>>>,
    next: AtomicU32,
    /// Bytes of output each job keeps on disk.
    cap: u64,
    on_change: Option<OnChange>,
}

/// What a `bash` call needs to start a background command: the agent's jobs, where the output
/// goes (the session's folder in the data folder), and whose turn starts it.
#[derive(Clone)]
pub struct BackgroundPlace {
    pub jobs: Arc<Jobs>,
    pub dir: PathBuf,
    pub session: String,
    pub turn: Option<i64>,
    /// Secrets kept out of the output on disk.
    pub redactor: Redactor,
}

impl Jobs {
    pub fn new(cap: u64, on_change: Option<OnChange>) -> Arc<Jobs> {
        Arc::new(Jobs { list: Mutex::new(Vec::new()), next: AtomicU32::new(1), cap, on_change })
    }

    fn changed(&self) {
        if let Some(tell) = &self.on_change {
            tell(self.running());
        }
    }

    /// Start `command` in `cwd`, confined as a foreground command would be.
    pub fn start(
        self: &Arc<Self>,
        place: &BackgroundPlace,
        command: &str,
        cwd: &Path,
        confinement: Option<Confinement>,
        only_reads: bool,
    ) -> std::io::Result<Arc<Job>> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let log = log::OutputLog::create(&place.dir.join(format!("{}-{id}.log", std::process::id())), self.cap)?;
        let (child, reader) = super::bash::spawn(command, cwd, confinement, only_reads)?;
        let group = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .ok_or_else(|| std::io::Error::other("the shell ended before it could be tracked"))?;
        let guard = match guard::Guard::watch(group) {
            Ok(guard) => guard,
            Err(e) => {
                // Unwatched, it could outlive a crash: not started at all.
                // SAFETY: killpg only signals the group this call just started.
                unsafe { libc::killpg(group, libc::SIGKILL) };
                return Err(std::io::Error::other(format!("could not start its watchdog: {e}")));
            }
        };
        let job = Arc::new(Job::new(job::Parts {
            id,
            command: command.to_string(),
            group,
            session: place.session.clone(),
            turn: place.turn,
            log,
            guard,
        }));
        lock(&LIVE).push(job.clone());
        lock(&self.list).push(job.clone());
        let (pumped, jobs, redactor) = (job.clone(), self.clone(), place.redactor.clone());
        tokio::spawn(async move {
            job::pump(pumped.clone(), child, reader, redactor).await;
            lock(&LIVE).retain(|j| !Arc::ptr_eq(j, &pumped));
            jobs.changed();
        });
        self.changed();
        Ok(job)
    }

    pub fn get(&self, id: u32) -> Option<Arc<Job>> {
        lock(&self.list).iter().find(|j| j.id == id).cloned()
    }

    pub fn running(&self) -> usize {
        lock(&self.list).iter().filter(|j| j.state().is_running()).count()
    }

    /// Every job this agent started, oldest first.
    pub fn list(&self) -> Vec<BackgroundJob> {
        lock(&self.list).iter().map(|j| j.picture()).collect()
    }

    /// End job `id`; it as it ended, or why not.
    pub async fn stop(&self, id: u32) -> Result<BackgroundJob, String> {
        let Some(job) = self.get(id) else {
            return Err(format!("there is no background command {id}; /ps lists them"));
        };
        if !job.state().is_running() {
            return Err(format!("background command {id} already ended ({})", job.state().label()));
        }
        job.stop().await;
        Ok(job.picture())
    }

    /// End the jobs of `session` that a turn at or after prompt `user_seq` started (a rewind
    /// took those turns back); what was ended.
    pub async fn stop_started_since(&self, session: &str, user_seq: i64) -> Vec<BackgroundJob> {
        let started: Vec<Arc<Job>> = lock(&self.list)
            .iter()
            .filter(|j| j.session == session && j.turn.is_some_and(|t| t >= user_seq) && j.state().is_running())
            .cloned()
            .collect();
        let mut ended = Vec::new();
        for job in started {
            job.stop().await;
            ended.push(job.picture());
        }
        ended
    }
}

/// At exit: end every background command still running (or, with `keep`, leave them and stand
/// their watchdogs down), and say so, one line each. Blocks for at most about `EXIT_GRACE`.
pub fn settle_at_exit(keep: bool) -> Vec<String> {
    let live: Vec<Arc<Job>> = std::mem::take(&mut *lock(&LIVE));
    let running: Vec<Arc<Job>> = live.into_iter().filter(|j| j.state().is_running()).collect();
    if running.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![if keep {
        format!(
            "{} background command(s) left running (tools.bash_keep_background = true); end them with kill -- -<group>:",
            running.len()
        )
    } else {
        format!(
            "{} background command(s) were still running and were ended (set tools.bash_keep_background = true to keep them):",
            running.len()
        )
    }];
    for job in &running {
        if keep {
            job.keep();
        } else {
            job.stop_now(EXIT_GRACE);
        }
        lines.push(format!("  job {} (group {}): {}", job.id, job.group, crate::conversation::clip(&job.command, 120)));
    }
    lines
}

/// Remove background logs older than `days` (a running job's log is written to, so it is
/// younger).
pub fn clean_logs(dir: &Path, days: u64) -> usize {
    let cutoff = std::time::SystemTime::now() - Duration::from_secs(days * 86_400);
    let Ok(sessions) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for session in sessions.flatten() {
        let Ok(files) = std::fs::read_dir(session.path()) else { continue };
        for file in files.flatten() {
            let old = file.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < cutoff);
            if old && std::fs::remove_file(file.path()).is_ok() {
                removed += 1;
            }
        }
        // Only an empty folder goes.
        let _ = std::fs::remove_dir(session.path());
    }
    removed
}

#[cfg(test)]
#[path = "background_tests.rs"]
mod tests;
