//! How a command's run reads for the model, wherever it ran (cairn's own runner or an editor's
//! terminal): what it printed, why it was stopped if it was, and how it ended — `[exit code N]`
//! or the signal that killed it.

use std::time::Duration;

use super::ToolOutput;

/// Why a command was stopped before it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    TimedOut,
    Interrupted,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
    /// The runner could not tell (an editor that did not say).
    Unknown,
}

pub struct Run {
    pub output: String,
    pub ended: Ended,
    pub stop: Option<Stop>,
}

impl Run {
    /// The tool's output; `limit` is the time limit it had.
    pub fn into_output(self, limit: Duration) -> ToolOutput {
        let mut content = self.output;
        if content.is_empty() {
            content.push_str("(no output)");
        }
        if !content.ends_with('\n') {
            content.push('\n');
        }
        match self.stop {
            Some(Stop::TimedOut) => {
                content.push_str(&format!("[timed out after {}; the process group was killed]\n", seconds(limit)));
            }
            Some(Stop::Interrupted) => content.push_str("[interrupted by the user]\n"),
            None => {}
        }
        let code = match self.ended {
            Ended::Code(code) => {
                content.push_str(&format!("[exit code {code}]"));
                code
            }
            Ended::Signal(signal) => {
                content.push_str(&format!("[killed by signal {signal}]"));
                128 + signal
            }
            Ended::Unknown => {
                content.push_str("[exit status unknown]");
                -1
            }
        };
        ToolOutput {
            content,
            is_error: code != 0,
            exit_code: Some(code),
            diff: None,
            sandbox_denial: None,
            image: None,
        }
    }
}

/// A run that ended by itself (not timed out or interrupted) is one the sandbox may have failed.
pub fn was_complete(output: &ToolOutput) -> bool {
    !output.content.contains("[timed out after ") && !output.content.contains("[interrupted by the user]")
}

fn seconds(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms.is_multiple_of(1000) { format!("{}s", ms / 1000) } else { format!("{:.1}s", limit.as_secs_f64()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_shown_in_seconds() {
        assert_eq!(seconds(Duration::from_millis(120_000)), "120s");
        assert_eq!(seconds(Duration::from_millis(1_500)), "1.5s");
    }

    #[test]
    fn a_run_ends_in_its_exit_code_or_the_signal_that_killed_it() {
        let run = |ended, stop| Run { output: "out".into(), ended, stop }.into_output(Duration::from_millis(500));
        let done = run(Ended::Code(0), None);
        assert_eq!((done.content.as_str(), done.is_error, done.exit_code), ("out\n[exit code 0]", false, Some(0)));
        let killed = run(Ended::Signal(9), Some(Stop::TimedOut));
        assert_eq!(killed.content, "out\n[timed out after 0.5s; the process group was killed]\n[killed by signal 9]");
        assert_eq!(killed.exit_code, Some(137));
        assert!(!was_complete(&killed));
        assert_eq!(run(Ended::Unknown, Some(Stop::Interrupted)).exit_code, Some(-1));
    }
}
