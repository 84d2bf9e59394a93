//! What a hook said: by exit code (0 goes on, 2 blocks with stderr as the reason, anything
//! else is a failure that is shown and otherwise ignored) or, on exit 0, by a JSON object on
//! stdout. The JSON takes cairn's plain keys and Claude Code's, so hooks written for it work:
//! `decision` (`allow`/`approve`, `deny`/`block`, `ask`), `reason`, `updated_input`,
//! `additional_context`, `system_message`, `continue: false` with `stop_reason`, and the same
//! inside `hookSpecificOutput` (`permissionDecision`, `permissionDecisionReason`,
//! `updatedInput`, `additionalContext`).

use serde_json::Value;

use super::run::HookRun;

/// A hook's verdict on what the event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through (for a tool call: without asking the user).
    Allow,
    /// Stop it, with the reason.
    Deny,
    /// Ask the user even where the rules would not.
    Ask,
}

/// What one hook run means.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookAnswer {
    pub verdict: Option<Verdict>,
    pub reason: Option<String>,
    /// PreToolUse: the arguments to use instead.
    pub updated_input: Option<Value>,
    /// Text for the model (UserPromptSubmit, SessionStart, PostToolUse).
    pub additional_context: Option<String>,
    /// Text for the user's eyes only.
    pub message: Option<String>,
    /// The hook failed (could not run, timed out, exited with an error): shown, then ignored.
    pub failure: Option<String>,
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn verdict(v: Option<&Value>) -> Option<Verdict> {
    match v.and_then(Value::as_str)?.trim().to_ascii_lowercase().as_str() {
        "allow" | "approve" => Some(Verdict::Allow),
        "deny" | "block" => Some(Verdict::Deny),
        "ask" => Some(Verdict::Ask),
        _ => None,
    }
}

/// Read `run` as an answer.
pub fn interpret(run: &HookRun, timeout_ms: u64) -> HookAnswer {
    if run.interrupted {
        return HookAnswer { failure: Some("interrupted".into()), ..Default::default() };
    }
    if run.timed_out {
        return HookAnswer {
            failure: Some(format!("killed after {timeout_ms} ms (its timeout_ms); going on without it")),
            ..Default::default()
        };
    }
    match run.exit {
        Some(0) => from_stdout(&run.stdout),
        Some(2) => HookAnswer {
            verdict: Some(Verdict::Deny),
            reason: Some(
                Some(run.stderr.trim())
                    .filter(|s| !s.is_empty())
                    .unwrap_or("the hook refused (exit 2) without saying why")
                    .to_string(),
            ),
            ..Default::default()
        },
        Some(code) => HookAnswer {
            failure: Some(format!(
                "exited with {code}{}",
                Some(run.stderr.trim()).filter(|s| !s.is_empty()).map(|s| format!(": {s}")).unwrap_or_default()
            )),
            ..Default::default()
        },
        None => HookAnswer { failure: Some("was killed by a signal".into()), ..Default::default() },
    }
}

fn from_stdout(stdout: &str) -> HookAnswer {
    let trimmed = stdout.trim();
    let Some(json) = trimmed.starts_with('{').then(|| serde_json::from_str::<Value>(trimmed).ok()).flatten() else {
        // Plain output: shown to the user; for the context events it is context too.
        return HookAnswer {
            additional_context: (!trimmed.is_empty()).then(|| trimmed.to_string()),
            ..Default::default()
        };
    };
    let specific = json.get("hookSpecificOutput").unwrap_or(&Value::Null);
    let mut answer = HookAnswer {
        verdict: verdict(specific.get("permissionDecision")).or_else(|| verdict(json.get("decision"))),
        reason: text(specific.get("permissionDecisionReason"))
            .or_else(|| text(json.get("reason")))
            .or_else(|| text(json.get("stopReason")))
            .or_else(|| text(json.get("stop_reason"))),
        updated_input: specific
            .get("updatedInput")
            .or_else(|| json.get("updated_input"))
            .or_else(|| json.get("updatedInput"))
            .filter(|v| v.is_object())
            .cloned(),
        additional_context: text(specific.get("additionalContext"))
            .or_else(|| text(json.get("additional_context")))
            .or_else(|| text(json.get("additionalContext"))),
        message: text(json.get("systemMessage")).or_else(|| text(json.get("system_message"))),
        failure: None,
    };
    if json.get("continue").and_then(Value::as_bool) == Some(false) && answer.verdict.is_none() {
        answer.verdict = Some(Verdict::Deny);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit: Option<i32>, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            exit,
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
            interrupted: false,
            duration: Default::default(),
        }
    }

    #[test]
    fn exit_codes_mean_go_block_or_failure() {
        assert_eq!(interpret(&run(Some(0), "", ""), 1), HookAnswer::default());
        let blocked = interpret(&run(Some(2), "", "no rm here\n"), 1);
        assert_eq!((blocked.verdict, blocked.reason.as_deref()), (Some(Verdict::Deny), Some("no rm here")));
        assert!(interpret(&run(Some(1), "", "oops"), 1).failure.unwrap().contains("exited with 1: oops"));
        let timed = interpret(&HookRun { timed_out: true, ..run(None, "", "") }, 500);
        assert!(timed.failure.unwrap().contains("500 ms"));
    }

    #[test]
    fn json_answers_in_both_dialects() {
        let cc = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not on main"}}"#;
        let a = interpret(&run(Some(0), cc, ""), 1);
        assert_eq!((a.verdict, a.reason.as_deref()), (Some(Verdict::Deny), Some("not on main")));
        let plain = r#"{"decision": "allow", "updated_input": {"command": "ls -la"}, "system_message": "rewrote ls"}"#;
        let a = interpret(&run(Some(0), plain, ""), 1);
        assert_eq!(a.verdict, Some(Verdict::Allow));
        assert_eq!(a.updated_input.unwrap()["command"], "ls -la");
        assert_eq!(a.message.as_deref(), Some("rewrote ls"));
        let context = interpret(&run(Some(0), "Today's on-call: Ana\n", ""), 1);
        assert_eq!(context.additional_context.as_deref(), Some("Today's on-call: Ana"));
        let stop = interpret(&run(Some(0), r#"{"continue": false, "stopReason": "tests fail"}"#, ""), 1);
        assert_eq!((stop.verdict, stop.reason.as_deref()), (Some(Verdict::Deny), Some("tests fail")));
    }
}
