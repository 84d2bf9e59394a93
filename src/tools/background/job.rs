//! One background command: its process group, its output log, its watchdog, its state; the
//! task that reads its output until the whole group has ended; and ending it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::sync::watch;

use super::guard::Guard;
use super::log::{OutputLog, Slice};
use crate::config::Redactor;
use crate::conversation::{BackgroundJob, JobState};
use crate::tools::leftover::group_alive;

/// Between SIGTERM and SIGKILL when a job is stopped: time for a server to shut down cleanly.
const TERM_GRACE: Duration = Duration::from_millis(2_000);
/// A partial line waits this long for its end before it is written as it is (a prompt
/// without a newline must still show up).
const PARTIAL_LINE_WAIT: Duration = Duration::from_millis(200);
/// A partial line is written anyway once this long (output that never breaks lines).
const LONGEST_PENDING: usize = 64 * 1024;
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// How long output is still read once the group has ended (as a foreground `bash` does).
const DRAIN_GRACE: Duration = Duration::from_millis(200);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub struct Job {
    pub(super) id: u32,
    pub(super) command: String,
    /// The process group: the shell's pid (it leads its own session).
    pub(super) group: i32,
    pub(super) session: String,
    /// The seq of the prompt whose turn started it: a rewind to before that turn ends it.
    pub(super) turn: Option<i64>,
    started: Instant,
    started_at: String,
    log: Mutex<OutputLog>,
    state: Mutex<JobState>,
    ended: watch::Sender<bool>,
    seconds: AtomicU64,
    guard: Mutex<Guard>,
    /// Ended on purpose: the state says `stopped`, whatever the exit status.
    stopping: AtomicBool,
    /// Where the model's last `bash_output` read up to: the next one goes on from there.
    read_to: AtomicU64,
}

/// What a new job is made of.
pub(super) struct Parts {
    pub id: u32,
    pub command: String,
    pub group: i32,
    pub session: String,
    pub turn: Option<i64>,
    pub log: OutputLog,
    pub guard: Guard,
}

impl Job {
    pub(super) fn new(p: Parts) -> Job {
        Job {
            id: p.id,
            command: p.command,
            group: p.group,
            session: p.session,
            turn: p.turn,
            started: Instant::now(),
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            log: Mutex::new(p.log),
            state: Mutex::new(JobState::Running),
            ended: watch::Sender::new(false),
            seconds: AtomicU64::new(0),
            guard: Mutex::new(p.guard),
            stopping: AtomicBool::new(false),
            read_to: AtomicU64::new(0),
        }
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn state(&self) -> JobState {
        *lock(&self.state)
    }

    /// The job as `/ps` and the JSON show it.
    pub fn picture(&self) -> BackgroundJob {
        let state = self.state();
        let seconds =
            if state.is_running() { self.started.elapsed().as_secs() } else { self.seconds.load(Ordering::SeqCst) };
        let mut log = lock(&self.log);
        BackgroundJob {
            id: self.id,
            command: self.command.clone(),
            state,
            group: self.group,
            started_at: self.started_at.clone(),
            seconds,
            session: self.session.clone(),
            log: log.path().display().to_string(),
            bytes: log.written(),
            last_lines: log.last_lines(3),
        }
    }

    /// At most `max` bytes of output from `offset`, or from where the last read ended.
    pub fn read(&self, offset: Option<u64>, max: usize) -> std::io::Result<Slice> {
        let from = offset.unwrap_or_else(|| self.read_to.load(Ordering::SeqCst));
        let slice = lock(&self.log).read(from, max)?;
        self.read_to.store(slice.to, Ordering::SeqCst);
        Ok(slice)
    }

    /// Wait up to `limit` for the job to end; whether it has.
    pub async fn wait_ended(&self, limit: Duration) -> bool {
        let mut ended = self.ended.subscribe();
        matches!(tokio::time::timeout(limit, ended.wait_for(|e| *e)).await, Ok(Ok(_)))
    }

    fn signal(&self, signal: libc::c_int) {
        if self.state().is_running() {
            // SAFETY: killpg only sends a signal to the group this job's shell leads.
            unsafe { libc::killpg(self.group, signal) };
        }
    }

    /// End the whole group: SIGTERM, then SIGKILL after a grace. Its state after.
    pub async fn stop(&self) -> JobState {
        if !self.state().is_running() {
            return self.state();
        }
        self.stopping.store(true, Ordering::SeqCst);
        self.signal(libc::SIGTERM);
        if !self.wait_ended(TERM_GRACE).await {
            self.signal(libc::SIGKILL);
            self.wait_ended(TERM_GRACE).await;
        }
        self.state()
    }

    /// [`Job::stop`] without a runtime, for cairn's exit: `grace` between the signals. Returns
    /// whether it was running.
    pub(super) fn stop_now(&self, grace: Duration) -> bool {
        if !self.state().is_running() {
            return false;
        }
        self.stopping.store(true, Ordering::SeqCst);
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while group_alive(self.group) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if group_alive(self.group) {
            // SAFETY: as in `signal`.
            unsafe { libc::killpg(self.group, libc::SIGKILL) };
        }
        lock(&self.guard).stand_down();
        true
    }

    /// Leave it running when cairn exits: the watchdog stands down.
    pub(super) fn keep(&self) {
        lock(&self.guard).stand_down();
    }

    /// Complete lines of `pending` to the log, redacted; the rest too when `all`.
    fn write_lines(&self, pending: &mut Vec<u8>, redactor: &Redactor, all: bool) {
        let end = match pending.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if all || pending.len() >= LONGEST_PENDING => pending.len(),
            None => return,
        };
        if end == 0 {
            return;
        }
        let text = String::from_utf8_lossy(&pending[..end]).into_owned();
        let text = redactor.redact(&text);
        if let Err(e) = lock(&self.log).append(text.as_bytes()) {
            tracing::warn!(job = self.id, error = %e, "could not write a background command's output");
        }
        pending.drain(..end);
    }

    fn finish(&self, status: Option<std::process::ExitStatus>) {
        use std::os::unix::process::ExitStatusExt;
        let state = if self.stopping.load(Ordering::SeqCst) {
            JobState::Stopped
        } else {
            match status.map(|s| (s.code(), s.signal())) {
                Some((Some(code), _)) => JobState::Exited { code },
                Some((None, Some(signal))) => JobState::Killed { signal },
                Some((None, None)) | None => JobState::Exited { code: -1 },
            }
        };
        self.seconds.store(self.started.elapsed().as_secs(), Ordering::SeqCst);
        *lock(&self.state) = state;
        lock(&self.guard).stand_down();
        self.ended.send_replace(true);
    }
}

/// Read the job's output into its log until its shell has ended and nothing of its group is
/// left (or nothing can write to the pipe any more), then record how it ended.
pub(super) async fn pump(job: Arc<Job>, mut child: Child, mut reader: pipe::Receiver, redactor: Redactor) {
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    let mut pending = Vec::new();
    let mut open = true;
    let mut status: Option<std::io::Result<std::process::ExitStatus>> = None;
    loop {
        // The shell is gone: the job lasts while its group does (`server &` in a script).
        if status.is_some() && (!open || !group_alive(job.group)) {
            break;
        }
        tokio::select! {
            read = reader.read(&mut chunk), if open => match read {
                Ok(0) | Err(_) => open = false,
                Ok(n) => {
                    pending.extend_from_slice(&chunk[..n]);
                    job.write_lines(&mut pending, &redactor, false);
                }
            },
            ended = child.wait(), if status.is_none() => status = Some(ended),
            () = tokio::time::sleep(PARTIAL_LINE_WAIT) => job.write_lines(&mut pending, &redactor, true),
        }
    }
    // What the group wrote before it ended is still in the pipe; anything later would come from
    // a process that left the group, which may never close it.
    let drain_until = tokio::time::Instant::now() + DRAIN_GRACE;
    while open {
        match tokio::time::timeout_at(drain_until, reader.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => pending.extend_from_slice(&chunk[..n]),
            Ok(Ok(_)) | Ok(Err(_)) | Err(_) => open = false,
        }
    }
    job.write_lines(&mut pending, &redactor, true);
    job.finish(status.and_then(Result::ok));
}
