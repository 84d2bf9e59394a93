//! Running the real `cairn` binary against the mock: a private CAIRN_HOME with fast retries, a
//! project folder that is a git repository, and a clean environment (no real keys leak in).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::mock_llm::MockLlm;

pub const KEY: &str = "sk-ant-api03-SECRETSECRETSECRET-0123456789";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
    /// The Responses API, with a reasoning model.
    OpenAiResponses,
    /// An OpenAI-compatible endpoint serving an Anthropic model (as OpenRouter does).
    OpenRouter,
}

pub struct Sandbox {
    pub home: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

impl Sandbox {
    /// A CAIRN_HOME whose config retries in milliseconds, and an empty git project.
    pub fn new() -> Sandbox {
        Sandbox::with_config("")
    }

    pub fn with_config(extra: &str) -> Sandbox {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".git")).unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            format!("[retry]\nmax_attempts = 5\nbase_delay_ms = 2\nmax_delay_ms = 20\nstream_idle_timeout_ms = 10000\n{extra}"),
        )
        .unwrap();
        Sandbox { home, project }
    }

    pub fn root(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.project.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.path().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.project.path().join(rel).exists()
    }

    /// `cairn ARGS` in the project, pointed at `mock` over `api`, with nothing else in its
    /// environment that could choose a provider.
    pub fn command(&self, api: Api, mock: &MockLlm, args: &[&str]) -> tokio::process::Command {
        let mut cmd = self.bare_command(args);
        match api {
            Api::Anthropic => {
                cmd.env("ANTHROPIC_API_KEY", KEY).env("ANTHROPIC_BASE_URL", mock.anthropic_base_url());
            }
            Api::OpenAi => {
                cmd.env("OPENAI_API_KEY", KEY)
                    .env("OPENAI_BASE_URL", mock.openai_base_url())
                    .args(["--model", "gpt-4o"]);
            }
            Api::OpenAiResponses => {
                cmd.env("OPENAI_API_KEY", KEY).env("OPENAI_BASE_URL", mock.openai_base_url()).args([
                    "--provider",
                    "openai-responses",
                    "--model",
                    "gpt-5.4",
                ]);
            }
            Api::OpenRouter => {
                cmd.env("OPENAI_API_KEY", KEY)
                    .env("OPENAI_BASE_URL", mock.openai_base_url())
                    .args(["--model", "anthropic/claude-sonnet-4.5"]);
            }
        }
        cmd
    }

    /// `cairn ARGS` with no provider configured at all.
    pub fn bare_command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(args)
            .current_dir(self.project.path())
            .env("CAIRN_HOME", self.home.path())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CAIRN_LOG")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Trust the project as its user would (`--trust`, on a run that asks the model nothing),
    /// so what its files configure is in force for the next runs.
    pub async fn trust(&self) {
        let mock = MockLlm::start(super::mock_llm::Script::new()).await;
        let out = self.run(Api::Anthropic, &mock, &["-p", "/help", "--trust"]).await;
        assert!(out.status.success(), "trusting the project failed: {}", text(&out.stderr));
    }

    pub async fn run(&self, api: Api, mock: &MockLlm, args: &[&str]) -> Output {
        let out = self.command(api, mock, args).output().await.unwrap();
        if std::env::var_os("CAIRN_TEST_VERBOSE").is_some() {
            eprintln!("stdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr));
        }
        out
    }

    pub fn database(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.home.path().join("cairn.db")).unwrap()
    }

    /// Every file under CAIRN_HOME, recursively.
    pub fn home_files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() { walk(&path, out) } else { out.push(path) }
            }
        }
        let mut out = Vec::new();
        walk(self.home.path(), &mut out);
        out
    }
}

/// A folder outside every writable root of cairn's sandbox (the temp dirs among them), for
/// canaries only an unconfined command could change: the build's temp folder, else the home
/// folder, else (as root) `/var/lib`. `None` when all of them lie in a writable root (a
/// checkout and a home under `/tmp`): tests that need one say so and skip.
pub fn outside_writable_roots() -> Option<PathBuf> {
    outside_writable_roots_for(false)
}

/// The same, and with `others`, one every user can reach (each folder above it searchable by
/// all: a home of mode 700 is not), for a lab a test runs as another user.
pub fn outside_writable_roots_for(others: bool) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let reachable = |d: &std::path::Path| {
        d.ancestors().all(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
    };
    let writable: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("TMPDIR").map(PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let found = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
        Some("/var/lib".into()),
    ]
    .into_iter()
    .flatten()
    .filter_map(|d| d.canonicalize().ok())
    .find(|d| {
        let probe = d.join(format!(".cairn-probe-{}", std::process::id()));
        let usable = !writable.iter().any(|w| d.starts_with(w))
            && (!others || reachable(d))
            && std::fs::write(&probe, "").is_ok();
        let _ = std::fs::remove_file(&probe);
        usable
    });
    if found.is_none() {
        eprintln!(
            "skipped: no folder outside the sandbox's writable roots (checkout, target and home all under a temp dir)"
        );
    }
    found
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The one JSON object of `--output-format json`.
pub fn json_result(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{stdout}\nstderr:\n{}", text(&out.stderr)))
}

/// Every line of `--output-format stream-json`.
pub fn json_lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// Tool results a request carries, whatever the wire: (call id, content, is_error).
pub fn tool_results(req: &super::mock_llm::RecordedRequest) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    // Text of a content that is a string or a list of text parts.
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text" || p["type"] == "input_text")
            .filter_map(|p| p["text"].as_str())
            .collect(),
        _ => String::new(),
    };
    for m in req.messages() {
        if m["role"] == "tool" {
            out.push((m["tool_call_id"].as_str().unwrap_or_default().to_string(), text(&m["content"]), false));
        }
        if m["type"] == "function_call_output" {
            out.push((m["call_id"].as_str().unwrap_or_default().to_string(), text(&m["output"]), false));
        }
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                out.push((
                    b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    text(&b["content"]),
                    b["is_error"].as_bool().unwrap_or(false),
                ));
            }
        }
    }
    out
}

/// The content of the last tool result in the request.
pub fn last_result(req: &super::mock_llm::RecordedRequest) -> String {
    tool_results(req).pop().map(|r| r.1).unwrap_or_default()
}

/// Names of the tools a request offers, whatever the wire.
pub fn tool_names(req: &super::mock_llm::RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["name"].as_str().or(t["function"]["name"].as_str()).unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `text` is a request's tail: what cairn sends after the last cache breakpoint (the
/// task list, if any, then the `[cairn: … mode …]` line), not anything the user wrote.
pub fn is_tail(text: &str) -> bool {
    text.lines().last().is_some_and(|l| l.starts_with("[cairn: ") && l.ends_with(']'))
}

/// The texts of the request's user messages (tool results and the request's tail excluded),
/// whatever the wire.
pub fn user_texts(req: &super::mock_llm::RecordedRequest) -> Vec<String> {
    let mut out = Vec::new();
    for m in req.messages().iter().filter(|m| m["role"] == "user") {
        match &m["content"] {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text" || b["type"] == "input_text")
                    .filter_map(|b| b["text"].as_str())
                    .map(String::from),
            ),
            _ => {}
        }
    }
    out.retain(|t| !is_tail(t));
    out
}
