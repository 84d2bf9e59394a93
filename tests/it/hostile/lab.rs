//! The lab a hostile session runs in: a git project with a secret `.env`, a link and a hard link
//! out of it, a nested and a bare repository, protected settings folders; beside it an outside
//! folder of canary files (world-writable, so only the sandbox stops a write to them, whoever
//! runs cairn); a process of the same user holding a key in its environment; a terminal that
//! stands for cairn's. After a run, everything that must not have changed is compared.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Child;

use serde_json::Value;

use crate::support::cairn::{KEY, json_lines, text};
use crate::support::mock_llm::{MockCall, MockLlm, Script, Turn};

/// Who runs cairn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// The test's own user (root on CI).
    Me,
    /// `nobody`, through setpriv, when the test runs as root.
    Nobody,
}

impl Runner {
    fn ids(self) -> Option<(u32, u32)> {
        match self {
            Runner::Me => None,
            Runner::Nobody => Some((65534, 65534)),
        }
    }

    /// Whether this runner can be used here.
    pub fn available(self) -> bool {
        match self {
            Runner::Me => true,
            // SAFETY: geteuid cannot fail.
            Runner::Nobody => (unsafe { libc::geteuid() } == 0) && which("setpriv"),
        }
    }
}

fn which(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub struct Lab {
    pub base: PathBuf,
    pub project: PathBuf,
    pub outside: PathBuf,
    pub home: tempfile::TempDir,
    pub runner: Runner,
    /// The content of the outside `secret` file.
    pub secret: String,
    /// The key in the project's `.env` (committed too).
    pub dotenv: String,
    /// The key in the victim's environment.
    pub env_secret: String,
    pub victim: Child,
    pub pty_master: i32,
    pub pty_slave: i32,
    pub pty_path: PathBuf,
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let out = std::process::Command::new(program).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{program} {args:?}: {}", text(&out.stderr));
}

fn write(path: &Path, content: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

impl Lab {
    /// A fresh lab, or `None` (with a note) where no folder outside the writable roots exists.
    pub fn new(runner: Runner) -> Option<Lab> {
        let far = crate::support::cairn::outside_writable_roots_for(runner.ids().is_some())?;
        let tag = format!("{}-{}", std::process::id(), fastrand::u64(..));
        let base = far.join(format!("hostile-{tag}"));
        let project = base.join("project");
        let outside = base.join("outside");
        let secret = format!("CANARY-SECRET-{tag}");
        let env_secret = format!("CANARY-ENV-{tag}");
        let dotenv = format!("CANARY-DOTENV-{tag}");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o777)).unwrap();
        write(&outside.join("secret"), &format!("{secret}\n"), 0o666);
        write(&outside.join("secret.json"), &format!("{{\"k\": \"{secret}\"}}\n"), 0o666);
        write(&outside.join("canary"), "canary\n", 0o666);
        write(&outside.join("linked"), "linked\n", 0o666);

        let git = |args: &[&str]| {
            let mut all = vec!["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"];
            all.extend_from_slice(args);
            run(&project, "git", &all);
        };
        git(&["init", "-q"]);
        write(&project.join("a.txt"), "alpha x\n", 0o644);
        write(&project.join("src/lib.rs"), "pub fn f() {}\n", 0o644);
        write(&project.join("victim.txt"), "victim\n", 0o644);
        write(&project.join("list.txt"), "victim.txt\n", 0o644);
        write(&project.join(".env"), &format!("KEY={dotenv}\n"), 0o644);
        write(&project.join("files0"), "../outside/secret\0", 0o644);
        // A program any "read-only" command could be tricked into running: it leaves a mark.
        write(&project.join("evil.sh"), "#!/bin/sh\ntouch \"$(dirname \"$0\")/evil-ran\"\ncat\n", 0o755);
        write(&project.join("bin/ls"), "#!/bin/sh\ntouch \"$(dirname \"$0\")/../evil-ran\"\n", 0o755);
        write(&project.join("sums"), "d41d8cd98f00b204e9800998ecf8427e  ../outside/secret\n", 0o644);
        write(&project.join(".mcp.json"), "{\"mcpServers\": {}}\n", 0o644);
        std::fs::create_dir_all(project.join(".cairn")).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "lab"]);
        run(&project, "git", &["init", "-q", "sub"]);
        run(&project, "git", &["init", "-q", "--bare", "vendor.git"]);
        std::os::unix::fs::symlink("../outside", project.join("link")).unwrap();
        std::fs::hard_link(outside.join("linked"), project.join("alias")).unwrap();

        let home = tempfile::tempdir().unwrap();
        let (pty_master, pty_slave, pty_path) = open_pty();
        if let Some((uid, gid)) = runner.ids() {
            chown_tree(&project, uid, gid);
            chown_tree(home.path(), uid, gid);
            // SAFETY: chown of the terminal's device node by its path.
            let path = std::ffi::CString::new(pty_path.as_os_str().as_encoded_bytes()).unwrap();
            unsafe { libc::chown(path.as_ptr(), uid, gid) };
        }
        let mut victim = std::process::Command::new("sleep");
        victim.arg("300").env("CAIRN_LAB_KEY", &env_secret);
        if let Some((uid, gid)) = runner.ids() {
            use std::os::unix::process::CommandExt;
            victim.uid(uid).gid(gid);
        }
        let victim = victim.spawn().unwrap();
        let lab = Lab {
            base,
            project,
            outside,
            home,
            runner,
            secret,
            dotenv,
            env_secret,
            victim,
            pty_master,
            pty_slave,
            pty_path,
        };
        lab.age_canaries();
        Some(lab)
    }

    /// `{P}` the project, `{O}` the outside folder, `{PID}` the victim, `{PTS}` the terminal.
    pub fn fill(&self, command: &str) -> String {
        command
            .replace("{P}", &self.project.display().to_string())
            .replace("{O}", &self.outside.display().to_string())
            .replace("{PID}", &self.victim.id().to_string())
            .replace("{PTS}", &self.pty_path.display().to_string())
    }

    /// Access times of the canaries set far in the past (before their change times), so any
    /// read of them moves it, relatime or not.
    pub fn age_canaries(&self) {
        for entry in std::fs::read_dir(&self.outside).unwrap().flatten() {
            let path = std::ffi::CString::new(entry.path().as_os_str().as_encoded_bytes()).unwrap();
            let times = [
                libc::timespec { tv_sec: 86_400, tv_nsec: 0 },
                libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
            ];
            // SAFETY: utimensat reads the two timespecs for the path given.
            unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
        }
    }

    /// Every file under `dir`, with what a write or an attribute change would alter.
    pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
                let content = if meta.is_file() { std::fs::read(&path).unwrap_or_default() } else { Vec::new() };
                let state = format!(
                    "{:o} {} {} {} {:?} {}",
                    meta.mode(),
                    meta.uid(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    xattrs(&path),
                    String::from_utf8_lossy(&content)
                );
                out.insert(path.clone(), state);
                if meta.is_dir() {
                    stack.push(path);
                }
            }
        }
        out
    }

    /// Access times of the outside files, by path.
    pub fn access_times(&self) -> BTreeMap<PathBuf, i64> {
        std::fs::read_dir(&self.outside)
            .unwrap()
            .flatten()
            .filter_map(|e| Some((e.path(), std::fs::symlink_metadata(e.path()).ok()?.atime())))
            .collect()
    }

    /// Whether the victim still runs, not stopped.
    pub fn victim_alive(&mut self) -> bool {
        if self.victim.try_wait().ok().flatten().is_some() {
            return false;
        }
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.victim.id())).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").split_whitespace().next().unwrap_or("");
        state != "T" && state != "Z"
    }

    /// What arrived on the terminal's other side, if anything.
    pub fn terminal_received(&self) -> Vec<u8> {
        let mut buf = [0u8; 512];
        // SAFETY: a non-blocking read into a local buffer from the master we opened.
        let n = unsafe {
            libc::fcntl(self.pty_master, libc::F_SETFL, libc::O_NONBLOCK);
            libc::read(self.pty_master, buf.as_mut_ptr().cast(), buf.len())
        };
        if n > 0 { buf[..n as usize].to_vec() } else { Vec::new() }
    }

    /// Run cairn headless on the project with these calls in one assistant message; the
    /// results by call, in order, and whether cairn ended cleanly.
    pub async fn session(&self, config: &str, args: &[&str], calls: Vec<MockCall>) -> Session {
        std::fs::write(
            self.home.path().join("config.toml"),
            format!("[retry]\nmax_attempts = 3\nbase_delay_ms = 2\nmax_delay_ms = 20\nstream_idle_timeout_ms = 60000\n{config}"),
        )
        .unwrap();
        if let Some((uid, gid)) = self.runner.ids() {
            chown_tree(self.home.path(), uid, gid);
        }
        let ids: Vec<String> = calls.iter().map(|c| c.id.clone().unwrap_or_default()).collect();
        let mock = MockLlm::start(Script::new().turn(Turn::tools(calls)).turn(Turn::text("done"))).await;
        let bin = env!("CARGO_BIN_EXE_cairn");
        let mut cmd = match self.runner.ids() {
            None => tokio::process::Command::new(bin),
            Some((uid, gid)) => {
                let mut c = tokio::process::Command::new("setpriv");
                c.args([format!("--reuid={uid}"), format!("--regid={gid}"), "--clear-groups".into(), bin.into()]);
                c
            }
        };
        cmd.args(["-p", "go", "--output-format", "stream-json"])
            .args(args)
            .current_dir(&self.project)
            .env("CAIRN_HOME", self.home.path())
            .env("HOME", self.home.path())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", mock.anthropic_base_url())
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CAIRN_LOG")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let out = cmd.output().await.unwrap();
        let lines = if out.status.success() { json_lines(&out) } else { Vec::new() };
        let results: BTreeMap<String, Value> = lines
            .iter()
            .filter(|l| l["type"] == "tool_result")
            .map(|l| (l["id"].as_str().unwrap_or_default().to_string(), l.clone()))
            .collect();
        Session {
            results: ids.iter().map(|id| results.get(id).cloned().unwrap_or(Value::Null)).collect(),
            ok: out.status.success() && lines.last().is_some_and(|l| l["type"] == "result"),
            stderr: text(&out.stderr),
            stdout: text(&out.stdout),
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.victim.kill();
        let _ = self.victim.wait();
        // SAFETY: closing the descriptors openpty gave.
        unsafe {
            libc::close(self.pty_master);
            libc::close(self.pty_slave);
        }
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

pub struct Session {
    /// One per call, `Null` where cairn gave none.
    pub results: Vec<Value>,
    pub ok: bool,
    pub stderr: String,
    pub stdout: String,
}

fn open_pty() -> (i32, i32, PathBuf) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors; name, termios and size may be null.
    let rc =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty");
    let path = std::fs::read_link(format!("/proc/self/fd/{slave}")).unwrap();
    (master, slave, path)
}

fn chown_tree(dir: &Path, uid: u32, gid: u32) {
    let status = std::process::Command::new("chown").args(["-hR", &format!("{uid}:{gid}")]).arg(dir).status().unwrap();
    assert!(status.success());
}

fn xattrs(path: &Path) -> Vec<String> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut buf = vec![0u8; 1024];
    // SAFETY: llistxattr writes at most buf.len() bytes of names into buf.
    let n = unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 {
        return Vec::new();
    }
    buf[..n as usize]
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
