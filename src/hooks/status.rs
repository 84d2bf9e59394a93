//! The user's status command (`[tui] status_command`): run like a hook — `sh -c` in the project
//! root, its own process group, killed at its timeout — with the session's figures as JSON on
//! stdin, and its first line of output taken. Runs only when the figures changed, never more
//! often than the interval, one run at a time; the interface keeps drawing meanwhile.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// The longest line shown: a status line is one row.
const MAX_LINE_CHARS: usize = 400;

/// What the command answered: its first line, or why there is none.
pub type StatusAnswer = Result<String, String>;

/// The command and how it is run.
#[derive(Clone, Debug)]
pub struct StatusCommand {
    pub command: String,
    pub root: PathBuf,
    pub timeout: Duration,
    pub interval: Duration,
    /// Fields the interface does not know (the working folder, cairn's version), merged into
    /// every input.
    pub fixed: serde_json::Map<String, serde_json::Value>,
}

/// The git branch checked out in `root`, read from `HEAD` (no process): `None` outside a
/// repository or on a detached head.
pub fn branch(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        // A worktree or submodule: `gitdir: PATH`.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let dir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
        if dir.is_absolute() { dir } else { root.join(dir) }
    } else {
        dot_git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim().strip_prefix("ref: refs/heads/").map(str::to_string)
}

/// The input as the command gets it: the interface's figures, the fixed fields and the branch.
pub fn input(
    offer: &serde_json::Value,
    fixed: &serde_json::Map<String, serde_json::Value>,
    root: &Path,
) -> serde_json::Value {
    let mut input = offer.as_object().cloned().unwrap_or_default();
    for (k, v) in fixed {
        input.insert(k.clone(), v.clone());
    }
    input.insert("git".into(), serde_json::json!({"branch": branch(root)}));
    serde_json::Value::Object(input)
}

/// One run: the first line, made safe to draw, or why there is none.
pub async fn run_once(command: &StatusCommand, input: &serde_json::Value) -> StatusAnswer {
    let ms = command.timeout.as_millis();
    let run =
        super::run::run(&command.command, &command.root, input, command.timeout, &CancellationToken::new()).await?;
    if run.timed_out {
        return Err(format!("it did not answer within {ms} ms (tui.status_command_timeout_ms)"));
    }
    let first_error = run.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    match run.exit {
        Some(0) => {
            let line = run.stdout.lines().next().unwrap_or("");
            let clean = crate::conversation::strip_terminal_controls(line);
            Ok(crate::conversation::clip(clean.trim_end(), MAX_LINE_CHARS))
        }
        Some(code) if first_error.is_empty() => Err(format!("it exited with {code}")),
        Some(code) => Err(format!("it exited with {code}: {}", crate::conversation::clip(&first_error, 200))),
        None => Err("it was killed by a signal".into()),
    }
}

/// Serve the interface: each time `offers` holds new figures (and the interval has passed since
/// the last run), run the command and send what it answered, then call `wake`. Ends when the
/// interface drops its end.
pub async fn serve(
    command: StatusCommand,
    mut offers: watch::Receiver<Option<serde_json::Value>>,
    answers: mpsc::UnboundedSender<StatusAnswer>,
    wake: impl Fn() + Send + 'static,
) {
    let mut last_run: Option<Instant> = None;
    while offers.changed().await.is_ok() {
        if let Some(at) = last_run {
            let next = at + command.interval;
            if next > Instant::now() {
                tokio::time::sleep_until(next.into()).await;
            }
        }
        // The newest figures, whatever came meanwhile.
        let Some(offer) = offers.borrow_and_update().clone() else { continue };
        last_run = Some(Instant::now());
        let answer = run_once(&command, &input(&offer, &command.fixed, &command.root)).await;
        if answers.send(answer).is_err() {
            break;
        }
        wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(dir: &Path, text: &str, timeout_ms: u64) -> StatusCommand {
        StatusCommand {
            command: text.into(),
            root: dir.to_path_buf(),
            timeout: Duration::from_millis(timeout_ms),
            interval: Duration::from_millis(200),
            fixed: serde_json::Map::new(),
        }
    }

    #[tokio::test]
    async fn the_first_line_is_taken_from_the_json_and_a_failure_says_why() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        let offer = serde_json::json!({"model": {"id": "m1"}});
        let input = input(&offer, &serde_json::Map::new(), dir.path());
        assert_eq!(input["git"]["branch"], "feature/x");
        let echo =
            command(dir.path(), r#"read j; echo "$j" | sed 's/.*"id":"\([^"]*\)".*/model \1/'; echo second"#, 2_000);
        assert_eq!(run_once(&echo, &input).await, Ok("model m1".to_string()));
        let controls = command(dir.path(), r"printf '\033[31mred\033[0m \033]0;title\007ok\n'", 2_000);
        assert_eq!(run_once(&controls, &input).await, Ok("red ok".to_string()), "no escape reaches the screen");
        let failing = command(dir.path(), "echo oops >&2; exit 3", 2_000);
        assert_eq!(run_once(&failing, &input).await, Err("it exited with 3: oops".to_string()));
        let slow = command(dir.path(), "sleep 5", 100);
        let started = Instant::now();
        assert!(run_once(&slow, &input).await.unwrap_err().contains("within 100 ms"));
        assert!(started.elapsed() < Duration::from_secs(2), "the timeout holds");
    }

    #[tokio::test]
    async fn a_burst_of_changes_runs_the_command_once_per_interval_with_the_newest_figures() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("runs");
        let text = format!("cat >> {}; echo >> {}; echo ran", log.display(), log.display());
        let (offers_tx, offers) = watch::channel(None);
        let (answers_tx, mut answers) = mpsc::unbounded_channel();
        tokio::spawn(serve(command(dir.path(), &text, 2_000), offers, answers_tx, || {}));
        for n in 0..20 {
            offers_tx.send_replace(Some(serde_json::json!({"n": n})));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(answers.recv().await, Some(Ok("ran".to_string())));
        tokio::time::sleep(Duration::from_millis(600)).await;
        while answers.try_recv().is_ok() {}
        let runs = std::fs::read_to_string(&log).unwrap();
        let count = runs.lines().filter(|l| !l.is_empty()).count();
        assert!((1..=3).contains(&count), "20 changes in 200 ms ran it {count} times:\n{runs}");
        assert!(runs.contains(r#""n":19"#), "the newest figures were run: {runs}");
    }
}
