//! Starting llama-server: its command line, a free loopback port, and its log — kept in a file,
//! its last lines remembered for errors, and its loading dots read as progress.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::LocalError;
use crate::config::{LocalConfig, expand_home};

/// Log lines kept for an error message.
const TAIL_LINES: usize = 12;

/// Everything needed to start the server, again if it dies.
#[derive(Clone, Debug)]
pub(super) struct Launch {
    pub server: PathBuf,
    pub model: PathBuf,
    pub port: u16,
    /// The name the server lists the model by: the file's stem.
    pub alias: String,
    pub args: Vec<String>,
    pub log: PathBuf,
}

impl Launch {
    pub fn new(config: &LocalConfig, model: &Path, port: u16, log: PathBuf) -> Result<Launch, LocalError> {
        let server = find_server(&config.server)?;
        let alias = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "local".into());
        let mut args: Vec<String> = vec!["--model".into(), model.display().to_string()];
        args.extend(["--alias".into(), alias.clone()]);
        // Slots of their own (not one window shared by all), each of `ctx`.
        args.extend(["--parallel".into(), config.slots.to_string()]);
        if let Some(ctx) = config.ctx {
            args.extend(["--ctx-size".into(), (ctx * u64::from(config.slots)).to_string()]);
        }
        if let Some(layers) = config.gpu_layers {
            args.extend(["--n-gpu-layers".into(), layers.to_string()]);
        }
        if let Some(threads) = config.threads {
            args.extend(["--threads".into(), threads.to_string()]);
        }
        args.extend(config.args.iter().cloned());
        Ok(Launch { server, model: model.to_path_buf(), port, alias, args, log })
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// What identifies a server started this way, for finding it again (`keep`).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.server.hash(&mut h);
        self.model.hash(&mut h);
        // The port is chosen afresh each time: it is not part of what was asked.
        self.args.hash(&mut h);
        h.finish()
    }

    /// Start the server in its own process group, its output going to the log.
    pub fn spawn(&self) -> Result<(tokio::process::Child, ServerLog), LocalError> {
        let failed = |e: std::io::Error| LocalError::SpawnFailed {
            server: self.server.display().to_string(),
            error: e.to_string(),
        };
        if let Some(dir) = self.log.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).map_err(failed)?;
        let mut command = tokio::process::Command::new(&self.server);
        command.args(["--host", "127.0.0.1", "--port", &self.port.to_string()]);
        command.args(&self.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // Its own process group: a Ctrl+C meant for cairn does not reach it, and stopping it
        // stops whatever it started.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(failed)?;
        let log = ServerLog::new(file);
        if let Some(out) = child.stdout.take() {
            log.read_from(out);
        }
        if let Some(err) = child.stderr.take() {
            log.read_from(err);
        }
        Ok((child, log))
    }
}

/// `name` on PATH, or a path (with `~`).
fn find_server(name: &str) -> Result<PathBuf, LocalError> {
    let missing = || LocalError::ServerMissing { server: name.to_string() };
    if name.contains('/') {
        let path = expand_home(name);
        return if path.is_file() { Ok(path) } else { Err(missing()) };
    }
    let path = std::env::var_os("PATH").ok_or_else(missing)?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p)).ok_or_else(missing)
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// How much of its model a loading server has taken in: the file-backed memory it has mapped
/// and touched (llama.cpp maps the model), or the bytes it has read (`--no-mmap`). Linux's
/// `/proc`; `None` elsewhere.
pub(super) fn bytes_loaded(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mapped = status
        .lines()
        .find_map(|l| l.strip_prefix("RssFile:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let read =
        io.lines().find_map(|l| l.strip_prefix("rchar:")).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    Some(mapped.max(read))
}

/// A port nothing listens on now, on loopback.
pub(super) fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The server's output: appended to the log file as it comes, its last lines remembered, its
/// loading progress published.
#[derive(Clone)]
pub(super) struct ServerLog {
    parser: Arc<Mutex<LogParser>>,
    file: Arc<Mutex<std::fs::File>>,
    progress: watch::Sender<u8>,
}

impl ServerLog {
    fn new(file: std::fs::File) -> ServerLog {
        ServerLog { parser: Arc::default(), file: Arc::new(Mutex::new(file)), progress: watch::channel(0).0 }
    }

    fn read_from(&self, mut stream: impl tokio::io::AsyncRead + Unpin + Send + 'static) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8 * 1024];
            while let Ok(n) = stream.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                log.take(&buf[..n]);
            }
        });
    }

    fn take(&self, bytes: &[u8]) {
        use std::io::Write;
        // A log that cannot be written loses lines, not the server.
        let _ = self.file.lock().unwrap_or_else(|p| p.into_inner()).write_all(bytes);
        let percent = self.parser.lock().unwrap_or_else(|p| p.into_inner()).feed(bytes);
        if let Some(percent) = percent {
            self.progress.send_replace(percent);
        }
    }

    /// Loading progress, 0–100, as the server's log shows it.
    pub fn progress(&self) -> watch::Receiver<u8> {
        self.progress.subscribe()
    }

    /// The last lines, for an error message.
    pub fn tail(&self) -> String {
        let parser = self.parser.lock().unwrap_or_else(|p| p.into_inner());
        let lines: Vec<&str> = parser.tail.iter().map(String::as_str).collect();
        lines.join("\n  ")
    }

    /// The last line that says something went wrong, else the last line.
    pub fn last_problem(&self) -> String {
        let parser = self.parser.lock().unwrap_or_else(|p| p.into_inner());
        let wrong = |l: &&String| ["error", "failed", "abort", "what()"].iter().any(|w| l.to_lowercase().contains(w));
        parser.tail.iter().rev().find(wrong).or(parser.tail.back()).cloned().unwrap_or_else(|| "(no output)".into())
    }
}

/// Reads llama-server's output: llama.cpp prints one dot per percent of the model loaded, on a
/// line of its own.
#[derive(Debug, Default)]
pub(super) struct LogParser {
    line: String,
    percent: u8,
    tail: VecDeque<String>,
}

impl LogParser {
    /// Takes some output; returns the loading progress when it moved.
    pub fn feed(&mut self, bytes: &[u8]) -> Option<u8> {
        let before = self.percent;
        for c in String::from_utf8_lossy(bytes).chars() {
            if c == '\n' {
                self.end_line();
            } else {
                self.line.push(c);
                if c == '.' && is_dots(&self.line) {
                    self.percent = self.line.len().min(100) as u8;
                }
            }
        }
        (self.percent != before).then_some(self.percent)
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let line = line.trim_end();
        if !line.is_empty() && !is_dots(line) {
            if self.tail.len() == TAIL_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(line.to_string());
        }
    }
}

fn is_dots(line: &str) -> bool {
    !line.is_empty() && line.bytes().all(|b| b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loading_dots_are_percent_and_other_lines_are_kept_for_errors() {
        let mut p = LogParser::default();
        assert_eq!(
            p.feed(b"load_tensors: CPU model buffer size = 43.03 MiB\n"),
            None,
            "a dot in a line is not progress"
        );
        assert_eq!(p.feed(b".........."), Some(10));
        assert_eq!(p.feed(b"...."), Some(14));
        assert_eq!(p.feed(&[b'.'; 90]), Some(100));
        assert_eq!(p.feed(b"\nllama_context: n_ctx = 8192\n"), None);
        assert_eq!(
            p.tail.iter().collect::<Vec<_>>(),
            ["load_tensors: CPU model buffer size = 43.03 MiB", "llama_context: n_ctx = 8192"]
        );
    }

    #[test]
    fn the_command_line_carries_the_model_the_port_and_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("llama-server");
        std::fs::write(&server, "#!/bin/sh\n").unwrap();
        let config = LocalConfig {
            server: server.display().to_string(),
            ctx: Some(8192),
            gpu_layers: Some(99),
            args: vec!["--flash-attn".into(), "on".into()],
            ..Default::default()
        };
        let launch = Launch::new(&config, Path::new("/m/qwen-7b.gguf"), 4321, dir.path().join("log")).unwrap();
        assert_eq!(launch.alias, "qwen-7b");
        assert_eq!(
            launch.args.join(" "),
            "--model /m/qwen-7b.gguf --alias qwen-7b --parallel 2 --ctx-size 16384 --n-gpu-layers 99 --flash-attn on"
        );
        assert_eq!(launch.base_url(), "http://127.0.0.1:4321/v1");
        let moved = Launch::new(&config, Path::new("/m/qwen-7b.gguf"), 5555, dir.path().join("log")).unwrap();
        assert_eq!(launch.fingerprint(), moved.fingerprint(), "the port is not what was asked");
        let missing = LocalConfig { server: "no-such-llama-server-here".into(), ..Default::default() };
        let e = Launch::new(&missing, Path::new("/m/q.gguf"), 1, dir.path().join("log")).unwrap_err().to_string();
        assert!(e.contains("not found on PATH") && e.contains("[local]"), "{e}");
    }
}
